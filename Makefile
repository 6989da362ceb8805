# Two commands for a new user on a fresh Debian machine:  make demo   and   make test
# Everything else here is what those two need; every step is idempotent.
# `make setup` (run by both) also installs the R package into R's site library, so that
# library(pyhooks) works in any R session on the machine and uses this checkout's .venv;
# `make install R_SITE_LIB=<dir>` installs it into another library.

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Debian's packages, named with the versions tested in debian-packages.txt
APT_PACKAGES := $(shell sed -e 's/\#.*//' debian-packages.txt | awk 'NF { print $$1 }')
R_PACKAGES := $(patsubst r-cran-%,%,$(filter r-cran-%,$(APT_PACKAGES)))
# The Python stack: requirements.in is what we ask for, requirements.txt (made by `make lock`)
# every package pinned, with hashes. The lock tool, uv, is kept apart from the .venv.
LOCK_TOOL := $(VENV)/lock-tool
UV_VERSION := 0.13.8
R_LIB := $(CURDIR)/$(VENV)/R-library
# Where `make install` puts the R package: R's first writable site library, else the user library.
R_SITE_LIB ?= $(shell Rscript -e 'w <- .Library.site[file.access(.Library.site, 2) == 0]; \
	cat(if (length(w)) w[[1]] else Sys.getenv("R_LIBS_USER"))' 2>/dev/null)
R_TARBALL := $(VENV)/build/pyhooks_$(shell sed -n 's/^Version: *//p' r-package/DESCRIPTION).tar.gz
export RETICULATE_PYTHON := $(CURDIR)/$(PY)
export PYHOOKS_PYTHON := $(CURDIR)/$(PY)
export R_LIBS := $(R_LIB)
export TF_CPP_MIN_LOG_LEVEL ?= 2
# R CMD check needs a UTF-8 locale (the package is UTF-8); a bare CI shell may set none.
export LANG ?= C.UTF-8

.PHONY: setup debian-versions site-library install lock demo test test-python test-r \
	test-vignettes test-readme docs bench clean

setup: $(VENV)/.python-ok $(VENV)/.r-package-ok site-library debian-versions

$(VENV)/.apt-ok: debian-packages.txt
	@if ! command -v Rscript >/dev/null || ! command -v pandoc >/dev/null || \
	   ! command -v chromium >/dev/null || \
	   ! Rscript -e 'for (p in strsplit("$(R_PACKAGES)", " ")[[1]]) stopifnot(requireNamespace(p, quietly = TRUE))' >/dev/null 2>&1; then \
	  echo "== installing R, pandoc and Chromium from Debian"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi
	@mkdir -p $(VENV) && touch $@

# A note for each Debian package whose version here is not the one tested.
debian-versions: $(VENV)/.apt-ok
	@sed -e 's/\#.*//' debian-packages.txt | awk 'NF' | while read -r name tested; do \
	  have=$$(dpkg-query -W -f='$${Version}' "$$name" 2>/dev/null); \
	  [ "$$have" = "$$tested" ] || \
	    echo "   note: Debian's $$name is $${have:-not installed} here; the tests ran with $$tested"; \
	done

# The locked stack, checked against its hashes; then pyhooks itself, built with the locked
# setuptools (no download of its own).
$(VENV)/.python-ok: $(VENV)/.apt-ok pyproject.toml requirements.txt
	@echo "== creating $(VENV) (the Python stack of requirements.txt)"
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check --require-hashes -r requirements.txt 2>&1 \
	  | grep -v "^WARNING: Location" || true
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . 2>&1 \
	  | grep -v "^WARNING: Location" || true
	@$(PY) -c "import tensorflow, tensorboard, rpy2, pytest, xdist, hypothesis, pyhooks" 2>/dev/null || \
	  { echo "Python setup failed: see pip's output above"; exit 1; }
	@touch $@

# requirements.in resolved again into requirements.txt: the versions already locked are kept
# where they still fit; `make lock UPGRADE=1` takes the newest ones. Then `make setup`.
lock:
	@[ -x $(LOCK_TOOL)/bin/uv ] || \
	  $(PYTHON) -m pip install -q --disable-pip-version-check --target $(LOCK_TOOL) uv==$(UV_VERSION) \
	    2>&1 | grep -v "^WARNING: \(Location\|Running pip as\)" || true
	@$(LOCK_TOOL)/bin/uv pip compile requirements.in --quiet --generate-hashes \
	  --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
	  --custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -o requirements.txt
	@echo "   requirements.txt: $$(grep -c '^[a-z]' requirements.txt) packages pinned, with hashes"

# The R package as R CMD build makes it: vignettes knitted (with this .venv's Python), so that
# vignette(package = "pyhooks") lists them once installed.
$(R_TARBALL): $(VENV)/.python-ok $(shell find r-package/R r-package/DESCRIPTION r-package/NAMESPACE r-package/inst r-package/man vignettes -type f 2>/dev/null)
	@echo "== building the R package (knits the vignettes)"
	@mkdir -p r-package/vignettes && cp vignettes/*.Rmd r-package/vignettes/
	@rm -rf $(VENV)/build && mkdir -p $(VENV)/build
	@cd $(VENV)/build && R CMD build $(CURDIR)/r-package >build.log 2>&1 || { cat build.log; exit 1; }

# install_r LIBRARY: installs the built package there and records this checkout's Python and
# source directory in it (read by pyhooks_python() and install_pyhooks()).
define install_r
	@mkdir -p $(1)
	@R CMD INSTALL --no-test-load --library=$(1) $(R_TARBALL) >$(VENV)/r-install.log 2>&1 || \
	  { cat $(VENV)/r-install.log; exit 1; }
	@printf 'Python: %s\nSource: %s\n' "$(CURDIR)/$(PY)" "$(CURDIR)" >$(1)/pyhooks/setup.dcf
endef

# For the tests: this checkout's own copy, first on R_LIBS whenever make runs R.
$(VENV)/.r-package-ok: $(R_TARBALL)
	@echo "== installing the R package into $(R_LIB)"
	$(call install_r,$(R_LIB))
	@touch $@

# For users: R's site library, where every R session on the machine looks. Installed again when
# the package changed, and when the site library no longer holds this checkout's copy (another
# checkout's `make install` since, or removed).
$(VENV)/.r-site-ok: $(R_TARBALL)
	@$(MAKE) --no-print-directory install
	@touch $@

site-library: $(VENV)/.r-site-ok
	@grep -qxF "Source: $(CURDIR)" "$(R_SITE_LIB)/pyhooks/setup.dcf" 2>/dev/null || \
	  $(MAKE) --no-print-directory install

install: $(R_TARBALL)
	@[ -n "$(R_SITE_LIB)" ] || { echo "no R library to install into: give R_SITE_LIB=<dir>"; exit 1; }
	@echo "== installing the R package into $(R_SITE_LIB)"
	$(call install_r,$(R_SITE_LIB))
	@echo "   library(pyhooks) now works in any R session (Python: $(CURDIR)/$(PY))"

demo: setup
	@Rscript demo/mtcars.R

test: setup
	@bash .ci/tests.sh

test-python: setup
	@$(PY) -m pytest -q -n 2 --dist loadfile -m "not cluster"
	@$(PY) -m pytest -q -m cluster

test-r: setup
	@cd r-package/tests && Rscript testthat.R

test-vignettes: setup
	@Rscript tools/knit_vignettes.R

test-readme: setup
	@$(PY) tools/run_readme.py README.md

docs: setup
	@Rscript tools/knit_vignettes.R --html

bench: setup
	@for b in $(filter-out bench/bench_estimators_data.py,$(wildcard bench/bench_*.py)); do $(PY) $$b; done
	@$(PY) bench/bench_estimators_data.py --sweep && Rscript bench/plot_batch_size.R
	@Rscript bench/bench_r_hooks.R
	@Rscript bench/bench_estimators_r.R
	@$(PY) bench/probe_inputs.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache vignettes/*.html vignettes/*.md r-package/vignettes
