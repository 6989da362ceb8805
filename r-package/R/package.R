#' pyhooks: TensorFlow session run hooks for training loops, from R
#'
#' R interface to the Python package pyhooks: built-in training hooks
#' (`hook_*()`), custom hooks written in R ([session_run_hook()]), canned
#' estimators and [train()], [evaluate()] and [predict()].
#'
#' Python is found through reticulate: `RETICULATE_PYTHON` when set, else
#' the option `pyhooks.python` or the environment variable `PYHOOKS_PYTHON`,
#' else the project's `.venv` (the one holding the R library this package is
#' installed in, or one in the working directory or above it). Python,
#' TensorFlow and pyhooks' Python code are loaded at first use, never by
#' `library(pyhooks)`.
#'
#' Options:
#' * `pyhooks.progress`: `"dynamic"` (redraw the progress bar in place) or
#'   `"plain"` (whole lines); see [hook_progress_bar()].
#' * `pyhooks.python`: the Python executable to use.
#'
#' @keywords internal
#' @importFrom stats predict
"_PACKAGE"

# Module proxies created by .onLoad, constructors looked up once, and the last
# few session_run_args() objects (conversions kept while train() & co. run).
# Never training state: that belongs to calls.
.py <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  .py$libname <- libname
  .py$pyhooks <- reticulate::import(
    "pyhooks",
    delay_load = list(
      priority = 5,
      before_load = function() use_pyhooks_python(libname),
      on_load = function() on_python_loaded(),
      on_error = function(e) abort_python_missing(e)
    )
  )
  # the exported `tf` (TensorFlow 1.x's API for model functions), loaded on first use
  tf <<- reticulate::import(
    "pyhooks.estimators.tf1",
    delay_load = list(
      priority = 5,
      before_load = function() use_pyhooks_python(libname),
      on_error = function(e) abort_python_missing(e)
    )
  )
}

# The Python executable pyhooks should use, or NULL to let reticulate decide.
pyhooks_python <- function(libname = .py$libname) {
  explicit <- getOption("pyhooks.python", Sys.getenv("PYHOOKS_PYTHON"))
  if (is.character(explicit) && length(explicit) == 1L && nzchar(explicit)) {
    return(explicit)
  }
  candidates <- character()
  if (!is.null(libname) && basename(libname) == "R-library") {
    # installed by `make setup` into <project>/.venv/R-library
    candidates <- file.path(dirname(libname), "bin", "python")
  }
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    candidates <- c(candidates, file.path(dir, ".venv", "bin", "python"))
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  found <- candidates[file.exists(candidates)]
  if (length(found)) found[[1L]] else NULL
}

use_pyhooks_python <- function(libname) {
  if (reticulate::py_available(initialize = FALSE)) return(invisible())
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) return(invisible())
  python <- pyhooks_python(libname)
  if (!is.null(python)) {
    try(reticulate::use_python(python, required = TRUE), silent = TRUE)
  }
  invisible()
}

on_python_loaded <- function() {
  .py$bridge <- reticulate::import_from_path(
    "pyhooks_rbridge",
    path = system.file("python", package = "pyhooks", lib.loc = .py$libname),
    convert = TRUE
  )
  .py$bridge$install_log_handler(log_writer)
  invisible()
}

abort_python_missing <- function(e) {
  python <- tryCatch(reticulate::py_config()$python, error = function(e) NULL)
  cli::cli_abort(
    c(
      "The Python module {.pkg pyhooks} could not be loaded.",
      "x" = "{conditionMessage(e)}",
      "i" = if (!is.null(python)) "Python used: {.file {python}}.",
      "i" = paste(
        "Install pyhooks and TensorFlow in that Python",
        "({.code pip install -e <pyhooks checkout>[tensorflow]}),",
        "or point R to a Python that has them:",
        "{.code Sys.setenv(RETICULATE_PYTHON = \"<project>/.venv/bin/python\")}",
        "or the option {.code pyhooks.python}, before the first use",
        "(run {.code make setup} in the project to create {.file .venv})."
      )
    ),
    class = "pyhooks_python_missing",
    call = NULL
  )
}

# The pyhooks Python module; loads Python on first use.
py_pyhooks <- function() {
  module <- .py$pyhooks
  if (is.null(.py$bridge)) {
    force(module$`__version__`) # triggers the import (and on_load)
    if (is.null(.py$bridge)) on_python_loaded()
  }
  module
}

# The R <-> Python glue module shipped in inst/python.
py_bridge <- function() {
  if (is.null(.py$bridge)) py_pyhooks()
  .py$bridge
}

utils::globalVariables(c("steps", "value"))
