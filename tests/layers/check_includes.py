#!/usr/bin/env python3
"""Checks the include graph of the library against lib/layers.txt.

    check_includes.py SOURCE_ROOT

Every header under include/tarry/ and every header and source under lib/
belongs to the layer of its folder. Each of its #include lines must name:
- a public header of its own layer or of a layer it may use;
- a private header (under lib/) of its own layer only;
- a package header (<boost/...>, <openssl/...>, <concurrentqueue/...>) of a
  package its layer lists, and a standard header that starts or waits on
  threads (<thread>, <mutex>, ...) only where the layer lists `threads`.
Files in a folder that lib/sans_io.txt lists as sans-I/O include no package,
no thread header and none of its `io:` headers, whatever their layer may
use.
Prints each offending line as `file:line: what is wrong` and exits 1; exits
0 (printing a one-line count) when the graph is as drawn.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layer_table import LayerTable, PACKAGE_PREFIXES, THREAD_HEADERS, source_files  # noqa: E402

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def resolve(root, file_path, target):
    """Where a quoted include points: (kind, path relative to include/tarry or
    lib) or None when it names no file of the library."""
    candidates = [os.path.normpath(os.path.join(os.path.dirname(os.path.join(root, file_path)), target))]
    if target.startswith("tarry/"):
        candidates.append(os.path.join(root, "include", target))
    for full in candidates:
        if os.path.isfile(full):
            rel = os.path.relpath(full, root)
            for top, kind in (("include/tarry/", "include"), ("lib/", "lib")):
                if rel.startswith(top):
                    return kind, rel[len(top):]
            return "outside", rel
    if target.startswith("tarry/"):
        return "include", target[len("tarry/"):]   # missing: judged by its name
    return None


def read_sans_io(root):
    """(folders, io headers) of lib/sans_io.txt; nothing when it is absent."""
    folders, io_headers = [], set()
    path = os.path.join(root, "lib", "sans_io.txt")
    if not os.path.isfile(path):
        return folders, io_headers
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("io:"):
                io_headers.update(line[len("io:"):].split())
            else:
                folders.append(line.rstrip("/") + "/")
    return folders, io_headers


def sans_io_problem(quote, target, io_headers):
    """Why an include does not belong in sans-I/O code, or None."""
    if quote == "<":
        if any(target.startswith(prefix) for prefix in PACKAGE_PREFIXES):
            return "a package in sans-I/O code"
        if target in THREAD_HEADERS:
            return "a thread header in sans-I/O code"
        return None
    if target in io_headers:
        return "an I/O header in sans-I/O code"
    return None


def check(root):
    table = LayerTable(os.path.join(root, "lib", "layers.txt"))
    problems = list(table.errors)
    sans_io_folders, io_headers = read_sans_io(root)
    files = 0
    for path, kind, rel in source_files(root):
        layer = table.layer_of(rel)
        files += 1
        if layer is None:
            problems.append(f"{path}:1: not in a layer folder of lib/layers.txt")
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                quote, target = m.groups()
                where = f"{path}:{number}: {line.strip()}"
                if any(path.startswith(folder) for folder in sans_io_folders):
                    why = sans_io_problem(quote, target, io_headers)
                    if why:
                        problems.append(f"{where}: {why} (lib/sans_io.txt)")
                if quote == "<":
                    for prefix, package in PACKAGE_PREFIXES.items():
                        if target.startswith(prefix) and package not in table.packages[layer]:
                            problems.append(f"{where}: layer '{layer}' does not use {package} "
                                            f"(it uses: {', '.join(table.packages[layer]) or 'no package'})")
                    if target in THREAD_HEADERS and "threads" not in table.packages[layer]:
                        problems.append(f"{where}: layer '{layer}' does not use threads")
                    continue
                resolved = resolve(root, path, target)
                if resolved is None:
                    problems.append(f"{where}: names no header of the library")
                    continue
                target_kind, target_rel = resolved
                if target_kind == "outside":
                    problems.append(f"{where}: the library includes a file outside include/ and lib/")
                    continue
                target_layer = table.layer_of(target_rel)
                if target_layer is None:
                    problems.append(f"{where}: names a header in no layer")
                elif target_kind == "lib" and target_layer != layer:
                    problems.append(f"{where}: a private header of layer '{target_layer}'; "
                                    f"only '{target_layer}' may include it")
                elif target_layer not in table.allowed(layer):
                    problems.append(f"{where}: layer '{layer}' may not use '{target_layer}' "
                                    f"(it may use: {', '.join(table.uses[layer]) or 'nothing'})")
    return files, problems


def main(argv):
    if len(argv) != 2:
        print("usage: check_includes.py SOURCE_ROOT", file=sys.stderr)
        return 2
    files, problems = check(argv[1])
    for p in problems:
        print(p)
    if files == 0:
        print("no library files found: wrong SOURCE_ROOT?")
        return 1
    if problems:
        print(f"{len(problems)} include(s) against lib/layers.txt in {files} files")
        return 1
    print(f"{files} files: every include as lib/layers.txt draws it")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
