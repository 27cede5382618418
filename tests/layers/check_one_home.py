#!/usr/bin/env python3
"""One home per helper: each helper below is written once, in its home,
and nowhere else in lib/, include/, tools/, samples/ or bench/
(docs/design.md, "One home per helper"). A second copy is found by what it
must contain (a definition of that name, or the code that does the job),
and reported with its file and line.

    check_one_home.py SOURCE_ROOT

Exits 1 naming each copy outside its home, 0 when there is none.
"""

import os
import re
import sys

# (helper, its home, what a copy of it contains)
RULES = [
    ("epoch seconds as text (one rounding rule: truncation to the µs)",
     "include/tarry/time/epoch_text.hpp",
     [r"%0?6ll[du]", r"%06\"\s*PRI", r"\b(?:std::string|double)\s+epoch_\w*\s*\([^)]*\)\s*(?:noexcept\s*)?\{",
      r"(?:floor|duration_cast)<std::chrono::seconds>\(\w+(?:\.\w+)*\.time_since_epoch"]),
    ("a JSON string literal (the one escaper)",
     "lib/consumer/job_event_json.cpp",
     [r"\bstd::string\s+json_\w+\s*\(\s*std::string_view\s+\w+\s*\)\s*\{",
      r"serialize\(\s*boost::json::string_view"]),
    ("an application header's lookup",
     "lib/amqp/wire/properties.cpp",
     [r"\bheaders\s*->\s*find\s*\(", r"\bheaders\s*\?[^;]*\bfind\s*\("]),
    ("the next generation of a writer",
     "lib/contract/schedule_headers.cpp",
     [r"\bnext_generation\s*\(\s*wall_time\s+\w+\s*\)\s*(?:noexcept\s*)?\{"]),
    ("reading a control stream up to a marker of one's own (the catch-up)",
     "lib/control/control_stream.cpp",
     [r"[=!]=\s*(?:control::)?marker_type\b", r"\bmarker_type\s*[=!]=",
      r"\bmarker_message\s*\((?!std::string\s+\w+\))"]),
    ("a 128-bit id as 32 hex digits (jobs, copies, checkpoints)",
     "lib/contract/random_id.cpp",
     [r"%016ll[xX]%016ll[xX]", r"digits\[\s*v\s*&\s*15\s*\]"]),
    ("a timestamp or µs since the epoch as a wall time, kept within its range",
     "include/tarry/time/epoch_text.hpp",
     [r"wall_time\{\s*std::chrono::seconds\s*[({]\s*static_cast"]),
    ("the expiring table of the control stream's entries",
     "include/tarry/control/expiring_table.hpp",
     [r"std::deque<\s*std::pair<\s*wall_time\s*,\s*std::string\s*>\s*>"]),
]

SCANNED = ("lib", "include", "tools", "samples", "bench")
SUFFIXES = (".cpp", ".hpp", ".h", ".cc")


def code_lines(text):
    """The lines with // comments cut off (a pattern in prose is no copy)."""
    for number, line in enumerate(text.splitlines(), 1):
        yield number, line.split("//", 1)[0]


def copies(root):
    """(helper, path, line number, line) for each copy outside its home."""
    compiled = [(name, home, [re.compile(p) for p in patterns]) for name, home, patterns in RULES]
    found = []
    for top in SCANNED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SUFFIXES):
                    continue
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for number, line in code_lines(text):
                    for name, home, patterns in compiled:
                        if rel != home and any(p.search(line) for p in patterns):
                            found.append((name, rel, number, line.strip()))
    return found


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    missing = [home for _, home, _ in RULES if not os.path.exists(os.path.join(root, home))]
    for home in missing:
        print(f"check_one_home: the home {home} does not exist")
    found = copies(root)
    for name, rel, number, line in found:
        print(f"{rel}:{number}: a second home of {name}: {line}")
    if found or missing:
        return 1
    print(f"check_one_home: {len(RULES)} helpers, each written once")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
