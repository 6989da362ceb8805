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
#' else a `.venv` in the working directory or above it. `library(pyhooks)`
#' settles that choice with reticulate before anything else can start Python
#' (a [reticulate::import()], a python chunk in R Markdown, an R function
#' converted by [estimator()]); Python, TensorFlow and pyhooks' Python code
#' are then loaded at first use. Python cannot change within an R session: if
#' reticulate already runs another Python when pyhooks first needs its own,
#' pyhooks' functions stop with an error naming both and what to do (restart
#' R and call `library(pyhooks)` first, or set `RETICULATE_PYTHON` or the
#' option `pyhooks.python`).
#'
#' TensorFlow's C++ log lines (INFO and WARNING: notices of its runtime and
#' profiler) are off in R: `library(pyhooks)` sets the environment variable
#' `TF_CPP_MIN_LOG_LEVEL` to 2 when it is not set (set it to 0 before to see
#' them).
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
  reg.finalizer(.py, run_python_exit_functions, onexit = TRUE)
  # tensors come to R with the class "tensorflow.tensor", for R's operators (tensor_ops)
  reticulate::register_class_filter(tensor_class_filter)
  # Python is chosen now, before anything else can start reticulate (whatever the user does
  # first: reticulate::import(), a python chunk, estimator()); it starts at first use.
  use_pyhooks_python(libname)
  # TensorFlow's C++ log (its runtime's INFO and WARNING lines, e.g. the profiler's) stays off
  # unless asked for; TensorFlow reads this when it loads.
  if (is.na(Sys.getenv("TF_CPP_MIN_LOG_LEVEL", unset = NA))) Sys.setenv(TF_CPP_MIN_LOG_LEVEL = "2")
  if (reticulate::py_available(initialize = FALSE)) {
    # Python already runs (started before library(pyhooks)): pyhooks' modules are imported at
    # first use, once check_running_python() has seen that it is pyhooks' Python.
    tf <<- structure(list(), class = "pyhooks_tf")
    return(invisible())
  }
  .py$pyhooks <- reticulate::import(
    "pyhooks",
    delay_load = list(
      priority = 5,
      before_load = function() {
        check_running_python()
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
      before_load = function() check_running_python(),
      on_load = function() py_bridge()$allow_deprecated_calls_from_r(),
      on_error = function(e) abort_python_missing(e)
    )
  )
}

# A pyhooks module imported now (Python runs already), after the check of which Python runs.
import_checked <- function(module) {
  check_running_python()
  hide_working_directory()
  on.exit(restore_working_directory())
  tryCatch(reticulate::import(module), error = function(e) abort_python_missing(e))
}

# `tf` when Python ran before library(pyhooks): the module, imported at its first use.
#' @export
`$.pyhooks_tf` <- function(x, name) {
  if (is.null(.py$tf)) {
    .py$tf <- import_checked("pyhooks.estimators.tf1")
    py_bridge()$allow_deprecated_calls_from_r()
  }
  .py$tf[[name]]
}

#' @export
`[[.pyhooks_tf` <- `$.pyhooks_tf`

#' @export
print.pyhooks_tf <- function(x, ...) {
  cat("<tf: TensorFlow 1.x's API for model functions, loaded at first use>\n")
  invisible(x)
}

# The Python executable pyhooks should use, or NULL to let reticulate decide:
# the option pyhooks.python or PYHOOKS_PYTHON, else the Python recorded when
# `make install` / `make setup` installed this package (setup.dcf), else the
# virtualenv made by install_pyhooks(), else a .venv in the working directory
# or above it.
pyhooks_python <- function(libname = .py$libname) {
  python_choice(libname)$python
}

# pyhooks_python() and where it comes from (`from`, for messages), or list() if none.
python_choice <- function(libname = .py$libname) {
  option <- getOption("pyhooks.python")
  if (is.character(option) && length(option) == 1L && nzchar(option)) {
    return(list(python = option, from = "the option pyhooks.python"))
  }
  variable <- Sys.getenv("PYHOOKS_PYTHON")
  if (nzchar(variable)) return(list(python = variable, from = "PYHOOKS_PYTHON"))
  candidates <- c(installed_setup(libname)[["Python"]], install_pyhooks_python())
  from <- c("recorded by make install", "made by install_pyhooks()")[seq_along(candidates)]
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    candidates <- c(candidates, file.path(dir, ".venv", "bin", "python"))
    from <- c(from, "the .venv of the working directory or above it")
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  found <- which(file.exists(candidates))
  if (length(found)) list(python = candidates[[found[[1L]]]], from = from[[found[[1L]]]]) else list()
}

# The Python reticulate will run for pyhooks: RETICULATE_PYTHON when set (reticulate's own
# rule), else python_choice(); list() when none is known.
needed_python <- function(libname = .py$libname) {
  variable <- Sys.getenv("RETICULATE_PYTHON")
  if (nzchar(variable)) return(list(python = variable, from = "RETICULATE_PYTHON"))
  python_choice(libname)
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

# When R ends: Python's exit functions, which reticulate does not run (it never finalizes
# Python). pyhooks' own remove the temporary model directories of `model_dir = NULL` and stop the
# TensorBoards this session started; the user's own run too, as at the end of a Python process.
run_python_exit_functions <- function(env) {
  if (reticulate::py_available(initialize = FALSE)) {
    try(reticulate::import("atexit")$`_run_exitfuncs`(), silent = TRUE)
  }
  invisible()
}

use_pyhooks_python <- function(libname) {
  if (reticulate::py_available(initialize = FALSE)) return(invisible())
  if (nzchar(Sys.getenv("RETICULATE_PYTHON"))) return(invisible())
  python <- pyhooks_python(libname)
  if (!is.null(python)) {
    try(reticulate::use_python(python, required = TRUE), silent = TRUE)
    # reticulate 1.28 looks for a Poetry project (a pyproject.toml above the working directory
    # with any [tool] table) before the Python chosen here: it would warn that poetry is
    # missing, or run Poetry's environment. Unless the user names a Poetry project, none.
    if (is.null(getOption("reticulate.poetry.project"))) {
      options(reticulate.poetry.project = file.path(tempdir(), "pyhooks-no-poetry-project"))
    }
  }
  invisible()
}

# Before pyhooks first uses Python: if reticulate already runs a Python other than the one
# pyhooks needs (started before library(pyhooks), or chosen since by reticulate::use_python()),
# an R error saying so. Checked once per session, when it holds.
check_running_python <- function() {
  if (isTRUE(.py$python_checked) || !reticulate::py_available(initialize = FALSE)) {
    return(invisible())
  }
  needed <- needed_python()
  running <- reticulate::py_config()
  if (length(needed) && !same_python(running, needed$python)) {
    abort_python_mismatch(running$python, needed)
  }
  .py$python_checked <- TRUE
  invisible()
}

# Is the running Python (its py_config()) the Python at path `python`? Compared by prefix:
# a virtual environment's python links to its base Python's executable.
same_python <- function(config, python) {
  if (!file.exists(python)) return(FALSE)
  venv <- dirname(dirname(python))
  prefix <- if (file.exists(file.path(venv, "pyvenv.cfg"))) {
    venv
  } else {
    out <- suppressWarnings(tryCatch(
      system2(python, c("-c", shQuote("import sys; print(sys.prefix)")), stdout = TRUE,
              stderr = FALSE),
      error = function(e) character()))
    if (length(out)) out[[length(out)]] else ""
  }
  nzchar(prefix) && identical(normalizePath(prefix, mustWork = FALSE),
                              normalizePath(config$prefix, mustWork = FALSE))
}

abort_python_mismatch <- function(running, needed) {
  cli::cli_abort(
    c(
      "pyhooks cannot use its Python: reticulate already runs another one in this R session.",
      "x" = "Running: {.file {running}}.",
      "i" = "pyhooks needs: {.file {needed$python}} ({needed$from}).",
      "i" = paste(
        "Restart R and call {.code library(pyhooks)} before anything else starts Python",
        "(such as {.code reticulate::import()} or a python chunk),"
      ),
      " " = "or start R with {.envvar RETICULATE_PYTHON} set to {.file {needed$python}},",
      " " = paste(
        "or, if the running Python has pyhooks and TensorFlow, choose it:",
        "{.code options(pyhooks.python = \"{running}\")}."
      )
    ),
    class = c("pyhooks_python_mismatch", "pyhooks_python_missing"),
    call = NULL
  )
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
  if (inherits(e, "pyhooks_python_mismatch")) rlang::cnd_signal(e)
  check_running_python()
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
  if (is.null(.py$bridge)) {
    check_running_python()
    if (is.null(.py$pyhooks)) .py$pyhooks <- import_checked("pyhooks")
    force(.py$pyhooks$`__version__`) # triggers the import (and on_load)
    if (is.null(.py$bridge)) on_python_loaded()
  }
  .py$pyhooks
}

# The R <-> Python glue module shipped in inst/python.
py_bridge <- function() {
  if (is.null(.py$bridge)) py_pyhooks()
  .py$bridge
}

utils::globalVariables(c("steps", "value", "data"))
