#!/usr/bin/env python3
"""Runs every ```r and ```python code block of a Markdown file, each in a fresh process.

Usage: python tools/run_readme.py [README.md ...]

R blocks run with ``Rscript``, Python blocks with this Python (the project's
.venv when run by ``make test``), each from its own empty temporary directory
and without the variables ``make`` sets for the test suites (``R_LIBS``,
``RETICULATE_PYTHON``, ``PYHOOKS_PYTHON``), as a user's new shell would. Other
blocks (```sh) are not run. Exits with status 1 if a block fails, printing the
block and its output.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
RUNNERS = {"r": ["Rscript", "--no-save"], "python": [sys.executable]}
SUFFIX = {"r": ".R", "python": ".py"}
SET_BY_MAKE = ("R_LIBS", "RETICULATE_PYTHON", "PYHOOKS_PYTHON")
TIMEOUT = 600


def blocks(text):
    """``[(language, line, code)]`` of the fenced blocks to run, in order."""
    found = []
    for match in FENCE.finditer(text):
        language = match.group(1).lower()
        if language in RUNNERS:
            line = text.count("\n", 0, match.start()) + 1
            found.append((language, line, match.group(2)))
    return found


def run_block(language, code):
    """Runs ``code`` in a new process in an empty directory; returns (returncode, output)."""
    env = {k: v for k, v in os.environ.items() if k not in SET_BY_MAKE}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    with tempfile.TemporaryDirectory(prefix="readme-block-") as cwd:
        script = os.path.join(cwd, "block" + SUFFIX[language])
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(code)
        try:
            done = subprocess.run([*RUNNERS[language], script], cwd=cwd, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=TIMEOUT)
        except subprocess.TimeoutExpired as error:
            return 1, f"timed out after {TIMEOUT} s\n{error.stdout or ''}"
    return done.returncode, done.stdout


def main(paths):
    failures = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            found = blocks(handle.read())
        if not found:
            print(f"{path}: no r or python blocks")
            failures += 1
        for language, line, code in found:
            started = time.monotonic()
            status, output = run_block(language, code)
            took = time.monotonic() - started
            if status == 0:
                print(f"-- {path}:{line} ({language}) ok ({took:.1f} s)")
            else:
                failures += 1
                print(f"-- {path}:{line} ({language}) FAILED (exit status {status})")
                print("   the block:\n" + "".join(f"   | {l}\n" for l in code.splitlines()))
                print("   its output:\n" + "".join(f"   > {l}\n" for l in output.splitlines()))
    if failures:
        print(f"README blocks: {failures} failed")
        return 1
    print("README blocks: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["README.md"]))
