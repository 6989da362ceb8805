# Two commands for a new user on a fresh Debian machine:  make demo   and   make test
# Everything else here is what those two need; every step is idempotent.

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := r-base-core r-base-dev pandoc r-cran-reticulate r-cran-testthat r-cran-knitr \
	r-cran-rmarkdown r-cran-cli r-cran-rlang r-cran-magrittr r-cran-ggplot2 r-cran-roxygen2 \
	r-cran-tidyselect
R_LIB := $(CURDIR)/$(VENV)/R-library
export RETICULATE_PYTHON := $(CURDIR)/$(PY)
export PYHOOKS_PYTHON := $(CURDIR)/$(PY)
export R_LIBS := $(R_LIB)
export TF_CPP_MIN_LOG_LEVEL ?= 2

.PHONY: setup demo test test-python test-r test-vignettes docs bench clean

setup: $(VENV)/.python-ok $(VENV)/.r-package-ok

$(VENV)/.apt-ok:
	@if ! command -v Rscript >/dev/null || ! command -v pandoc >/dev/null || \
	   ! Rscript -e 'for (p in c("reticulate","testthat","knitr","rmarkdown","cli","rlang","magrittr","ggplot2","roxygen2","tidyselect")) stopifnot(requireNamespace(p, quietly = TRUE))' >/dev/null 2>&1; then \
	  echo "== installing R and pandoc from Debian"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	fi
	@mkdir -p $(VENV) && touch $@

$(VENV)/.python-ok: $(VENV)/.apt-ok pyproject.toml requirements.txt
	@echo "== creating $(VENV) (pinned TensorFlow, rpy2, pytest)"
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -e . 2>&1 | grep -v "^WARNING: Location" || true
	@$(PY) -c "import tensorflow, rpy2, pytest, hypothesis, pyhooks" 2>/dev/null || \
	  { echo "Python setup failed: see pip's output above"; exit 1; }
	@touch $@

$(VENV)/.r-package-ok: $(VENV)/.python-ok $(shell find r-package/R r-package/DESCRIPTION r-package/NAMESPACE r-package/inst vignettes -type f 2>/dev/null)
	@echo "== installing the R package"
	@mkdir -p $(R_LIB)
	@mkdir -p r-package/vignettes && cp vignettes/*.Rmd r-package/vignettes/
	@R CMD INSTALL --no-test-load --library=$(R_LIB) r-package >$(VENV)/r-install.log 2>&1 || \
	  { cat $(VENV)/r-install.log; exit 1; }
	@touch $@

demo: setup
	@Rscript demo/mtcars.R

test: setup
	@bash .ci/tests.sh

test-python: setup
	@$(PY) -m pytest -q

test-r: setup
	@cd r-package/tests && Rscript testthat.R

test-vignettes: setup
	@Rscript tools/knit_vignettes.R

docs: setup
	@Rscript tools/knit_vignettes.R --html

bench: setup
	@for b in bench/bench_*.py; do $(PY) $$b; done
	@Rscript bench/bench_r_hooks.R

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache vignettes/*.html vignettes/*.md
