# Loading: library(pyhooks) starts no Python; a missing module says what to do.

rscript <- function(code, env = character()) {
  out <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)),
    stdout = TRUE, stderr = TRUE, env = paste0(names(env), "=", shQuote(env))
  ))
  paste(out, collapse = "\n")
}

lib_env <- function() {
  c(R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
}

test_that("library(pyhooks) imports neither Python nor TensorFlow", {
  skip_on_cran()
  out <- rscript(
    "library(pyhooks); cat('python initialized:', reticulate::py_available(), '\\n')",
    env = lib_env()
  )
  expect_match(out, "python initialized: FALSE")
})

test_that("a Python without pyhooks gives an actionable error", {
  skip_on_cran()
  skip_if_no_pyhooks()
  # a fresh virtual environment of the same Python, without pyhooks
  base <- reticulate::py_config()$python
  home <- reticulate::import("sys")$base_prefix
  venv <- tempfile("nopyhooks")
  status <- system2(file.path(home, "bin", "python3"), c("-m", "venv", "--without-pip", venv),
                    stdout = FALSE, stderr = FALSE)
  skip_if(status != 0, "cannot create a virtual environment")
  out <- rscript(
    "library(pyhooks); tryCatch(hook_progress_bar(), error = function(e) cat(conditionMessage(e)))",
    env = c(lib_env(), RETICULATE_PYTHON = file.path(venv, "bin", "python"), PYHOOKS_PYTHON = "")
  )
  expect_match(out, "pyhooks could not be loaded")
  expect_match(out, "No module named 'pyhooks'")
  expect_match(out, "RETICULATE_PYTHON")
})

test_that("the project's Python is found when nothing is set", {
  old <- options(pyhooks.python = "/opt/python/bin/python")
  on.exit(options(old))
  expect_identical(pyhooks:::pyhooks_python(), "/opt/python/bin/python")
  options(pyhooks.python = NULL)
  lib <- file.path(tempfile(), ".venv", "R-library")
  dir.create(file.path(dirname(lib), "bin"), recursive = TRUE)
  file.create(file.path(dirname(lib), "bin", "python"))
  old_env <- Sys.getenv("PYHOOKS_PYTHON", unset = NA)
  Sys.unsetenv("PYHOOKS_PYTHON")
  on.exit(if (!is.na(old_env)) Sys.setenv(PYHOOKS_PYTHON = old_env), add = TRUE)
  expect_identical(pyhooks:::pyhooks_python(lib), file.path(dirname(lib), "bin", "python"))
})
