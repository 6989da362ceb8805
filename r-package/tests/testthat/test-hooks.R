# Built-in hooks: construction, argument errors from R and from Python, and
# what each does during a real training run.

test_that("hook_checkpoint_saver() writes checkpoints", {
  skip_if_no_pyhooks()
  dir <- tempfile("ckpt")
  hook <- hook_checkpoint_saver(dir, save_steps = 1)
  expect_s3_class(hook, "pyhooks.hooks.checkpoint_saver.CheckpointSaverHook")
  suppressMessages(quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook)))
  files <- list.files(dir)
  expect_true("checkpoint" %in% files)
  expect_true(any(grepl("^model\\.ckpt-2\\.index$", files)))
  expect_true("graph.pbtxt" %in% files)
})

test_that("hook_checkpoint_saver() argument errors are clear", {
  skip_if_no_pyhooks()
  expect_error(hook_checkpoint_saver(), "`checkpoint_dir` is absent")
  expect_error(hook_checkpoint_saver(NULL, save_steps = 1), "checkpoint_dir", class = "pyhooks_python_error")
  expect_error(hook_checkpoint_saver(tempfile(), save_steps = 1.5), "`save_steps` must be a whole number, not 1.5")
  expect_error(hook_checkpoint_saver(tempfile(), save_steps = 1, save_secs = 1), class = "pyhooks_python_error")
  expect_error(hook_checkpoint_saver(tempfile(), save_steps = -2), "save_steps")
  expect_error(hook_checkpoint_saver(tempfile()), "Give one of `save_secs` and `save_steps`.",
               fixed = TRUE, class = "pyhooks_python_error")
  expect_error(hook_summary_saver(output_dir = tempfile(), summary_op = "s"),
               "Give one of `save_secs` and `save_steps`.", fixed = TRUE)
})

test_that("hook_global_step_waiter() lets training start, or times out", {
  skip_if_no_pyhooks()
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                         hooks = list(hook_global_step_waiter(wait_until_step = 0)))
  expect_identical(tail(history$steps, 1), 2L)
  expect_error(
    suppressMessages(quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                hooks = list(hook_global_step_waiter(wait_until_step = 50, timeout_secs = 0.1)))),
    "waiting for step 50", class = "pyhooks_python_error"
  )
  expect_error(hook_global_step_waiter(-1), "`wait_until_step` must be zero or more, got -1")
  expect_error(hook_global_step_waiter(), "`wait_until_step` is absent")
  expect_error(hook_global_step_waiter(1, timeout_secs = 0), "timeout_secs")
})

test_that("hook_history_saver() records every n steps and writes a CSV", {
  skip_if_no_pyhooks()
  path <- tempfile(fileext = ".csv")
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 4,
                         hooks = list(hook_history_saver(every_n_step = 2, path = path)))
  expect_identical(history$steps, c(2L, 4L))
  csv <- utils::read.csv(path)
  expect_named(csv, c("mean_losses", "total_losses", "steps", "run"))
  expect_equal(csv$run, c(1, 1))
  expect_equal(csv$mean_losses, history$mean_losses, tolerance = 1e-6)
  expect_equal(csv$steps, c(2, 4))
})

test_that("hook_history_saver() records extra metrics", {
  skip_if_no_pyhooks()
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                         hooks = list(hook_history_saver(every_n_step = 1,
                                                         metrics = list(loss = "training_loss:0"))))
  expect_named(history, c("mean_losses", "total_losses", "steps", "loss"))
  expect_equal(history$loss, history$total_losses, tolerance = 1e-4)
})

test_that("hook_history_saver() argument errors are clear", {
  skip_if_no_pyhooks()
  expect_error(hook_history_saver(every_n_step = 2.5), "`every_n_step` must be a whole number, not 2.5")
  expect_error(hook_history_saver(every_n_step = 0), "`every_n_step` must be positive, got 0")
  expect_error(hook_history_saver(every_n_step = -3), "`every_n_step` must be positive, got -3")
  expect_error(hook_history_saver(every_n_step = NULL), "`every_n_step` is required")
  expect_error(hook_history_saver(every_n_step = "often"), "`every_n_step` must be a whole number, got \"often\" (character)", fixed = TRUE)
  expect_error(hook_history_saver(every_n_step = NA), "`every_n_step` must be a whole number, not NA",
               class = "pyhooks_error_argument")
  expect_error(hook_history_saver(path = NA), "`path` must not be `NA`", class = "pyhooks_error_argument")
  expect_error(hook_history_saver(path = 3), "`path` must be a file path")
  expect_snapshot(hook_history_saver(every_n_step = 0), error = TRUE)
})

test_that("hook_logging_tensor() logs to the R console", {
  skip_if_no_pyhooks()
  hook <- hook_logging_tensor(list(loss = "training_loss"), every_n_iter = 1)
  messages <- character()
  withCallingHandlers(
    quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook)),
    message = function(m) {
      messages <<- c(messages, conditionMessage(m))
      invokeRestart("muffleMessage")
    }
  )
  expect_length(grep("^INFO:pyhooks:loss = [0-9.]+", messages), 2L)
})

test_that("hook_logging_tensor() takes an R formatter", {
  skip_if_no_pyhooks()
  hook <- hook_logging_tensor(list(loss = "training_loss"), at_end = TRUE,
                              formatter = function(values) sprintf("final loss %.1f", values$loss))
  expect_message(
    quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook)),
    "final loss [0-9]+\\.[0-9]"
  )
  # an error in it: an R error naming it, the formatter's condition as parent
  failing <- hook_logging_tensor(list(loss = "training_loss"), every_n_iter = 1,
                                 formatter = function(values) rlang::abort("no format",
                                                                           class = "my_error"))
  err <- expect_error(quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                                  hooks = list(failing)), class = "pyhooks_callback_error")
  expect_identical(err$callback, "formatter")
  expect_match(conditionMessage(err), "the `formatter` of `hook_logging_tensor()`", fixed = TRUE)
  expect_s3_class(err$parent, "my_error")
  expect_error(hook_logging_tensor(list(loss = "training_loss")), class = "pyhooks_python_error")
  expect_error(hook_logging_tensor(list(loss = "training_loss"), every_n_iter = 0.5), "whole number")
  expect_error(hook_logging_tensor(), "`tensors` is absent")
})

test_that("hook_nan_tensor() watches a loss; a non-finite loss fails training", {
  skip_if_no_pyhooks()
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                         hooks = list(hook_nan_tensor("training_loss:0")))
  expect_identical(tail(history$steps, 1), 2L)
  huge <- data.frame(x = c(1, 2, 3, 4), y = c(1e30, 1e30, 1e30, 1e30))
  input <- input_fn(huge, features = "x", response = "y", batch_size = 4L)
  model <- linear_regressor(feature_columns(column_numeric("x")), optimizer = "SGD")
  err <- expect_error(suppressMessages(quiet_train(model, input, steps = 3)),
                      class = "pyhooks_python_NanLossDuringTrainingError")
  expect_match(conditionMessage(err), "loss")
  expect_s3_class(err$history, "pyhooks_history")
  # in warning mode the hook's Python warning reaches R as an R warning, and the
  # run stops without an error: the caller's hook replaces the estimator's own. The
  # diverging batch updated nothing, so the model stays at step 0 (its last good step).
  warn_only <- list(hook_nan_tensor("training_loss:0", fail_on_nan_loss = FALSE))
  expect_warning(
    stopped <- suppressMessages(quiet_train(model, input, steps = 3, hooks = warn_only)),
    "Model diverged with loss = inf at step 0. Stopping training.",
    class = "pyhooks_python_NanLossWarning", fixed = TRUE
  )
  expect_identical(tail(stopped$steps, 1), 0L)
  expect_error(hook_nan_tensor(NULL), "`loss_tensor` must be a tensor or a tensor name, got NULL")
  expect_error(hook_nan_tensor("training_loss:0", fail_on_nan_loss = "yes"), "fail_on_nan_loss")
})

test_that("hook_progress_bar() writes plain lines as R messages, not to standard output", {
  skip_if_no_pyhooks()
  stdout <- capture.output(messages <- capture_messages(
    train(linear_regressor(mtcars_columns()), mtcars_input(), steps = 2,
          hooks = list(hook_progress_bar(mode = "plain")))
  ))
  expect_identical(stdout, character())
  out <- strsplit(paste(messages, collapse = ""), "\n", fixed = TRUE)[[1]]
  expect_identical(length(out), 2L)
  expect_match(out[[2]], "^Training 2/2 \\[={38}\\] - ETA: 0s - loss: [0-9]+\\.[0-9]{2}$")
  expect_false(any(grepl("\r", out, fixed = TRUE)))
})

test_that("hook_progress_bar() redraws in place in dynamic mode", {
  skip_if_no_pyhooks()
  written <- character()
  hook <- hook_progress_bar(label = "Fitting", mode = "dynamic", min_interval = 0,
                            writer = function(text) written <<- c(written, text))
  quiet_train(linear_regressor(mtcars_columns()), steps = 3, hooks = list(hook))
  expect_true(all(startsWith(written[-length(written)], "\r")))
  expect_match(paste(written, collapse = ""), "Fitting 3/3 \\[={38}\\]")
  expect_match(written[[length(written)]], "\n$")
})

test_that("hook_progress_bar() says when training stopped early", {
  skip_if_no_pyhooks()
  expect_message(
    train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL), steps = 10,
          hooks = list(hook_progress_bar(mode = "plain"), hook_stop_at_step(num_steps = 3))),
    "Training stopped by a hook after 3 of 10 steps"
  )
})

test_that("hook_progress_bar() argument errors are clear", {
  skip_if_no_pyhooks()
  expect_error(hook_progress_bar(mode = "fancy"), "`mode` must be \"dynamic\", \"plain\" or NULL, got \"fancy\"", fixed = TRUE)
  expect_error(hook_progress_bar(label = 1), "`label` must be a string")
  expect_error(hook_progress_bar(total = 2.5), "`total` must be a whole number, not 2.5")
  expect_error(hook_progress_bar(writer = 3), "`writer` must be")
})

test_that("hook_step_counter() logs steps per second and writes a summary", {
  skip_if_no_pyhooks()
  dir <- tempfile("steps")
  expect_message(
    quiet_train(linear_regressor(mtcars_columns()), steps = 3,
                hooks = list(hook_step_counter(every_n_steps = 1, output_dir = dir))),
    "global_step/sec"
  )
  expect_true(any(grepl("tfevents", list.files(dir))))
  expect_error(hook_step_counter(every_n_steps = NULL), "exactly one of every_n_steps and every_n_secs")
  expect_error(hook_step_counter(every_n_steps = 1.5), "whole number")
})

test_that("hook_stop_at_step() stops training", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                         hooks = list(hook_stop_at_step(num_steps = 3),
                                      hook_history_saver(every_n_step = 1)))
  expect_identical(history$steps, 1:3)
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                         hooks = list(hook_stop_at_step(last_step = 5),
                                      hook_history_saver(every_n_step = 1)))
  expect_identical(history$steps, 4:5)
  expect_error(hook_stop_at_step(), "One of num_steps or last_step must be specified")
  expect_error(hook_stop_at_step(num_steps = 1, last_step = 2), class = "pyhooks_python_error")
  expect_error(hook_stop_at_step(num_steps = 2.5), "`num_steps` must be a whole number, not 2.5")
})

test_that("hook_summary_saver() writes event files", {
  skip_if_no_pyhooks()
  dir <- tempfile("summaries")
  tf <- reticulate::import("tensorflow")
  hook <- hook_summary_saver(save_steps = 1, output_dir = dir,
                             scaffold = tf$compat$v1$train$Scaffold())
  expect_s3_class(hook, "pyhooks.hooks.summary_saver.SummarySaverHook")
  quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook))
  expect_true(any(grepl("tfevents", list.files(dir))))
  # without a summary op it saves the estimator's (test-tensorboard.R); both are an error
  expect_error(hook_summary_saver(save_steps = 1, output_dir = dir,
                                  scaffold = tf$compat$v1$train$Scaffold(),
                                  summary_op = tf$constant("x")),
               "Exactly one of scaffold or summary_op must be provided")
})

test_that("hook_profiler() writes Chrome trace timelines", {
  skip_if_no_pyhooks()
  dir <- tempfile("profile")
  suppressMessages(quiet_train(linear_regressor(mtcars_columns()), steps = 2,
                               hooks = list(hook_profiler(save_steps = 1, output_dir = dir))))
  timelines <- list.files(dir, pattern = "^timeline-[0-9]+\\.json$")
  expect_gte(length(timelines), 1L)
  expect_match(readLines(file.path(dir, timelines[[1]]), warn = FALSE)[[1]], "traceEvents|\\{")
  expect_error(hook_profiler(), "Exactly one of `save_steps` and `save_secs` must be set")
  expect_error(hook_profiler(save_steps = 0.5), "whole number")
})

test_that("hook_configure_gcs() hides credentials and sets the cache for the run", {
  skip_if_no_pyhooks()
  secret <- '{"type": "authorized_user", "refresh_token": "TOPSECRET"}'
  hook <- hook_configure_gcs(credentials = secret, block_cache = list(max_staleness = 60))
  expect_false(grepl("TOPSECRET", reticulate::py_repr(hook), fixed = TRUE))
  seen <- NULL
  spy <- session_run_hook(after_run = function(context, values) {
    seen <<- Sys.getenv(c("GCS_READ_CACHE_MAX_STALENESS", "GOOGLE_APPLICATION_CREDENTIALS"))
  })
  before <- Sys.getenv("GCS_READ_CACHE_MAX_STALENESS", unset = NA)
  quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(hook, spy))
  expect_identical(seen[[1]], "60")
  expect_true(nzchar(seen[[2]]))
  expect_identical(Sys.getenv("GCS_READ_CACHE_MAX_STALENESS", unset = NA), before)
  expect_error(hook_configure_gcs(block_cache = data.frame(a = 1)),
               "`block_cache` must be a named list of block_size, max_bytes, or max_staleness, not a data frame named \"a\"")
  expect_error(hook_configure_gcs(block_cache = list(max_byte = 1)), "named \"max_byte\"")
  expect_error(hook_configure_gcs(block_cache = list(1)), "not a list named \"\"")
  err <- expect_error(hook_configure_gcs(credentials = "{TOPSECRET"), "not a well formed JSON string")
  expect_false(grepl("TOPSECRET", conditionMessage(err), fixed = TRUE))
})

test_that("hook_final_ops() evaluates tensors at the end", {
  skip_if_no_pyhooks()
  hook <- hook_final_ops(list(loss = "training_loss:0"))
  quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook))
  values <- pyhooks:::py_value(hook$final_ops_values)
  expect_true(is.numeric(values$loss) && values$loss > 0)
  expect_error(hook_final_ops("training_loss:0", final_ops_feed_dict = "x"), "`final_ops_feed_dict` must be a named list or NULL")
  expect_error(hook_final_ops(), "`final_ops` is absent")
})

test_that("hook_feed_fn() calls the R function before every step", {
  skip_if_no_pyhooks()
  calls <- 0
  hook <- hook_feed_fn(function() {
    calls <<- calls + 1
    NULL
  })
  quiet_train(linear_regressor(mtcars_columns()), steps = 3, hooks = list(hook))
  expect_identical(calls, 3)
  expect_error(hook_feed_fn(42), "`feed_fn` must be callable")
  # an error in it: an R error naming it, with the function's condition as parent
  failing <- hook_feed_fn(function() {
    calls <<- calls + 1
    if (calls == 5) stop("no feed")
    NULL
  })
  err <- expect_error(quiet_train(linear_regressor(mtcars_columns()), steps = 3,
                                  hooks = list(failing)), class = "pyhooks_callback_error")
  expect_identical(err$callback, "feed_fn")
  expect_match(conditionMessage(err), "the `feed_fn` of `hook_feed_fn()`", fixed = TRUE)
  expect_identical(conditionMessage(err$parent), "no feed")
  expect_identical(err$stop$step, 1L) # its first step trained, the second not
})

test_that("hook_profiler() writes its traces without TensorFlow's C++ log lines, in a fresh R", {
  skip_on_cran()
  skip_if_no_pyhooks()
  setup_python()
  dir <- tempfile("profile")
  out <- fresh_rscript(c(
    "library(pyhooks)",
    "input <- input_fn(mtcars, response = 'mpg', features = 'drat', batch_size = 8L)",
    "model <- linear_regressor(feature_columns(column_numeric('drat')))",
    sprintf("hook <- hook_profiler(save_steps = 2, output_dir = %s)", deparse(dir)),
    "invisible(train(model, input, steps = 4, hooks = list(hook)))",
    sprintf("cat('timelines:', sort(list.files(%s, pattern = '^timeline')), '\\n')", deparse(dir))
  ))
  expect_match(out, "timelines: timeline-2.json timeline-4.json", fixed = TRUE)
  # TensorFlow's C++ lines look like "I0000 00:00:1796163556.688111   18351 profiler_session.cc:117]"
  expect_no_match(out, "(^|\n)[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [a-z_]+\\.cc:[0-9]+\\]", perl = TRUE)
  expect_no_match(out, "profiler_session")
})

test_that("errors say named list where Python says dict", {
  skip_if_no_pyhooks()
  err <- expect_error(hook_logging_tensor(tensors = TRUE, every_n_iter = 1))
  expect_match(conditionMessage(err), "`tensors` must be a named list, a list or a tensor")
  expect_no_match(conditionMessage(err), "\\bdict\\b")
})

# --------------------------------------------------------------------------- early stopping
early_stopped <- function(hook_of, max_steps = 300) {
  model <- linear_regressor(mtcars_columns(), config = run_config(save_checkpoints_steps = 10))
  messages <- character()
  history <- withCallingHandlers(
    train_and_evaluate(
      model,
      train_spec(mtcars_input(num_epochs = NULL), max_steps = max_steps,
                 hooks = list(hook_of(model), hook_progress_bar(writer = function(text) NULL))),
      eval_spec(mtcars_input(), steps = NULL, start_delay_secs = 0, throttle_secs = 0)
    ),
    message = function(m) {
      messages <<- c(messages, conditionMessage(m))
      invokeRestart("muffleMessage")
    }
  )
  list(history = history, messages = messages,
       events = event_values(file.path(model_dir(model), "eval")))
}

test_that("hook_stop_if_lower() ends train_and_evaluate() once an evaluation is low enough", {
  skip_if_no_pyhooks()
  run <- early_stopped(function(model) {
    hook_stop_if_lower(model, "average_loss", 100, run_every_steps = 5)
  })
  losses <- run$events[run$events$tag == "average_loss", ]
  crossed <- min(losses$step[losses$value < 100])
  stopped <- max(run$history$steps)
  expect_gt(stopped, crossed)
  expect_lte(stopped, crossed + 5) # the next check after that evaluation
  expect_lt(stopped, 300)
  expect_equal(max(losses$step), stopped) # the final checkpoint evaluated, as usual
  # the reason reaches R once, as an INFO line
  expect_length(grep("Requesting early stopping", run$messages, fixed = TRUE), 1L)
  expect_length(grep("^INFO:pyhooks:Early stopping: at step [0-9]+, average_loss", run$messages), 1L)
})

test_that("hook_stop_if_no_decrease() and its kin stop as their rules say", {
  skip_if_no_pyhooks()
  # a loss that keeps falling: no stop after 200 steps without a decrease
  kept_on <- early_stopped(function(model) {
    hook_stop_if_no_decrease(model, "average_loss", 200, run_every_steps = 5)
  }, max_steps = 60)
  expect_identical(max(kept_on$history$steps), 60L)
  # 0 steps without a decrease allowed: the first evaluation stops it
  at_once <- early_stopped(function(model) {
    hook_stop_if_no_increase(model, "average_loss", 0, run_every_steps = 1)
  })
  expect_lte(max(at_once$history$steps), 11L)
  higher <- early_stopped(function(model) {
    hook_stop_if_higher(model, "label/mean", 0, run_every_steps = 1)
  })
  expect_lte(max(higher$history$steps), 11L)
})

test_that("an early-stopping hook with no evaluation to read says so in an R warning", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_warning(
    quiet_train(model, steps = 3,
                hooks = list(hook_stop_if_no_decrease(model, "loss", 10, run_every_steps = 1))),
    "hook_stop_if_no_decrease: .* has no evaluation, so it could not stop training",
    class = "pyhooks_python_PyhooksWarning"
  )
  # the rule's errors name the R function too
  expect_error(early_stopped(function(model) hook_stop_if_higher(model, "auc", 0.5,
                                                                  run_every_steps = 1),
                             max_steps = 12),
               "hook_stop_if_higher: the evaluation at step 10 .* has no metric \"auc\"")
})

test_that("the early-stopping hooks check their arguments in R words", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_error(hook_stop_if_lower(mtcars, "loss", 1), "`estimator` must be an estimator",
               class = "pyhooks_error_argument")
  expect_error(hook_stop_if_no_decrease(model, "loss"), "max_steps_without_decrease")
  expect_error(hook_stop_if_no_decrease(model, "loss", 2.5), "whole number",
               class = "pyhooks_error_argument")
  expect_error(hook_stop_if_lower(model, "loss", 1, run_every_secs = 60, run_every_steps = 10),
               "Exactly one of `run_every_secs` and `run_every_steps`")
  expect_error(hook_stop_if_higher(model, "", 1), "`metric_name` must be")
  expect_error(hook_stop_if_higher(model, "loss", "a"), "`threshold` must be a number")
  expect_error(hook_stop_if_higher(model, "loss", NA), "`threshold` must not be `NA`")
  # by steps when only run_every_steps is given; every 60 seconds by default
  expect_s3_class(hook_stop_if_lower(model, "loss", 1, run_every_steps = 10),
                  "pyhooks.hooks.early_stopping.EarlyStoppingHook")
  expect_match(format(hook_stop_if_no_increase(model, "accuracy", 100)),
               "^<hook_stop_if_no_increase: estimator = .*, metric_name = \"accuracy\"")
})
