#!/usr/bin/env python3
"""Tests of scripts/test-summary, the last line of `make test` and `make
sanitize`: doctest cases counted from each program's own summary, cases
skipped at run time moved from passed to skipped, other programs counted as
one, and each sanitizer report given with --reports counted as a failure.

    test_summary_test.py SOURCE_ROOT
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(sys.argv.pop(1) if len(sys.argv) > 1 else ".", "scripts", "test-summary")


def doctest_out(passed, failed, skipped=0, runtime_skips=0):
    out = (f"[doctest] test cases: {passed + failed} | {passed} passed | "
           f"{failed} failed | {skipped} skipped\n")
    if runtime_skips:
        out += f"[tarry] skipped at run time: {runtime_skips}\n"
    return out


def make_build(entries):
    """A build directory whose meson test log holds `entries`."""
    build = tempfile.mkdtemp()
    os.makedirs(os.path.join(build, "meson-logs"))
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")
    return build


def make_reports(n):
    d = tempfile.mkdtemp()
    for i in range(n):
        with open(os.path.join(d, f"asan.{100 + i}"), "w") as f:
            f.write("==100==ERROR: AddressSanitizer: heap-use-after-free\n")
    return d


def run(*args):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True)


def summary(*args):
    """The last line alone, and the exit status."""
    r = run(*args)
    return r.stdout.strip().splitlines()[-1], r.returncode


class TestSummary(unittest.TestCase):
    def test_counts_doctest_cases_and_other_programs(self):
        build = make_build([
            {"result": "OK", "stdout": doctest_out(5, 0)},
            {"result": "OK", "stdout": "a script\n"},
            {"result": "SKIP", "stdout": "skipped: no broker\n"},
        ])
        self.assertEqual(summary(build), ("6 passed, 0 failed, 1 skipped", 0))

    def test_runtime_skips_are_not_passes(self):
        build = make_build([{"result": "OK", "stdout": doctest_out(4, 0, runtime_skips=3)}])
        self.assertEqual(summary(build), ("1 passed, 0 failed, 3 skipped", 0))

    def test_cases_a_filter_left_out_are_not_counted(self):
        # A group of a program (--source-file, --test-case): doctest counts
        # the other groups' cases as skipped; they run in those groups.
        build = make_build([{"result": "OK", "stdout": doctest_out(4, 0, skipped=40)},
                            {"result": "OK", "stdout": doctest_out(40, 0, skipped=4, runtime_skips=1)}])
        self.assertEqual(summary(build), ("43 passed, 0 failed, 1 skipped", 0))

    def test_a_crash_after_the_summary_is_a_failure(self):
        build = make_build([{"result": "FAIL", "stdout": doctest_out(2, 0)}])
        self.assertEqual(summary(build), ("2 passed, 1 failed", 1))

    def test_each_sanitizer_report_is_a_failure(self):
        build = make_build([{"result": "OK", "stdout": doctest_out(3, 0)}])
        reports = [make_reports(2), make_reports(1)]
        self.assertEqual(summary("--reports", *reports, "--", build), ("3 passed, 3 failed", 1))

    def test_a_log_named_by_its_path(self):
        build = make_build([{"result": "OK", "stdout": doctest_out(2, 1)}])
        log = os.path.join(build, "meson-logs", "testlog.json")
        self.assertEqual(summary(log), ("2 passed, 1 failed", 1))

    def test_names_what_failed_before_the_line(self):
        failing = ("=" * 79 + "\n/src/t.cpp:10:\nTEST CASE:  fault: a cut connection\n\n"
                   "/src/t.cpp:12: ERROR: CHECK( lost == 0 ) is NOT correct!\n"
                   + doctest_out(3, 1))
        build = make_build([
            {"name": "tarry:unit / a", "result": "OK", "stdout": doctest_out(2, 0)},
            {"name": "tarry:integration / b", "result": "FAIL", "stdout": failing},
            {"name": "tarry:integration / c", "result": "TIMEOUT", "stdout": "waiting\n"},
        ])
        r = run(build)
        self.assertEqual(r.stdout.splitlines(), [
            "failed: tarry:integration / b (FAIL)",
            "  case: fault: a cut connection",
            "failed: tarry:integration / c (TIMEOUT)",
            "  | waiting",
            "5 passed, 2 failed",
        ])
        self.assertEqual(r.returncode, 1)

    def test_a_program_without_doctest_shows_its_last_lines(self):
        out = "".join(f"line {i}\n" for i in range(40)) + "\nverdict lost: 1 (0 inside, 1 unexplained)\n"
        build = make_build([
            {"name": "tarry:nemesis / n", "result": "FAIL", "stdout": out},
            {"name": "tarry:unit / e", "result": "FAIL", "stdout": "", "stderr": "abort\n"},
        ])
        lines = run(build).stdout.splitlines()
        self.assertEqual(lines[0], "failed: tarry:nemesis / n (FAIL)")
        self.assertEqual(lines[1], "  | line 17")  # 24 lines, blank ones left out
        self.assertEqual(lines[24], "  | verdict lost: 1 (0 inside, 1 unexplained)")
        self.assertEqual(lines[25:], ["failed: tarry:unit / e (FAIL)", "  | abort", "0 passed, 2 failed"])

    def test_no_report_fails_nothing(self):
        build = make_build([{"result": "OK", "stdout": doctest_out(3, 0)}])
        self.assertEqual(summary("--reports", make_reports(0), "--", build), ("3 passed, 0 failed", 0))


if __name__ == "__main__":
    unittest.main()
