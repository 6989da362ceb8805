#' pyhooks: TensorFlow session run hooks for training loops, from R
#'
#' R interface to the Python package pyhooks: built-in training hooks
#' (`hook_*()`), custom hooks written in R ([session_run_hook()]), canned
#' estimators and [train()], [evaluate()] and [predict()].
#'
#' Python is found through reticulate: `RETICULATE_PYTHON` when set, else
#' the option `pyhooks.python` or the environment variable `PYHOOKS_PYTHON`,
#' else the Python of the checkout whose `make install` (or `make setup`)
#' installed this package, else the environment made by [install_pyhooks()],
#' else a `.venv` in the working directory or above it. Python, TensorFlow
#' and pyhooks' Python code are loaded at first use, never by
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

# Module proxies created by .onLoad and constructors looked up once. Never
# training state: that belongs to calls.
.py <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  .py$libname <- libname
  .py$pyhooks <- reticulate::import(
    "pyhooks",
    delay_load = list(
      priority = 5,
      before_load = function() {
        use_pyhooks_python(libname)
        hide_working_directory()
      },
      on_load = function() {
        restore_working_directory()
        on_python_loaded()
      },
      on_error = function(e) {
        restore_working_directory()
        abort_python_missing(e)
      }
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

# The Python executable pyhooks should use, or NULL to let reticulate decide:
# the option pyhooks.python or PYHOOKS_PYTHON, else the Python recorded when
# `make install` / `make setup` installed this package (setup.dcf), else the
# virtualenv made by install_pyhooks(), else a .venv in the working directory
# or above it.
pyhooks_python <- function(libname = .py$libname) {
  explicit <- getOption("pyhooks.python", Sys.getenv("PYHOOKS_PYTHON"))
  if (is.character(explicit) && length(explicit) == 1L && nzchar(explicit)) {
    return(explicit)
  }
  candidates <- c(installed_setup(libname)[["Python"]], install_pyhooks_python())
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

# What `make install` recorded in the installed package: `Python` (the
# checkout's .venv Python) and `Source` (the checkout), or an empty list.
installed_setup <- function(libname = .py$libname) {
  file <- if (!is.null(libname)) file.path(libname, "pyhooks", "setup.dcf") else ""
  if (!nzchar(file) || !file.exists(file)) return(list())
  fields <- tryCatch(read.dcf(file), error = function(e) NULL)
  if (is.null(fields) || nrow(fields) != 1L) return(list())
  as.list(fields[1L, ])
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

# reticulate puts "" (the working directory) first on Python's sys.path: in a
# directory holding a folder named pyhooks (an R library, R CMD check's
# pyhooks.Rcheck), `import pyhooks` would import that folder. It is taken off
# for the import of pyhooks only.
hide_working_directory <- function() {
  if (!isTRUE(tryCatch(reticulate::py_available(initialize = TRUE), error = function(e) FALSE))) {
    return(invisible()) # reticulate's import reports why
  }
  path <- reticulate::import("sys", convert = FALSE)$path
  .py$hidden_entries <- 0L
  while (isTRUE(reticulate::py_to_r(path$`__contains__`("")))) {
    path$remove("")
    .py$hidden_entries <- .py$hidden_entries + 1L
  }
  invisible()
}

restore_working_directory <- function() {
  n <- .py$hidden_entries
  .py$hidden_entries <- NULL
  if (is.null(n) || n == 0L) return(invisible())
  path <- reticulate::import("sys", convert = FALSE)$path
  for (i in seq_len(n)) path$insert(0L, "")
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
        "Create a Python environment with pyhooks and TensorFlow with",
        "{.run pyhooks::install_pyhooks()} and restart R,",
        "or run {.code make install} in the pyhooks checkout (R then uses its {.file .venv}),",
        "or choose a Python that has them with {.code options(pyhooks.python = \"/path/to/python\")}",
        "before the first use."
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

utils::globalVariables(c("steps", "value", "data"))
