#!/usr/bin/env python3
"""Tests of scripts/size-check, so that a count that stopped counting would
fail here: on small trees made here, a class of 16 data members and a
function of 61 lines are named with their file and line, 15 and 60 pass;
member functions, static members, types and `std::function<void()>`
members count right; comments and strings hide no brace; the baseline is a
ratchet (a known offender may stay or shrink, not grow).

    size_check_test.py SOURCE_ROOT
"""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from file_tree import write_tree  # noqa: E402

SCRIPT = os.path.join(sys.argv.pop(1) if len(sys.argv) > 1 else ".", "scripts", "size-check")


def klass(members):
    body = "".join(f"    int m{i}_ = 0;\n" for i in range(members))
    return ("class wide {\npublic:\n    void f();\n    static int shared;\n    using t = int;\n"
            "    std::function<void()> hook_;\n    struct inner { int a; int b; };\n"
            "    wide(int x) : m0_(x) {}\n" + body + "};\n")


def function(lines):
    # `lines` lines from the signature to the closing brace.
    body = "".join(f"    x += {i};  // {{ not a brace\n" for i in range(lines - 3))
    return "int long_one(int x) {\n    const char* s = \"}\";\n" + body + "}\n"


def make_tree(files, baseline=""):
    root = write_tree(files)
    base = os.path.join(root, "baseline.txt")
    with open(base, "w", encoding="utf-8") as f:
        f.write(baseline)
    return root, base


def run(files, baseline=""):
    root, base = make_tree(files, baseline)
    r = subprocess.run([SCRIPT, "--root", root, "--baseline", base], capture_output=True, text=True)
    return r.returncode, r.stdout


class SizeCheck(unittest.TestCase):
    def test_within_the_limits_passes(self):
        # 14 ints and the std::function member: 15.
        rc, out = run({"lib/consumer/a.hpp": "namespace n {\n" + klass(14) + "}\n",
                       "lib/amqp/b.cpp": "namespace n {\n" + function(60) + "}\n"})
        self.assertEqual(rc, 0, out)

    def test_a_class_over_15_members_is_named(self):
        rc, out = run({"lib/consumer/a.hpp": "namespace n {\n" + klass(15) + "}\n"})
        self.assertEqual(rc, 1)
        self.assertIn("lib/consumer/a.hpp:2: members wide is 16, over the limit of 15", out)

    def test_a_function_over_60_lines_is_named(self):
        rc, out = run({"lib/amqp/b.cpp": "namespace n {\n" + function(61) + "}\n"})
        self.assertEqual(rc, 1)
        self.assertIn("lib/amqp/b.cpp:2: lines lib/amqp/b.cpp:long_one is 61, over the limit of 60", out)

    def test_members_elsewhere_are_not_counted(self):
        rc, out = run({"lib/amqp/a.hpp": klass(30)})
        self.assertEqual(rc, 0, out)

    def test_the_baseline_is_a_ratchet(self):
        files = {"lib/amqp/b.cpp": function(70)}
        self.assertEqual(run(files, "lines lib/amqp/b.cpp:long_one 70\n")[0], 0)
        self.assertEqual(run(files, "lines lib/amqp/b.cpp:long_one 75\n")[0], 0)
        rc, out = run(files, "lines lib/amqp/b.cpp:long_one 65\n")
        self.assertEqual(rc, 1)
        self.assertIn("grew to 70 (the baseline says 65", out)

    def test_a_baseline_line_no_longer_needed_is_named(self):
        rc, out = run({"lib/amqp/b.cpp": function(10)}, "lines lib/amqp/b.cpp:long_one 70\n")
        self.assertEqual(rc, 0)
        self.assertIn("is within the limit now: remove it from the baseline", out)


if __name__ == "__main__":
    unittest.main()
