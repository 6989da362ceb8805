#!/usr/bin/env bash
# R CMD build + R CMD check --no-manual of the R package (its tests included; the
# vignettes knitted by the build, not again by the check); fails on any ERROR or
# WARNING. Run by .ci/tests.sh (make test), which provides RETICULATE_PYTHON, R_LIBS and TF_CPP_MIN_LOG_LEVEL.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p r-package/vignettes
cp vignettes/*.Rmd r-package/vignettes/ 2>/dev/null || true

cd "$work"
if ! R CMD build "$root/r-package" >build.log 2>&1; then
  cat build.log
  exit 1
fi
status=0
# --no-build-vignettes: R CMD build above knitted them, and tools/knit_vignettes.R (make test)
# knits them again checking their output; a third knit here would test nothing new.
R CMD check --no-manual --no-build-vignettes pyhooks_*.tar.gz >check.log 2>&1 || status=$?
grep -E "^\* checking .*\.\.\. (WARNING|ERROR|NOTE)|^ (WARNING|ERROR|NOTE)$" -B2 -A8 check.log || true
tail -n 3 check.log
if [ "$status" -ne 0 ] || grep -qE "^Status: .*(ERROR|WARNING)" check.log; then
  echo "R CMD check failed: see above (full log: pyhooks.Rcheck/00check.log)"
  # A failing test's output is in tests/*.Rout.fail, which 00check.log only points to; it is
  # printed last, where a shortened log still shows it.
  for f in pyhooks.Rcheck/tests/*.Rout.fail; do
    [ -f "$f" ] || continue
    echo "-- $f: the failures, then its last lines"
    grep -E -A6 "^── (Failure|Error)" "$f" | head -n 40 || true
    tail -n 8 "$f"
  done
  exit 1
fi
