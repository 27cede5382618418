#!/usr/bin/env python3
"""Tests of the layer checks themselves, so that a check that stopped
finding anything would fail here.

    layers_test.py INCLUDE_ROOTS -- COMPILER [ARGS...]

1. check_includes.py on small trees made here: each kind of forbidden
   include is reported with its file and line; a tree as drawn passes; a
   table that is not closed is refused.
2. The build's include roots enforce the table: with only the roots of
   `schedule` (and what it may use), a schedule header compiles and an
   `amqp` header is not found.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402
from file_tree import write_tree  # noqa: E402
from layer_table import LayerTable  # noqa: E402

TABLE = """# a small drawing
time:
low: time | threads
wire:
high: low wire time | boost
"""


def make_tree(files, table=TABLE):
    files = dict(files)
    files["lib/layers.txt"] = table
    return write_tree(files)


CLEAN = {
    "include/tarry/time/t.hpp": "#pragma once\n#include <chrono>\n",
    "include/tarry/low/l.hpp": '#pragma once\n#include "tarry/time/t.hpp"\n#include <mutex>\n',
    "include/tarry/wire/w.hpp": "#pragma once\n",
    "include/tarry/high/h.hpp": '#pragma once\n#include "tarry/low/l.hpp"\n#include "tarry/wire/w.hpp"\n',
    "lib/high/private.hpp": "#pragma once\n#include <boost/asio/post.hpp>\n",
    "lib/high/h.cpp": '#include "tarry/high/h.hpp"\n#include "private.hpp"\n',
    "lib/low/l.cpp": '#include "tarry/low/l.hpp"\n',
}


class IncludeGraph(unittest.TestCase):
    def problems(self, extra, table=TABLE):
        files = dict(CLEAN)
        files.update(extra)
        root = make_tree(files, table)
        try:
            return check_includes.check(root)[1]
        finally:
            shutil.rmtree(root)

    def only_problem(self, extra):
        """The one problem the check finds in the clean tree changed by `extra`."""
        problems = self.problems(extra)
        self.assertEqual(len(problems), 1, problems)
        return problems[0]

    def test_a_tree_as_drawn_passes(self):
        self.assertEqual(self.problems({}), [])

    def test_a_lower_layer_including_a_higher_one_is_reported_with_its_line(self):
        problem = self.only_problem({"include/tarry/low/l.hpp": '#pragma once\n\n#include "tarry/high/h.hpp"\n'})
        self.assertIn('include/tarry/low/l.hpp:3: #include "tarry/high/h.hpp"', problem)
        self.assertIn("layer 'low' may not use 'high'", problem)

    def test_a_layer_that_uses_nothing_cannot_include_a_neighbour(self):
        problem = self.only_problem({"lib/wire/w.cpp": '#include "tarry/time/t.hpp"\n'})
        self.assertIn("lib/wire/w.cpp:1:", problem)

    def test_a_private_header_of_another_layer_is_reported(self):
        problem = self.only_problem({"lib/low/l.cpp": '#include "../high/private.hpp"\n'})
        self.assertIn("a private header of layer 'high'", problem)

    def test_a_package_the_layer_does_not_list_is_reported(self):
        problem = self.only_problem({"lib/low/l.cpp": "#include <boost/asio/post.hpp>\n"})
        self.assertIn("layer 'low' does not use boost", problem)

    def test_thread_headers_need_the_threads_package(self):
        problem = self.only_problem({"include/tarry/wire/w.hpp": "#pragma once\n#include <condition_variable>\n"})
        self.assertIn("layer 'wire' does not use threads", problem)

    def test_sans_io_folders_take_no_package_thread_or_io_header(self):
        sans_io = "lib/high/core\nio: tarry/high/socket.hpp\n"
        base = {"lib/sans_io.txt": sans_io, "include/tarry/high/socket.hpp": "#pragma once\n"}
        self.assertEqual(self.problems(dict(base, **{"lib/high/core/c.cpp": '#include "tarry/low/l.hpp"\n'})), [])
        for include, words in (("<boost/asio/post.hpp>", "a package"), ("<mutex>", "a thread header"),
                               ('"tarry/high/socket.hpp"', "an I/O header")):
            problems = self.problems(dict(base, **{"lib/high/core/c.cpp": f"#include {include}\n"}))
            self.assertTrue(any("lib/high/core/c.cpp:1:" in p and words in p for p in problems), problems)
        # The same include outside the folder is the layer's business.
        self.assertEqual(self.problems(dict(base, **{"lib/high/h.cpp": '#include "tarry/high/socket.hpp"\n'})), [])

    def test_a_file_outside_every_layer_folder_is_reported(self):
        problem = self.only_problem({"lib/stray/s.cpp": "\n"})
        self.assertIn("lib/stray/s.cpp", problem)

    def test_a_table_that_is_not_closed_is_refused(self):
        root = make_tree({}, "time:\nlow: time\nhigh: low\n")
        table = LayerTable(os.path.join(root, "lib", "layers.txt"))
        shutil.rmtree(root)
        self.assertEqual(len(table.errors), 1, table.errors)
        self.assertIn("list time for high too", table.errors[0])


class IncludeRoots(unittest.TestCase):
    def compile(self, header, layer):
        table = LayerTable(os.path.join(SOURCE_ROOT, "lib", "layers.txt"))
        flags = [f"-I{os.path.join(ROOTS, name.replace('/', '-'))}" for name in table.allowed(layer)]
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as tu:
            tu.write(f'#include "{header}"\n')
        try:
            return subprocess.run(COMPILER + ["-std=c++20", "-fsyntax-only"] + flags + [tu.name],
                                  capture_output=True, text=True)
        finally:
            os.unlink(tu.name)

    def test_schedule_sees_its_own_headers(self):
        run = self.compile("tarry/schedule/delay_queue.hpp", "schedule")
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_schedule_does_not_see_amqp(self):
        run = self.compile("tarry/amqp/connection.hpp", "schedule")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("tarry/amqp/connection.hpp", run.stderr)

    def test_contract_sees_the_codec_but_not_the_client(self):
        self.assertEqual(self.compile("tarry/amqp/wire/field_table.hpp", "contract").returncode, 0)
        self.assertNotEqual(self.compile("tarry/amqp/url.hpp", "contract").returncode, 0)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print("usage: layers_test.py INCLUDE_ROOTS -- COMPILER [ARGS...]", file=sys.stderr)
        sys.exit(2)
    SOURCE_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ROOTS = sys.argv[1]
    COMPILER = sys.argv[3:]
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
