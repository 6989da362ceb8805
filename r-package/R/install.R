#' Install the Python side of pyhooks
#'
#' Creates a Python virtual environment (through reticulate) with pyhooks and
#' TensorFlow, as `keras3::install_keras()` does for Keras. The package uses it
#' from the next R session on, unless another Python is chosen (see
#' [pyhooks-package]). Not needed after `make setup` or `make install` in a
#' pyhooks checkout: the package then uses that checkout's `.venv`.
#'
#' @param envname Name (or path) of the virtual environment.
#' @param source The pyhooks checkout to install from; by default the one
#'   whose `make install` installed this R package.
#' @param extras Optional parts of pyhooks to install along:
#'   `"tensorflow"` (needed to train) and `"r"` (rpy2, for hooks written in R
#'   used from Python).
#' @param python The Python used to create the environment (3.11 or later),
#'   or `NULL` for the one reticulate finds.
#' @returns The path of the environment's Python, invisibly.
#' @seealso [pyhooks-package] for how the package finds Python.
#' @export
#' @examples
#' \dontrun{
#' install_pyhooks()
#' install_pyhooks(envname = "my-pyhooks", extras = c("tensorflow", "r"))
#' }
install_pyhooks <- function(envname = "r-pyhooks", source = NULL, extras = "tensorflow",
                            python = NULL) {
  call <- rlang::current_env()
  check_string(envname, "envname", call)
  if (is.null(source)) source <- installed_setup()[["Source"]]
  if (is.null(source) || !dir.exists(source)) {
    cli::cli_abort(
      c(
        "{.arg source} must be a pyhooks checkout (a directory with {.file pyproject.toml}).",
        "i" = "This R package was not installed by {.code make install} in a checkout; give its path."
      ),
      class = "pyhooks_error_argument", call = call
    )
  }
  if (!file.exists(file.path(source, "pyproject.toml"))) {
    cli::cli_abort("{.arg source} has no {.file pyproject.toml}: {.path {source}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  extras <- as.character(extras)
  bad <- setdiff(extras, c("tensorflow", "r"))
  if (length(bad)) {
    cli::cli_abort('{.arg extras} must be a subset of c("tensorflow", "r"), not {.val {bad}}.',
                   class = "pyhooks_error_argument", call = call)
  }
  package <- normalizePath(source)
  if (length(extras)) package <- paste0(package, "[", paste(extras, collapse = ","), "]")
  if (!reticulate::virtualenv_exists(envname)) {
    reticulate::virtualenv_create(envname, python = python)
  }
  # NumPy 1.x: reticulate converts R vectors and arrays to NumPy's 1.x binary interface only
  reticulate::virtualenv_install(envname, c(package, "numpy<2"), ignore_installed = FALSE)
  path <- reticulate::virtualenv_python(envname)
  cli::cli_inform(c("v" = "pyhooks installed in {.path {path}}.",
                    "i" = "Restart R to use it."))
  invisible(path)
}

# The Python of install_pyhooks()' default environment, if it exists.
install_pyhooks_python <- function(envname = "r-pyhooks") {
  exists <- tryCatch(reticulate::virtualenv_exists(envname), error = function(e) FALSE)
  if (!isTRUE(exists)) return(NULL)
  tryCatch(reticulate::virtualenv_python(envname), error = function(e) NULL)
}

check_string <- function(x, arg, call) {
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x)) {
    cli::cli_abort("{.arg {arg}} must be a single non-empty string, not {.obj_type_friendly {x}}.",
                   class = "pyhooks_error_argument", call = call)
  }
}
