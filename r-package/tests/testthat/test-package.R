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

test_that("estimator() as the first call runs on pyhooks' Python, with nothing set", {
  skip_on_cran()
  python <- setup_python()
  out <- fresh_rscript(c(
    "library(pyhooks)",
    "model_fn <- function(features, labels, mode) {",
    "  predictions <- tf$reshape(tf$layers$dense(features, 1L), list(-1L))",
    "  loss <- tf$losses$mean_squared_error(labels, predictions)",
    "  optimizer <- tf$train$GradientDescentOptimizer(0.01)",
    "  train_op <- optimizer$minimize(loss, global_step = tf$train$get_global_step())",
    "  estimator_spec(mode, loss = loss, train_op = train_op)",
    "}",
    "model <- estimator(model_fn)",
    "cat('python:', reticulate::py_config()$python, '\\n')",
    "history <- train(model, input_fn(mtcars, mpg ~ drat + wt, batch_size = 8L), steps = 2)",
    "cat('trained to step', max(history$steps), '\\n')"
  ))
  expect_match(out, paste("python:", python), fixed = TRUE)
  expect_match(out, "trained to step 2", fixed = TRUE)
})

test_that("a pyproject.toml above the working directory does not choose reticulate's Python", {
  skip_on_cran()
  python <- setup_python()
  project <- tempfile("project")
  dir.create(file.path(project, "analysis"), recursive = TRUE)
  writeLines(c("[tool.poetry]", 'name = "analysis"'), file.path(project, "pyproject.toml"))
  file.create(file.path(project, ".here"))
  out <- fresh_rscript(c(
    sprintf("setwd('%s')", file.path(project, "analysis")),
    "library(pyhooks)",
    "print(column_numeric('x'))",
    "cat('python:', reticulate::py_config()$python, '\\n')"
  ))
  expect_no_match(out, "Poetry", fixed = TRUE)
  expect_match(out, paste("python:", python), fixed = TRUE)
})

test_that("reticulate::import() first, after library(pyhooks), gets pyhooks' Python", {
  skip_on_cran()
  python <- setup_python()
  out <- fresh_rscript(c(
    "library(pyhooks)",
    "np <- reticulate::import('numpy')",
    "print(np$asarray(matrix(1:6, 2)))",
    "print(np$sum(matrix(1:6, 2)))",
    "cat('python:', reticulate::py_config()$python, '\\n')",
    "print(column_numeric('x'))"
  ))
  expect_match(out, "[2,]    2    4    6", fixed = TRUE)
  expect_match(out, "[1] 21", fixed = TRUE)
  expect_match(out, paste("python:", python), fixed = TRUE)
  expect_match(out, '<column_numeric: key = "x">', fixed = TRUE)
})

test_that("pyhooks works on its Python when reticulate started it before library(pyhooks)", {
  skip_on_cran()
  python <- setup_python()
  out <- fresh_rscript(c(
    sprintf("reticulate::use_python(%s, required = TRUE)", deparse(python)),
    "np <- reticulate::import('numpy')",
    "library(pyhooks)",
    "print(tf)",
    "print(shape(NULL, 3L))",
    "print(column_numeric('x'))"
  ))
  expect_match(out, "<tf: TensorFlow 1.x's API for model functions, loaded at first use>",
               fixed = TRUE)
  expect_match(out, "TensorShape([None, 3])", fixed = TRUE)
  expect_match(out, '<column_numeric: key = "x">', fixed = TRUE)
})

test_that("another Python already running is one error naming both and the fixes", {
  skip_on_cran()
  python <- setup_python()
  home <- system2(python, c("-c", shQuote("import sys; print(sys.base_prefix)")), stdout = TRUE)
  venv <- tempfile("otherpython")
  status <- system2(file.path(home, "bin", "python3"), c("-m", "venv", "--without-pip", venv),
                    stdout = FALSE, stderr = FALSE)
  skip_if(status != 0, "cannot create a virtual environment")
  other <- file.path(venv, "bin", "python")
  out <- fresh_rscript(c(
    sprintf("reticulate::use_python(%s, required = TRUE)", deparse(other)),
    "invisible(reticulate::py_available(initialize = TRUE))",
    "library(pyhooks)",
    "calls <- list(",
    "  hook_progress_bar = quote(hook_progress_bar()),",
    "  estimator = quote(estimator(function(features, labels, mode) NULL)),",
    "  tf = quote(tf$constant(1)),",
    "  column_numeric = quote(column_numeric('x')),",
    "  input_fn = quote(input_fn(mtcars, mpg ~ drat)),",
    "  run_config = quote(run_config()),",
    "  session_run_hook = quote(session_run_hook(after_run = function(context, values) NULL)),",
    "  shape = quote(shape(2L))",
    ")",
    "for (name in names(calls)) {",
    "  e <- tryCatch({ eval(calls[[name]]); NULL }, error = identity)",
    "  cat(name, ':', if (inherits(e, 'pyhooks_python_mismatch')) 'mismatch' else format(e), '\\n')",
    "}",
    "e <- tryCatch(hook_progress_bar(), error = identity)",
    "cat(conditionMessage(e), '\\n')",
    "# every export called with no arguments: an R error of its own, or the same one",
    "for (name in getNamespaceExports('pyhooks')) {",
    "  f <- get(name, asNamespace('pyhooks'))",
    "  if (!is.function(f) || name %in% c('import', '%>%', 'install_pyhooks')) next",
    "  e <- tryCatch({ f(); NULL }, error = identity)",
    "  if (!is.null(e) && grepl('No module named', conditionMessage(e))) cat('BAD', name, '\\n')",
    "}"
  ))
  for (name in c("hook_progress_bar", "estimator", "tf", "column_numeric", "input_fn",
                 "run_config", "session_run_hook", "shape")) {
    expect_match(out, paste(name, ": mismatch"), fixed = TRUE)
  }
  # cli wraps the message at the console's width: its words are compared, not its lines
  flat <- gsub("\\s+", " ", out)
  expect_match(flat, "reticulate already runs another one", fixed = TRUE)
  expect_match(flat, paste0("Running: '", other, "'"), fixed = TRUE)
  expect_match(flat, paste0("pyhooks needs: '", python, "' (recorded by make install)"),
               fixed = TRUE)
  expect_match(flat, "Restart R and call `library(pyhooks)` before anything else starts Python",
               fixed = TRUE)
  expect_match(flat, "RETICULATE_PYTHON", fixed = TRUE)
  expect_match(flat, sprintf("options(pyhooks.python = \"%s\")", other), fixed = TRUE)
  expect_no_match(out, "BAD ")
})
