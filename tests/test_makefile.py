"""`make setup` keeps R's site library on this checkout's R package, as README promises.

Runs the real ``make`` and ``R CMD INSTALL`` against a site library in a
temporary directory (``R_SITE_LIB=``), never the machine's own.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(
    shutil.which("make") is None or not os.path.exists(os.path.join(ROOT, ".venv", ".r-site-ok")),
    reason="needs make and a checkout set up by `make setup`")


def make_site_library(library):
    # -o: the checkout's own marker stays as it is (only the temporary library is written)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "--no-print-directory", "-o", ".venv/.r-site-ok",
                           "site-library", f"R_SITE_LIB={library}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_site_library_installed_again_after_another_checkouts_install(tmp_path):
    setup = tmp_path / "pyhooks" / "setup.dcf"
    setup.parent.mkdir()
    setup.write_text("Python: /elsewhere/.venv/bin/python\nSource: /elsewhere\n")

    first = make_site_library(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"installing the R package into {tmp_path}" in first.stdout
    assert setup.read_text().splitlines() == [f"Python: {ROOT}/.venv/bin/python",
                                              f"Source: {ROOT}"]
    assert (tmp_path / "pyhooks" / "DESCRIPTION").exists()

    again = make_site_library(tmp_path)  # idempotent: nothing to do the second time
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout == ""


def test_site_library_installed_again_when_removed(tmp_path):
    done = make_site_library(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "pyhooks" / "setup.dcf").read_text().endswith(f"Source: {ROOT}\n")
