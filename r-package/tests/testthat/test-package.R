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
  expect_match(out, "pyhooks::install_pyhooks()", fixed = TRUE)
  expect_match(out, "make install")
})

test_that("the Python recorded by make install is found when nothing is set", {
  old <- options(pyhooks.python = "/opt/python/bin/python")
  on.exit(options(old))
  expect_identical(pyhooks:::pyhooks_python(), "/opt/python/bin/python")
  options(pyhooks.python = NULL)
  old_env <- Sys.getenv("PYHOOKS_PYTHON", unset = NA)
  Sys.unsetenv("PYHOOKS_PYTHON")
  on.exit(if (!is.na(old_env)) Sys.setenv(PYHOOKS_PYTHON = old_env), add = TRUE)
  # an installed package in `lib`, with the setup.dcf that `make install` writes
  lib <- tempfile("lib")
  python <- file.path(tempfile("checkout"), ".venv", "bin", "python")
  dir.create(dirname(python), recursive = TRUE)
  file.create(python)
  dir.create(file.path(lib, "pyhooks"), recursive = TRUE)
  writeLines(c(paste("Python:", python), paste("Source:", dirname(dirname(dirname(python))))),
             file.path(lib, "pyhooks", "setup.dcf"))
  expect_identical(pyhooks:::pyhooks_python(lib), python)
  expect_identical(pyhooks:::installed_setup(lib)$Source, dirname(dirname(dirname(python))))
  # a recorded Python that is gone is skipped
  unlink(python)
  expect_false(identical(pyhooks:::pyhooks_python(lib), python))
})

test_that("the installed package knows the checkout's Python", {
  skip_on_cran()
  setup <- pyhooks:::installed_setup(dirname(find.package("pyhooks")))
  skip_if(!length(setup), "not installed by make")
  expect_true(file.exists(setup$Python))
  expect_true(file.exists(file.path(setup$Source, "pyproject.toml")))
})

test_that("install_pyhooks() checks its arguments before creating anything", {
  expect_error(install_pyhooks(envname = ""), "`envname` must be a single non-empty string")
  expect_error(install_pyhooks(source = tempfile()), "`source` must be a pyhooks checkout")
  expect_error(install_pyhooks(source = tempdir(), extras = "gpu"),
               "`source` has no")
  checkout <- tempfile("checkout")
  dir.create(checkout)
  file.create(file.path(checkout, "pyproject.toml"))
  expect_error(install_pyhooks(source = checkout, extras = "gpu"),
               '`extras` must be a subset of c\\("tensorflow", "r"\\)')
})

test_that("a folder named pyhooks in the working directory does not shadow the Python module", {
  skip_on_cran()
  skip_if_no_pyhooks()
  dir <- tempfile("workdir")
  dir.create(file.path(dir, "pyhooks"), recursive = TRUE) # e.g. an R library, R CMD check's
  python <- reticulate::py_config()$python
  out <- rscript(
    paste0("setwd(", deparse(dir), "); library(pyhooks); print(column_numeric('x')); ",
           "cat('cwd kept on sys.path:', reticulate::py_eval(\"__import__('sys').path[0]\") == '')"),
    env = c(lib_env(), RETICULATE_PYTHON = python)
  )
  expect_match(out, '<column_numeric: key = "x">', fixed = TRUE)
  expect_match(out, "cwd kept on sys.path: TRUE", fixed = TRUE)
})
