#!/usr/bin/env python3
"""Writes the `tarry` tool's manual page (roff, section 1) from the tool's
own --help texts, so that the page says what the program does:

    make_man_page.py TARRY_PROGRAM OUTPUT

`tarry --help` gives the synopsis and the commands; each command's
`--help` (`tarry COMMAND --help`) is one section of the page, as printed.
Fails (exit 1) when a --help does not answer with exit 0."""
import re
import subprocess
import sys


def help_text(program, *args):
    run = subprocess.run([program, *args, "--help"], capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        sys.exit(f"make_man_page.py: {' '.join([program, *args, '--help'])} exited {run.returncode}")
    return run.stdout


def roff_text(text):
    """Plain text for a no-fill block: backslashes doubled, and a leading
    . or ' made literal."""
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_man_page.py TARRY_PROGRAM OUTPUT")
    program, output = sys.argv[1], sys.argv[2]
    top = help_text(program)
    version = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30).stdout.split()
    commands = re.findall(r"^  (\w+)\s{2,}(.*)$", top, re.MULTILINE)
    if not commands:
        sys.exit("make_man_page.py: `tarry --help` lists no command")
    synopsis = top.split("commands:")[0]
    exit_status = top.split("exit status:", 1)[1].strip() if "exit status:" in top else ""
    page = [
        f'.TH TARRY 1 "" "tarry {version[-1] if version else ""}" "User Commands"',
        ".SH NAME",
        "tarry \\- jobs at a chosen time from RabbitMQ: publish, cancel, reschedule, schedule, delay",
        ".SH SYNOPSIS",
        ".nf",
        roff_text("\n".join(line.strip() for line in synopsis.replace("usage: ", "", 1).split("\n"))),
        ".fi",
        ".SH DESCRIPTION",
        "The command\\-line tool of tarry, a C++ library that worker processes embed to run",
        "jobs at a chosen time from RabbitMQ. A command that changes something on the broker",
        "named by \\fB\\-\\-url\\fR reports success only once the broker confirmed it.",
        ".SH COMMANDS",
    ]
    for name, what in commands:
        page += [f".TP\n.B {name}", roff_text(what)]
    for name, _ in commands:
        page += [f".SH \"TARRY {name.upper()}\"", ".nf", roff_text(help_text(program, name)), ".fi"]
    if exit_status:
        page += [".SH EXIT STATUS", roff_text(" ".join(exit_status.split()))]
    page += [".SH SEE ALSO", "The README and docs/ of the tarry sources; \\fBrabbitmqctl\\fR(8)."]
    with open(output, "w", encoding="utf-8") as out:
        out.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
