"""The layers of tarry as lib/layers.txt states them, and which layer a file
of the source tree belongs to. Shared by the include-graph check and the
header compile check."""

import os
import re

# Headers from the standard library that start or wait on threads: only the
# layers that list the `threads` package may include them.
THREAD_HEADERS = {"thread", "mutex", "shared_mutex", "condition_variable", "future",
                  "stop_token", "semaphore", "latch", "barrier"}
# Prefixes of <...> includes that belong to a package of lib/layers.txt.
PACKAGE_PREFIXES = {"boost/": "boost", "openssl/": "openssl", "concurrentqueue/": "concurrentqueue"}


class LayerTable:
    def __init__(self, path):
        self.path = path
        self.order = []
        self.uses = {}
        self.packages = {}
        self.errors = []
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                m = re.fullmatch(r"([a-z/]+):([^|]*)(?:\|(.*))?", line)
                if not m:
                    self.errors.append(f"{path}:{number}: cannot read '{line}'")
                    continue
                name = m.group(1)
                self.order.append(name)
                self.uses[name] = m.group(2).split()
                self.packages[name] = (m.group(3) or "").split()
        for name in self.order:
            for used in self.uses[name]:
                if used not in self.uses or self.order.index(used) > self.order.index(name):
                    self.errors.append(f"{path}: {name} uses {used}, which is not listed above it")
                    continue
                for transitive in self.uses[used]:
                    if transitive not in self.uses[name]:
                        self.errors.append(f"{path}: {name} uses {used}, which uses {transitive}: "
                                           f"list {transitive} for {name} too")

    def layer_of(self, relative):
        """The layer of a path relative to include/tarry/ or lib/ (the longest
        layer name that is a folder prefix of it), or None."""
        best = None
        for name in self.order:
            if relative.startswith(name + "/") and (best is None or len(name) > len(best)):
                best = name
        return best

    def allowed(self, layer):
        return [layer] + self.uses[layer]


def source_files(root):
    """Every header and source of the library: (path relative to root, layer
    folder kind, path relative to include/tarry or lib)."""
    for top, kind in (("include/tarry", "include"), ("lib", "lib")):
        base = os.path.join(root, top)
        for folder, _, files in os.walk(base):
            for name in sorted(files):
                if name.endswith((".hpp", ".cpp", ".h")):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, root), kind, os.path.relpath(full, base)
