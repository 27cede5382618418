#!/usr/bin/env python3
"""Compiles every public header on its own, with only the include roots of
its layer and of the layers it may use (lib/layers.txt), as the build does.

    compile_headers.py SOURCE_ROOT INCLUDE_ROOTS -- COMPILER [ARGS...]

INCLUDE_ROOTS is the folder the build made (<build>/include-roots: one root
per layer, named like the layer with '/' as '-'). Each header under
include/tarry/ is compiled as a translation unit of one line, with -Wall
-Wextra -Werror, so a header that leans on another being included first, or
that includes a layer it may not use, fails here with the compiler's
message. Runs as many compilers at once as there are cores.
"""

import concurrent.futures
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layer_table import LayerTable, source_files  # noqa: E402


def compile_one(compiler, roots_dir, table, rel, scratch):
    layer = table.layer_of(rel)
    if layer is None:
        return rel, f"include/tarry/{rel}: in no layer of lib/layers.txt"
    tu = os.path.join(scratch, rel.replace("/", "_") + ".cpp")
    with open(tu, "w", encoding="utf-8") as f:
        f.write(f'#include "tarry/{rel}"\n')
    flags = [f"-I{os.path.join(roots_dir, name.replace('/', '-'))}" for name in table.allowed(layer)]
    cmd = compiler + ["-std=c++20", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"] + flags + [tu]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return rel, f"include/tarry/{rel} (layer '{layer}') does not compile on its own:\n{run.stderr}"
    return rel, None


def main(argv):
    if len(argv) < 5 or argv[3] != "--":
        print("usage: compile_headers.py SOURCE_ROOT INCLUDE_ROOTS -- COMPILER [ARGS...]", file=sys.stderr)
        return 2
    root, roots_dir, compiler = argv[1], argv[2], argv[4:]
    table = LayerTable(os.path.join(root, "lib", "layers.txt"))
    if table.errors:
        print("\n".join(table.errors))
        return 1
    headers = [rel for _, kind, rel in source_files(root) if kind == "include" and rel.endswith(".hpp")]
    if not headers:
        print("no public headers found: wrong SOURCE_ROOT?")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for rel, problem in pool.map(lambda h: compile_one(compiler, roots_dir, table, h, scratch), headers):
            if problem:
                failed += 1
                print(problem)
    print(f"{len(headers) - failed} of {len(headers)} public headers compile on their own")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
