#!/usr/bin/env python3
"""Every example in README.md and docs/*.md is checked against the build.

    check_examples.py SOURCE_ROOT BUILD_ROOT -- COMPILER [ARGS...]

C++ blocks (```cpp) each follow a marker line that says how they compile:

    <!-- example: statements -->    the block is a function's body
    <!-- example: declarations -->  the block is at namespace scope
    <!-- example: program -->       the block is a whole program

Fragments compile (-fsyntax-only, -Wall -Wextra -Werror) inside
tests/docs/examples_prelude.hpp, which includes the public headers they use
and declares the names they take as given (`conn`, `options`, `msg`, ...).
A program is compiled, linked against the build's libtarry, and run with the
private broker's URL (TARRY_TEST_AMQP_URL) as its one argument: it must
exit 0 within 60 s. Without a broker the programs are not run and the check
reports itself skipped (77) once everything else passed.

Shell blocks (```sh, and blocks with no language): each command line that
runs `tarry` or `echo_worker` may use only options that the program's
`--help` lists (for `tarry`, the help of its command: `tarry schedule
--help`).

Exit 0 when every check passed, 1 otherwise (each failure named with its
file and line), 77 as above.
"""

import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKER = re.compile(r"<!--\s*example:\s*(statements|declarations|program)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def blocks(path):
    """(language, marker or None, first line number, text) of each fenced block."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(1)
        marker = None
        for back in (1, 2):
            if i - back >= 0 and lines[i - back].strip():
                mm = MARKER.search(lines[i - back])
                marker = mm.group(1) if mm else None
                break
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append((lang, marker, i + 2, "\n".join(lines[i + 1:j]) + "\n"))
        i = j + 1
    return out


def fragment_source(kind, text, where):
    body = f'#line {where[1]} "{where[0]}"\n{text}'
    if kind == "statements":
        return f'#include "examples_prelude.hpp"\nvoid example_body() {{\n{body}}}\n'
    return f'#include "examples_prelude.hpp"\n{body}'


def compile_fragment(compiler, src_root, here, scratch, n, kind, text, where):
    tu = os.path.join(scratch, f"fragment_{n}.cpp")
    with open(tu, "w", encoding="utf-8") as f:
        f.write(fragment_source(kind, text, where))
    cmd = compiler + ["-std=c++20", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable",
                      "-Wno-unused-but-set-variable", "-Wno-unused-parameter", "-fsyntax-only",
                      f"-I{os.path.join(src_root, 'include')}", f"-I{here}", tu]
    run = subprocess.run(cmd, capture_output=True, text=True)
    return None if run.returncode == 0 else f"{where[0]}:{where[1]}: the {kind} block does not compile:\n{run.stderr}"


def build_program(compiler, src_root, build_root, scratch, n, text, where):
    tu = os.path.join(scratch, f"program_{n}.cpp")
    exe = os.path.join(scratch, f"program_{n}")
    with open(tu, "w", encoding="utf-8") as f:
        f.write(f'#line {where[1]} "{where[0]}"\n{text}')
    lib = os.path.join(build_root, "lib")
    cmd = compiler + ["-std=c++20", "-Wall", "-Wextra", "-Werror", f"-I{os.path.join(src_root, 'include')}", tu,
                      "-o", exe, f"-L{lib}", "-ltarry", f"-Wl,-rpath,{lib}", "-lboost_json", "-lcctz", "-lssl",
                      "-lcrypto", "-pthread"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return None, f"{where[0]}:{where[1]}: the program does not build:\n{run.stderr}"
    return exe, None


def run_program(exe, url, where):
    try:
        run = subprocess.run([exe, url], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return f"{where[0]}:{where[1]}: the program did not end within 60 s"
    if run.returncode != 0:
        return (f"{where[0]}:{where[1]}: the program exited {run.returncode}:\n"
                f"{run.stdout}{run.stderr}")
    return None


def command_lines(text):
    """Each command of a shell block, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            yield line


def help_options(build_root, program, command):
    exe = (os.path.join(build_root, "tools", "tarry") if program == "tarry"
           else os.path.join(build_root, "samples", "echo_worker"))
    args = [exe] + ([command] if command else []) + ["--help"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return set(OPTION.findall(run.stdout + run.stderr))


def commands_of(words):
    """(program, its arguments) of each `tarry` or `echo_worker` a command
    line runs: as its first word (after VAR=value assignments and a `$ `
    prompt), or after a path, `|`, `&&`, `;` or a wrapper such as `sudo`."""
    for k, w in enumerate(words):
        program = os.path.basename(w)
        if program not in ("tarry", "echo_worker"):
            continue
        before = [b for b in words[:k] if "=" not in b or b.startswith("-")]
        if before and before[-1] not in ("$", "|", "&&", ";", "sudo", "exec", "nohup", "timeout") and "/" not in w:
            continue  # a word of prose, or an argument
        yield program, words[k + 1:]


def check_shell(build_root, text, where, cache, commands):
    """Failures of the `tarry` and `echo_worker` command lines of a shell
    block: an option their --help does not list. `commands`: the commands
    `tarry --help` lists (any other word after `tarry` is no command line)."""
    failures = []
    for line in command_lines(text):
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        for program, rest in commands_of(words):
            command = None
            if program == "tarry":
                if not rest or rest[0] not in commands:
                    continue
                command = rest[0]
            key = (program, command)
            if key not in cache:
                cache[key] = help_options(build_root, program, command)
            for option in OPTION.findall(" ".join(rest)):
                if option not in cache[key]:
                    name = program + (" " + command if command else "")
                    failures.append(f"{where[0]}:{where[1]}: `{name}` has no option {option} "
                                    f"(its --help does not list it): {line}")
    return failures


def tarry_commands(build_root):
    """The commands `tarry --help` lists (two-space indented words)."""
    run = subprocess.run([os.path.join(build_root, "tools", "tarry"), "--help"], capture_output=True, text=True,
                         timeout=30)
    return set(re.findall(r"^  ([a-z]+)\s", run.stdout + run.stderr, re.M))


def main(argv):
    if "--" not in argv or argv.index("--") != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src_root, build_root = argv[1], argv[2]
    compiler = argv[4:]
    here = os.path.dirname(os.path.abspath(__file__))
    docs = [os.path.join(src_root, "README.md")] + sorted(
        os.path.join(src_root, "docs", f) for f in os.listdir(os.path.join(src_root, "docs")) if f.endswith(".md"))
    failures = []
    fragments, programs, shells = [], [], []
    for path in docs:
        rel = os.path.relpath(path, src_root)
        for lang, marker, line, text in blocks(path):
            where = (rel, line)
            if lang in ("cpp", "c++"):
                if marker is None:
                    failures.append(f"{rel}:{line}: a C++ block without a marker line before it "
                                    "(<!-- example: statements|declarations|program -->)")
                elif marker == "program":
                    programs.append((text, where))
                else:
                    fragments.append((marker, text, where))
            elif lang in ("sh", "bash", "shell", ""):
                shells.append((text, where))
    cache = {}
    commands = tarry_commands(build_root)
    if not commands:
        failures.append("`tarry --help` lists no command: is the build complete?")
    for text, where in shells:
        failures += check_shell(build_root, text, where, cache, commands)
    url = os.environ.get("TARRY_TEST_AMQP_URL", "")
    ran = 0
    with tempfile.TemporaryDirectory() as scratch:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            jobs = [pool.submit(compile_fragment, compiler, src_root, here, scratch, n, kind, text, where)
                    for n, (kind, text, where) in enumerate(fragments)]
            built = [pool.submit(build_program, compiler, src_root, build_root, scratch, n, text, where)
                     for n, (text, where) in enumerate(programs)]
            failures += [f for f in (j.result() for j in jobs) if f]
            for (text, where), b in zip(programs, built):
                exe, why = b.result()
                if why:
                    failures.append(why)
                elif url:
                    why = run_program(exe, url, where)
                    ran += 1
                    if why:
                        failures.append(why)
    for f in failures:
        print(f"FAILED: {f}")
    print(f"{len(fragments)} fragments compiled, {len(programs)} programs built, {ran} run, "
          f"{len(shells)} shell blocks checked; {len(failures)} failures")
    if failures:
        return 1
    if programs and not url:
        print("skipped: no broker (TARRY_TEST_AMQP_URL) to run the programs against")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
