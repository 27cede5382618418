#!/usr/bin/env python3
"""Tests of check_one_home.py itself, so that a check that stopped finding
copies would fail here: on small trees made here, a tree with each helper
only in its home passes; a copy of each helper elsewhere is reported with
its file and line; a copy in a comment is not one; a missing home fails.

    one_home_test.py
"""

import io
import os
import sys
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_one_home  # noqa: E402
from file_tree import write_tree  # noqa: E402

# A line that is a copy of each helper, by helper index in RULES.
COPIES = [
    'std::string epoch_seconds(wall_time t) {\n',
    'std::string json_string(std::string_view s) {\n',
    'const auto* v = m.properties.headers ? m.properties.headers->find(name) : nullptr;\n',
    'std::uint64_t next_generation(wall_time now) noexcept {\n',
    'if (p.type == control::marker_type) return;\n',
    'std::snprintf(buf, sizeof buf, "%016llx%016llx", hi, lo);\n',
    'return wall_time{std::chrono::seconds(static_cast<std::int64_t>(s))};\n',
    'std::deque<std::pair<wall_time, std::string>> added_;\n',
]


def make_tree(extra):
    files = {home: "// the home\n" for _, home, _ in check_one_home.RULES}
    files["lib/other/clean.cpp"] = "int f() { return 1; }\n"
    files.update(extra)
    return write_tree(files)


def run(root):
    out = io.StringIO()
    with redirect_stdout(out):
        rc = check_one_home.main(["check_one_home.py", root])
    return rc, out.getvalue()


class OneHome(unittest.TestCase):
    def test_each_helper_in_its_home_passes(self):
        files = {home: COPIES[i] for i, (_, home, _) in enumerate(check_one_home.RULES)}
        rc, out = run(make_tree(files))
        self.assertEqual(rc, 0, out)

    def test_a_copy_of_each_helper_is_reported_where_it_is(self):
        self.assertEqual(len(COPIES), len(check_one_home.RULES))
        for i, (name, _, _) in enumerate(check_one_home.RULES):
            with self.subTest(helper=name):
                rc, out = run(make_tree({"tools/copy.cpp": "// a tool\n" + COPIES[i]}))
                self.assertEqual(rc, 1)
                self.assertIn("tools/copy.cpp:2: a second home of " + name, out)

    def test_a_copy_in_a_comment_is_none(self):
        rc, out = run(make_tree({"lib/a/b.cpp": "// " + COPIES[3]}))
        self.assertEqual(rc, 0, out)

    def test_a_missing_home_fails(self):
        root = make_tree({})
        os.remove(os.path.join(root, check_one_home.RULES[0][1]))
        rc, out = run(root)
        self.assertEqual(rc, 1)
        self.assertIn("does not exist", out)


if __name__ == "__main__":
    unittest.main()
