#!/usr/bin/env python3
"""Proof that check_examples.py can fail: a tree whose README holds a C++
fragment that does not compile, a C++ block with no marker, a program that
exits 1 and a shell line with an option `tarry schedule --help` does not
list. The check must exit 1 and name each, by file and line.

    check_examples_fails_test.py SOURCE_ROOT BUILD_ROOT -- COMPILER [ARGS...]
"""
import os
import subprocess
import sys
import tempfile

README = """# A project

<!-- example: statements -->
```cpp
tarry::subscription_options o;
o.no_such_member = 1;
```

```cpp
int main() {}
```

<!-- example: program -->
```cpp
int main() { return 1; }
```

```sh
build/tools/tarry schedule add --url U --queue q --id a --every-ms 1000 --no-such-option
```
"""


def main(argv):
    src_root, build_root = argv[1], argv[2]
    compiler = argv[4:]
    with tempfile.TemporaryDirectory() as tree:
        os.symlink(os.path.join(src_root, "include"), os.path.join(tree, "include"))
        os.mkdir(os.path.join(tree, "docs"))
        with open(os.path.join(tree, "README.md"), "w", encoding="utf-8") as f:
            f.write(README)
        env = dict(os.environ, TARRY_TEST_AMQP_URL=os.environ.get("TARRY_TEST_AMQP_URL", "amqp://unused"))
        run = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "check_examples.py"), tree, build_root, "--"] + compiler,
                             capture_output=True, text=True, env=env, timeout=240)
    print(run.stdout + run.stderr)
    expected = [
        "FAILED: README.md:5: the statements block does not compile",
        "no_such_member",
        "FAILED: README.md:10: a C++ block without a marker line",
        "FAILED: README.md:15: the program exited 1",
        "FAILED: README.md:19: `tarry schedule` has no option --no-such-option",
    ]
    missing = [e for e in expected if e not in run.stdout]
    if run.returncode != 1 or missing:
        print(f"expected exit 1 and {missing} in the output; exit {run.returncode}")
        return 1
    print("check_examples.py failed as it should, naming each failure")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
