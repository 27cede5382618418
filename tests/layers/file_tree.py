"""A tree of small files in a fresh temporary directory, for the tests of
the tree checks (layers_test.py, one_home_test.py, size_check_test.py)."""

import os
import tempfile


def write_tree(files):
    """Writes each {relative path: text} under a new directory; returns it."""
    root = tempfile.mkdtemp()
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    return root
