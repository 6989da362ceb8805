#!/usr/bin/env bash
# Every test of the project, in order; stops at the first failing suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

# Two workers (pytest-xdist, the tests of one file in one worker, in order); then the cluster
# tests, which start multi-process TensorFlow clusters on loopback ports, alone and one at a time.
echo "== pytest (2 workers)"
$PY -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not cluster"
echo "== pytest (clusters, one at a time)"
$PY -m pytest -q -p no:cacheprovider -m cluster

if [ -f r-package/tests/testthat.R ]; then
  echo "== testthat (R package)"
  (cd r-package/tests && Rscript testthat.R)
fi

if ls vignettes/*.Rmd >/dev/null 2>&1; then
  echo "== vignettes (knit, with expected output checked)"
  Rscript tools/knit_vignettes.R
fi

if [ -f README.md ]; then
  echo "== README code blocks (each in a fresh process)"
  $PY tools/run_readme.py README.md
fi

if [ -f tools/rcheck.sh ]; then
  echo "== R CMD check"
  bash tools/rcheck.sh
fi
echo "== all test suites passed"
