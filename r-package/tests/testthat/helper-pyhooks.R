# Skip helpers and fixtures shared by the tests.

pyhooks_available <- local({
  available <- NULL
  function() {
    if (is.null(available)) {
      available <<- tryCatch({
        pyhooks:::py_pyhooks()
        reticulate::py_module_available("tensorflow")
      }, error = function(e) FALSE)
    }
    available
  }
})

# Skips the test unless Python with pyhooks and TensorFlow can be used.
skip_if_no_pyhooks <- function() {
  if (!pyhooks_available()) {
    testthat::skip("Python with pyhooks and TensorFlow is not available")
  }
}

# The input of SPEC section 3.
mtcars_input <- function(batch_size = 8L, ...) {
  input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = batch_size, ...)
}

mtcars_columns <- function() {
  feature_columns(column_numeric("drat"))
}

# A model and an input; the progress bar is kept quiet unless a test asks.
quiet_train <- function(model, input = mtcars_input(), steps = 2, hooks = list(), ...) {
  hooks <- c(hooks, list(hook_progress_bar(writer = function(text) NULL)))
  train(model, input_fn = input, steps = steps, hooks = hooks, ...)
}

Sys.setenv(TF_CPP_MIN_LOG_LEVEL = Sys.getenv("TF_CPP_MIN_LOG_LEVEL", "2"))

# Evaluates `code` with options / environment variables set, then restores them.
with_opts <- function(opts, code) {
  old <- options(opts)
  on.exit(options(old))
  code
}

with_env <- function(vars, code) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  on.exit(for (name in names(old)) {
    if (is.na(old[[name]])) Sys.unsetenv(name) else do.call(Sys.setenv, as.list(old[name]))
  })
  do.call(Sys.setenv, as.list(vars))
  code
}

# TensorBoard event files of a directory, read back: (step, tag, value) rows.
event_values <- function(dir) {
  reader <- reticulate::py_run_string(paste(
    "def read_events(d):",
    "    import glob, tensorflow as tf",
    "    from tensorflow.core.util import event_pb2",
    "    out = []",
    "    for f in sorted(glob.glob(d + '/events.out.tfevents*')):",
    "        for record in tf.data.TFRecordDataset(f):",
    "            event = event_pb2.Event.FromString(record.numpy())",
    "            out += [[event.step, v.tag, v.simple_value] for v in event.summary.value]",
    "    return out", sep = "\n"), local = TRUE)
  rows <- reader$read_events(dir)
  data.frame(step = vapply(rows, function(r) as.numeric(r[[1]]), 1),
             tag = vapply(rows, function(r) r[[2]], ""),
             value = vapply(rows, function(r) r[[3]], 1))
}

# An Rscript as a user starts it: no environment variables (no RETICULATE_PYTHON, no
# PYHOOKS_PYTHON) but the library holding this package, in a directory with no .venv above it.
fresh_rscript <- function(code) {
  dir <- tempfile("fresh")
  dir.create(dir)
  script <- file.path(dir, "script.R")
  writeLines(code, script)
  env <- c(paste0("PATH=", Sys.getenv("PATH")), paste0("HOME=", dir),
           paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
  out <- suppressWarnings(system2("env", c("-i", shQuote(env), file.path(R.home("bin"), "Rscript"),
                                           shQuote(script)),
                                  stdout = TRUE, stderr = TRUE))
  unlink(dir, recursive = TRUE)
  paste(out, collapse = "\n")
}

# The Python recorded by make install (a fresh Rscript finds it), or the test is skipped.
setup_python <- function() {
  setup <- pyhooks:::installed_setup(dirname(find.package("pyhooks")))
  skip_if(!length(setup), "not installed by make: no recorded Python")
  setup$Python
}
