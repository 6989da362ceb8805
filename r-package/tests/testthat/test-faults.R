# Faults and bad input from R: NA in data, huge sizes, damaged checkpoints, R
# spellings in errors; and real processes killed, interrupted, starved of disk.

silent_hooks <- function() list(hook_progress_bar(writer = function(text) NULL))

test_that("NA in input_fn() data is an R error naming the column and the R row", {
  skip_if_no_pyhooks()
  base <- data.frame(x = c(1, 2, 3, 4), y = c(1, 2, 3, 4))
  cases <- list(
    list(column = "x", value = NA_integer_),
    list(column = "x", value = NA), # logical
    list(column = "x", value = NA_character_),
    list(column = "x", value = NA_real_),
    list(column = "x", value = NaN),
    list(column = "y", value = NA_real_) # the response too
  )
  for (case in cases) {
    data <- base
    if (is.character(case$value)) data$x <- as.character(data$x)
    if (is.logical(case$value)) data$x <- c(TRUE, FALSE, TRUE, FALSE)
    if (is.integer(case$value)) data$x <- 1:4
    data[[case$column]][3] <- case$value
    err <- expect_error(input_fn(data, features = "x", response = "y"),
                        class = "pyhooks_error_argument")
    expect_match(conditionMessage(err),
                 sprintf("Column \"%s\" has 1 missing value (`NA`), first in row 3.", case$column),
                 fixed = TRUE)
  }
  factor_data <- data.frame(f = factor(c("a", NA, "b")), y = 1:3)
  expect_error(input_fn(factor_data, features = "f", response = "y"),
               "Column \"f\" has 1 missing value (`NA`), first in row 2.", fixed = TRUE)
  two <- data.frame(x = c(NA, 1, NA), y = 1:3)
  expect_error(input_fn(two, features = "x", response = "y"), "2 missing values", fixed = TRUE)
  # columns that are not used may hold NA
  expect_s3_class(input_fn(data.frame(x = 1:3, y = 1:3, z = c(NA, 1, 2)), features = "x",
                           response = "y"), "python.builtin.object")
})

test_that("huge sizes train as the data allows or are refused, never crash", {
  skip_if_no_pyhooks()
  model <- linear_regressor(feature_columns(column_numeric("drat")))
  for (size in list(list(queue_capacity = 1e10), list(queue_capacity = 1e9),
                    list(batch_size = 1e10))) {
    input <- do.call(input_fn, c(list(mtcars, features = "drat", response = "mpg"), size))
    history <- train(model, input, steps = 2, hooks = silent_hooks())
    expect_length(history$steps, 1L)
  }
  forever <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 1e12,
                      num_epochs = NULL)
  expect_error(train(model, forever, steps = 1, hooks = silent_hooks()),
               "`batch_size` = 1000000000000: batches of 1000000000000 rows", fixed = TRUE)
})

test_that("R errors spell values the R way, and garbage arguments are refused", {
  skip_if_no_pyhooks()
  expect_error(hook_step_counter(output_dir = 1), "`output_dir` must be a directory path or NULL, got 1 (double).", fixed = TRUE)
  expect_error(hook_step_counter(output_dir = TRUE), "got TRUE (logical)", fixed = TRUE)
  expect_error(hook_summary_saver(save_steps = 1, output_dir = c("a", "b"), summary_op = "x"),
               "got c(\"a\", \"b\") (list)", fixed = TRUE)
  expect_error(hook_history_saver(path = ""), "`path` must be a file path or NULL, got \"\".", fixed = TRUE)
  expect_error(hook_final_ops(1), "`final_ops` must be a tensor, an operation, a variable or a tensor name (or a list or named list of them), got 1 (double).", fixed = TRUE)
  expect_error(hook_history_saver(metrics = list(steps = "x")), "got \"steps\"", fixed = TRUE)
  expect_error(column_numeric("x", dtype = 1), "`dtype` must be a numeric type, got 1.", fixed = TRUE)
  # an environment has no Python value: named, not "Unable to convert R object to Python type"
  expect_error(hook_checkpoint_saver(new.env()), "`checkpoint_dir` must not be an environment.",
               fixed = TRUE, class = "pyhooks_error_argument")
  expect_error(hook_history_saver(metrics = list(a = new.env())),
               "`metrics` must not be an environment.", fixed = TRUE)
  expect_error(hook_checkpoint_saver(tempfile(), save_steps = 1, saver = "a"),
               "`saver` must be a tf.compat.v1.train.Saver", fixed = TRUE)
  expect_error(hook_step_counter(summary_writer = TRUE),
               "`summary_writer` must be a summary writer", fixed = TRUE)
  expect_error(hook_logging_tensor(1, every_n_iter = 1), "`tensors` must be a named list, a list or a tensor (name), got 1", fixed = TRUE)
  expect_error(dnn_regressor(function() 1, column_numeric("x")),
               "`hidden_units` must be a vector or a list, not a function.", fixed = TRUE)
  expect_error(hook_checkpoint_saver(tempfile(), save_steps = new.env()),
               "`save_steps` must be a whole number, not an environment.", fixed = TRUE)
  expect_error(dnn_linear_combined_regressor(column_numeric("x"), column_numeric("x"), 0),
               "`dnn_hidden_units` must be positive", fixed = TRUE)
  expect_s3_class(dnn_linear_combined_regressor(column_numeric("x"), column_numeric("x"), 2),
                  "pyhooks_estimator") # one column, not a list: as linear_regressor()
  expect_error(feature_columns(column_numeric("x"), names = c("x", NA)),
               "`names` must be column names", fixed = TRUE)
  for (bad in list(-1, NA, "a")) {
    expect_error(input_fn(mtcars, features = "drat", response = "mpg", epochs = bad),
                 "`epochs` must be a", fixed = TRUE, class = "pyhooks_error_argument")
  }
  model <- linear_regressor(feature_columns(column_numeric("drat")))
  train(model, mtcars_input(), steps = 1, hooks = silent_hooks())
  for (bad in list("yes", NA, 1)) {
    expect_error(evaluate(model, mtcars_input(), steps = 1, simplify = bad),
                 "`simplify` must be `TRUE` or `FALSE`", fixed = TRUE,
                 class = "pyhooks_error_argument")
    expect_error(predict(model, mtcars_input(), simplify = bad),
                 "`simplify` must be `TRUE` or `FALSE`", fixed = TRUE,
                 class = "pyhooks_error_argument")
  }
  ids <- data.frame(id = c(0, 1, 7), y = c(1, 2, 3))
  indicator <- feature_columns(column_indicator(column_categorical_with_identity("id", num_buckets = 3)))
  expect_error(train(linear_regressor(indicator), input_fn(ids, features = "id", response = "y"),
                     steps = 1, hooks = silent_hooks()),
               "needs values in [0, 3), got 7 (1 value(s) out of range)", fixed = TRUE)
})

test_that("train() of the same model from inside its own hook is refused", {
  skip_if_no_pyhooks()
  model <- linear_regressor(feature_columns(column_numeric("drat")))
  nested <- session_run_hook(after_run = function(context, values) {
    train(model, mtcars_input(), steps = 1, hooks = silent_hooks())
  })
  expect_error(train(model, mtcars_input(), steps = 2, hooks = c(silent_hooks(), list(nested))),
               "called again from inside its own train()", fixed = TRUE)
  # the step that ran before the refusal is kept
  expect_identical(train(model, mtcars_input(), steps = 1, hooks = silent_hooks())$steps, 2L)
})

test_that("damaged checkpoint files are short errors naming model_dir and the file", {
  skip_if_no_pyhooks()
  dir <- tempfile("damaged")
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  train(model, mtcars_input(), steps = 3, hooks = silent_hooks())
  data_file <- Sys.glob(file.path(dir, "model.ckpt-3.data-*"))
  writeBin(readBin(data_file, "raw", file.size(data_file) %/% 2), data_file)
  again <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  err <- expect_error(train(again, mtcars_input(), steps = 1, hooks = silent_hooks()),
                      class = "pyhooks_python_CheckpointError")
  first <- strsplit(conditionMessage(err), "\n", fixed = TRUE)[[1]][[1]]
  expect_match(first, paste0("model_dir \"", normalizePath(dir), "\": checkpoint file ",
                             basename(data_file), " is damaged (truncated or corrupt"),
               fixed = TRUE)
  writeLines("garbage", file.path(dir, "checkpoint"))
  expect_error(train(again, mtcars_input(), steps = 1, hooks = silent_hooks()),
               "its `checkpoint` index file is not a checkpoint index", fixed = TRUE)
})

# -- real processes ----------------------------------------------------------
# Starts fault-worker.R in its own process group; returns its pid and files.
start_worker <- function(mode, model_dir, ...) {
  out <- tempfile("out")
  pid_file <- tempfile("pid")
  file.create(out)
  env <- sprintf("R_LIBS=%s RETICULATE_PYTHON=%s TF_CPP_MIN_LOG_LEVEL=2",
                 shQuote(paste(.libPaths(), collapse = ":")),
                 shQuote(reticulate::py_config()$python))
  command <- sprintf("echo $$ > %s; exec env %s %s --vanilla %s %s",
                     shQuote(pid_file), env, shQuote(file.path(R.home("bin"), "Rscript")),
                     shQuote(test_path("fault-worker.R")),
                     paste(shQuote(c(mode, model_dir, out, ...)), collapse = " "))
  system2("setsid", c("bash", "-c", shQuote(command)), stdout = tempfile("so"),
          stderr = tempfile("se"), wait = FALSE)
  wait_until(function() file.exists(pid_file) && length(readLines(pid_file)) > 0, 30)
  list(pid = as.integer(readLines(pid_file)), out = out)
}

wait_until <- function(ready, seconds = 120) {
  deadline <- Sys.time() + seconds
  while (!isTRUE(ready())) {
    if (Sys.time() > deadline) stop("timed out waiting for the worker")
    Sys.sleep(0.2)
  }
}

worker_said <- function(worker, line) any(startsWith(readLines(worker$out, warn = FALSE), line))

alive <- function(pid) isTRUE(tools::pskill(pid, 0L))

stop_worker <- function(worker) {
  if (alive(worker$pid)) tools::pskill(worker$pid, tools::SIGKILL)
  wait_until(function() !alive(worker$pid), 30)
}

latest_step <- function(dir) {
  index <- readLines(file.path(dir, "checkpoint"))[[1]]
  as.integer(sub(".*-([0-9]+)\"$", "\\1", index))
}

test_that("kill -9 mid-training: the next process resumes from the last checkpoint", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("killed")
  worker <- start_worker("train", dir, "1000")
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "run 12"))
  tools::pskill(worker$pid, tools::SIGKILL)
  wait_until(function() !alive(worker$pid), 30)
  saved <- latest_step(dir)
  expect_gte(saved, 10)
  expect_true(file.exists(file.path(dir, sprintf("hooks-%d.json", saved))))
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  loaded <- NULL
  counter <- session_run_hook(state_dict = function() list(),
                              load_state_dict = function(state) loaded <<- state)
  history <- train(model, mtcars_input(), steps = 2, # the lock is not stuck
                   hooks = c(silent_hooks(), list(hook_history_saver(every_n_step = 1), counter)))
  # the hooks' state resumed: the killed process's rows up to its checkpoint, then this one's
  # (a kill within the step of the save leaves the state written just before it, without
  # that step's row, and the worker's R hook one run short)
  kept <- sum(attr(history, "run") == 1L)
  expect_true(kept %in% c(saved, saved - 1L))
  expect_identical(history$steps, c(seq_len(kept), saved + 1:2))
  expect_identical(attr(history, "run"), c(rep(1L, kept), 2L, 2L))
  expect_equal(loaded, list(runs = kept)) # the worker's R hook, at its checkpoint
  expect_identical(attr(history, "stop")$reason, "steps")
  expect_identical(attr(history, "stop")$step, saved + 2L)
  expect_length(list.files(dir, pattern = "^hooks-"), 0L) # it ended normally
})

test_that("SIGINT to the job's process group keeps a checkpoint of every recorded step", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("interrupted")
  worker <- start_worker("train", dir, "1000")
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "run 7"))
  system2("kill", c("-INT", paste0("-", worker$pid))) # the process group, as Ctrl-C in a shell
  wait_until(function() worker_said(worker, "interrupted"), 60)
  wait_until(function() !alive(worker$pid), 60)
  history <- utils::read.csv(file.path(dir, "history.csv"))
  expect_gte(max(history$steps), 7)
  # the interrupt can land between a step's run and the history hook's after_run: that step
  # is in the checkpoint but has no row (its loss never reached the hook)
  expect_gte(latest_step(dir), max(history$steps))
  expect_lte(latest_step(dir), max(history$steps) + 1L)
})

test_that("Ctrl-C with the default hooks keeps the steps done; the next train() resumes", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("interrupted_defaults")
  worker <- start_worker("defaults", dir, "100000000")
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "run 20"))
  system2("kill", c("-INT", paste0("-", worker$pid))) # the process group, as Ctrl-C in a shell
  wait_until(function() worker_said(worker, "interrupted"), 60)
  wait_until(function() !alive(worker$pid), 60)
  saved <- latest_step(dir) # no checkpoint hook was given: train() saved at the interrupt
  expect_gte(saved, 20)
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  history <- train(model, mtcars_input(), steps = 2, hooks = silent_hooks())
  expect_identical(tail(history$steps, 1), as.integer(saved + 2))
})

test_that("a full disk: one short message with the path and the cause; the history is kept", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("full")
  worker <- start_worker("fsize", dir)
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "history "))
  lines <- readLines(worker$out)
  message <- sub("^message ", "", grep("^message ", lines, value = TRUE))
  bullets <- strsplit(message, "\\n(?=\u2139|i )", perl = TRUE)[[1]]
  first <- gsub("\\n", " ", bullets[[1]], fixed = TRUE) # cli wraps long lines
  expect_match(first, paste0("^Could not write the (history row|checkpoint) of step [0-9]+ to \"",
                             dir))
  expect_match(first, "File too large (a file size limit was reached).", fixed = TRUE)
  expect_lte(length(bullets), 3L) # the cause, "Raised by Python", where
  history <- sub("^history ", "", grep("^history ", lines, value = TRUE))
  expect_match(history, "^3(,|$)") # what was recorded before the disk filled up is kept
  expect_identical(latest_step(dir), 2L) # the last complete checkpoint
})

test_that("a child forked by a killed trainer does not keep the model_dir's lock", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("forked")
  worker <- start_worker("fork", dir, tempfile("never"))
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "holding"))
  lines <- readLines(worker$out, warn = FALSE)
  child <- as.integer(sub("^child ", "", grep("^child ", lines, value = TRUE)))
  on.exit(tools::pskill(child, tools::SIGKILL), add = TRUE)
  tools::pskill(worker$pid, tools::SIGKILL)
  wait_until(function() !alive(worker$pid), 30)
  expect_true(alive(child))
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  history <- train(model, mtcars_input(), steps = 1, hooks = silent_hooks())
  expect_identical(tail(history$steps, 1), 1L) # from the checkpoint at its start (step 0)
})

test_that("a second trainer of a model_dir is refused until the first is gone", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  dir <- tempfile("shared")
  release <- tempfile("release")
  worker <- start_worker("hold", dir, release)
  on.exit(stop_worker(worker), add = TRUE)
  wait_until(function() worker_said(worker, "holding"))
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  refused <- expect_error(train(model, mtcars_input(), steps = 1, hooks = silent_hooks()),
                          class = "pyhooks_python_ModelDirLockedError")
  expect_match(conditionMessage(refused),
               sprintf("is being trained by another process or loop (pid %d on", worker$pid),
               fixed = TRUE)
  tools::pskill(worker$pid, tools::SIGKILL)
  wait_until(function() !alive(worker$pid), 30)
  expect_length(train(model, mtcars_input(), steps = 1, hooks = silent_hooks())$steps, 1L)
})

test_that("model_dir = NULL: the temporary model directory is removed when R ends", {
  skip_if_no_pyhooks()
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(pyhooks)",
    "model <- linear_regressor(feature_columns(column_numeric('drat')))",
    "history <- train(model, input_fn(mtcars, response = 'mpg', features = 'drat'), steps = 1)",
    "cat('DIR', model_dir(model), '\\n', sep = '')",
    "cat('EXISTS', dir.exists(model_dir(model)), '\\n', sep = '')"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(script)),
                 stdout = TRUE, stderr = FALSE,
                 env = c(sprintf("R_LIBS=%s", shQuote(paste(.libPaths(), collapse = ":"))),
                         sprintf("RETICULATE_PYTHON=%s", shQuote(reticulate::py_config()$python)),
                         "TF_CPP_MIN_LOG_LEVEL=2"))
  dir <- sub("^DIR", "", grep("^DIR", out, value = TRUE))
  expect_length(dir, 1L)
  expect_true("EXISTSTRUE" %in% out) # it was there while R ran
  expect_false(dir.exists(dir))
})
