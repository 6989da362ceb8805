# Why train() stopped (attr(history, "stop"), cnd$stop), and hook state that resumes with the
# model after an interrupted call. The kill -9 case is in test-faults.R.

test_that("the history says steps reached, input exhausted, or which hook asked", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 3)
  stop <- attr(history, "stop")
  expect_s3_class(stop, "pyhooks_stop")
  expect_identical(stop[c("reason", "step")], list(reason = "steps", step = 3L))
  expect_null(stop$hook)
  expect_false(any(grepl("Stopped", capture.output(print(history)))))
  expect_true("Stopped: steps reached at step 3" %in% capture.output(print(summary(history))))

  history <- quiet_train(model, mtcars_input(), steps = 100) # one epoch: 4 batches
  expect_identical(attr(history, "stop")[c("reason", "step")],
                   list(reason = "end_of_input", step = 7L))
  expect_identical(tail(capture.output(print(history)), 1), "Stopped: input exhausted at step 7")

  n <- 0
  asks <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 2) context$request_stop()
  })
  stop <- attr(quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                           hooks = list(asks)), "stop")
  expect_identical(stop[c("reason", "step", "hook")],
                   list(reason = "hook", step = 9L, hook = "session_run_hook()"))
  expect_identical(format(stop), "stopped by a hook at step 9: session_run_hook()")
})

test_that("a loss that is not finite gives its step and value, as a stop and as an error", {
  skip_if_no_pyhooks()
  huge <- data.frame(x = c(1, 2, 3, 4), y = c(1e30, 1e30, 1e30, 1e30))
  input <- input_fn(huge, features = "x", response = "y", batch_size = 4L)
  model <- linear_regressor(feature_columns(column_numeric("x")), optimizer = "SGD")
  warn_only <- list(hook_nan_tensor("training_loss:0", fail_on_nan_loss = FALSE))
  stopped <- suppressWarnings(suppressMessages(quiet_train(model, input, steps = 3,
                                                           hooks = warn_only)))
  stop <- attr(stopped, "stop")
  expect_identical(stop[c("reason", "step", "hook")],
                   list(reason = "nan", step = 0L, hook = "NanTensorHook"))
  expect_identical(stop$value, Inf)
  expect_identical(format(stop), "loss not finite at step 0 (loss = Inf): NanTensorHook")
  err <- expect_error(suppressMessages(quiet_train(model, input, steps = 3)),
                      class = "pyhooks_python_NanLossDuringTrainingError")
  expect_identical(err$stop[c("reason", "step", "hook", "method")],
                   list(reason = "nan", step = 0L, hook = "NanTensorHook", method = "after_run"))
  expect_identical(attr(err$history, "stop"), err$stop)
})

test_that("an error and an interrupt name the hook and the method in cnd$stop", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  n <- 0
  failing <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 2) stop("stop here")
  })
  err <- expect_error(quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                                  hooks = list(failing)), "stop here")
  expect_identical(err$stop[c("reason", "step", "hook", "method")],
                   list(reason = "error", step = 2L, hook = "session_run_hook()",
                        method = "after_run"))
  expect_match(err$stop$message, "stop here")
  expect_identical(format(err$stop), "error at step 2 in after_run() of session_run_hook()")
  n <- 0
  interrupting <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 3) rlang::interrupt()
  })
  cnd <- tryCatch(quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                              hooks = list(interrupting)),
                  interrupt = function(cnd) cnd)
  expect_s3_class(cnd, "pyhooks_interrupt")
  expect_identical(cnd$stop[c("reason", "step", "hook", "method")],
                   list(reason = "interrupt", step = 5L, hook = "session_run_hook()",
                        method = "after_run"))
})

test_that("an R hook's state and the history resume after an interrupted call", {
  skip_if_no_pyhooks()
  dir <- tempfile("resume")
  model <- linear_regressor(mtcars_columns(), model_dir = dir)
  input <- mtcars_input(num_epochs = NULL)
  counting <- function(fail_at = Inf) {
    seen <- 0
    session_run_hook(
      after_run = function(context, values) {
        seen <<- seen + 1
        if (seen == fail_at) stop("failed")
      },
      end = function(session) message("seen ", seen),
      state_dict = function() list(seen = seen, label = "mine"),
      load_state_dict = function(state) seen <<- state$seen,
      state_key = "counter"
    )
  }
  expect_error(quiet_train(model, input, steps = 10,
                           hooks = list(hook_history_saver(every_n_step = 1), counting(3))),
               "failed")
  expect_true(file.exists(file.path(dir, "hooks-3.json")))
  expect_message(
    history <- quiet_train(model, input, steps = 2,
                           hooks = list(hook_history_saver(every_n_step = 1), counting())),
    "seen 5"
  )
  expect_identical(history$steps, 1:5)
  expect_identical(attr(history, "run"), c(1L, 1L, 1L, 2L, 2L))
  expect_true("Runs: 2 (resumed after an interruption)" %in%
                capture.output(print(summary(history))))
  expect_null(attr(as.data.frame(history), "run"))
  expect_null(attr(as.data.frame(history), "stop"))
  # a call after one that ended normally starts afresh
  expect_message(fresh <- quiet_train(model, input, steps = 1, hooks = list(counting())),
                 "seen 1")
  expect_identical(attr(fresh, "run"), 1L)
})

test_that("the history resumes from checkpoints of another base name", {
  skip_if_no_pyhooks()
  dir <- tempfile("basename")
  model <- linear_regressor(mtcars_columns(), model_dir = dir)
  input <- mtcars_input(num_epochs = NULL)
  hooks <- function(...) {
    list(hook_checkpoint_saver(dir, save_steps = 2, checkpoint_basename = "my.ckpt"),
         hook_history_saver(every_n_step = 1), ...)
  }
  n <- 0
  failing <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 3) stop("failed")
  })
  expect_error(suppressMessages(quiet_train(model, input, steps = 10, hooks = hooks(failing))),
               "failed")  # the saver's log lines are messages
  expect_true(file.exists(file.path(dir, "my.ckpt-3.index")))
  expect_true(file.exists(file.path(dir, "hooks-3.json")))
  history <- suppressMessages(quiet_train(model, input, steps = 2, hooks = hooks()))
  expect_identical(history$steps, 1:5)
  expect_identical(attr(history, "run"), c(1L, 1L, 1L, 2L, 2L))
})

test_that("session_run_hook()'s state arguments are checked", {
  skip_if_no_pyhooks()
  expect_error(session_run_hook(state_dict = function() list()),
               "`state_dict` and `load_state_dict` go together", class = "pyhooks_error_argument")
  expect_error(session_run_hook(state_dict = function() 1, load_state_dict = function(s) NULL,
                                state_key = 3),
               "`state_key` must be a non-empty string", class = "pyhooks_error_argument")
  expect_error(session_run_hook(state_dict = 1, load_state_dict = function(s) NULL),
               "`state_dict` must be a function", class = "pyhooks_error_argument")
  same <- function() session_run_hook(state_dict = function() list(),
                                      load_state_dict = function(state) NULL, state_key = "a")
  expect_error(quiet_train(linear_regressor(mtcars_columns()), hooks = list(same(), same())),
               "keep their state under one key, \"a\"", class = "pyhooks_python_ValueError")
})
