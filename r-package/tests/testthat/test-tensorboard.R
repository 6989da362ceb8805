# TensorBoard event files written by estimators, read back.

test_that("estimators write the loss, global_step/sec and eval metrics for TensorBoard", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns(),
                            config = run_config(save_summary_steps = 2, log_step_count_steps = 2))
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 5,
                         hooks = list(hook_history_saver(every_n_step = 1)))
  events <- event_values(model_dir(model))
  losses <- events[events$tag == "loss", ]
  expect_identical(losses$step, c(1, 3, 5))
  # the summary is the training loss of that step, as the history recorded it
  expect_equal(losses$value, history$total_losses[c(1, 3, 5)], tolerance = 1e-5)
  expect_identical(events$step[events$tag == "global_step/sec"], c(3, 5))
  metrics <- evaluate(model, mtcars_input())
  eval_events <- event_values(file.path(model_dir(model), "eval"))
  expect_setequal(eval_events$tag, c("average_loss", "label/mean", "loss", "prediction/mean"))
  expect_equal(eval_events$value[eval_events$tag == "average_loss"], metrics$average_loss,
               tolerance = 1e-6)
  expect_true(all(eval_events$step == 5))
})

test_that("hook_summary_saver() saves the estimator's summaries without a summary op", {
  skip_if_no_pyhooks()
  dir <- tempfile("summaries")
  model <- linear_regressor(mtcars_columns(),
                            config = run_config(save_summary_steps = 0, log_step_count_steps = 0))
  quiet_train(model, mtcars_input(num_epochs = NULL), steps = 3,
              hooks = list(hook_summary_saver(save_steps = 1, output_dir = dir)))
  events <- event_values(dir)
  expect_identical(events$step[events$tag == "loss"], c(1, 2, 3))
  expect_length(list.files(model_dir(model), pattern = "^events"), 0L)
})

test_that("tensorboard() prints the command when it does not start TensorBoard", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_message(command <- tensorboard(model, launch = FALSE), "tensorboard --logdir")
  expect_identical(command, sprintf("tensorboard --logdir %s",
                                    shQuote(normalizePath(model_dir(model)))))
  expect_identical(suppressMessages(tensorboard(model, launch = FALSE, port = 6007)),
                   paste(command, "--port 6007"))
  expect_error(tensorboard(tempfile()), "existing directory")
  expect_error(tensorboard(model, port = 2.5), "`port` must be a whole number, not 2.5")
  expect_error(tensorboard(model, launch = NA), "`launch` must be `TRUE` or `FALSE`")
  expect_error(tensorboard(model, "stop"), "Name it: `action = \"stop\"`",
               class = "pyhooks_error_argument")
  expect_error(tensorboard(model, action = "halt"), "`action` must be one of \"start\" or \"stop\"")
})

test_that("tensorboard(action = \"stop\") stops the servers of a log_dir, or all of them", {
  skip_if_no_pyhooks()
  skip_if_not(reticulate::py_module_available("tensorboard"), "tensorboard is not installed")
  model <- linear_regressor(mtcars_columns())
  other <- tempfile("board")
  dir.create(other)
  first <- suppressMessages(tensorboard(model, launch = TRUE, browse = FALSE))
  second <- suppressMessages(tensorboard(other, launch = TRUE, browse = FALSE))
  on.exit({first$stop(); second$stop()}, add = TRUE)
  expect_message(stopped <- tensorboard(tempdir(), action = "stop"),
                 "Stopped 0 TensorBoard servers on")
  expect_identical(stopped, 0L)
  expect_message(stopped <- tensorboard(model, action = "stop"), "Stopped 1 TensorBoard server on")
  expect_identical(stopped, 1L)
  expect_false(first$running)
  expect_true(second$running)
  expect_message(stopped <- tensorboard(action = "stop"), "Stopped 1 TensorBoard server\\.")
  expect_false(second$running)
  expect_error(tensorboard(tempfile(), action = "stop"), "`log_dir` must be an existing directory")
})

test_that("tensorboard() serves a trained estimator's loss and eval metrics on a loopback port", {
  skip_if_no_pyhooks()
  skip_if_not(reticulate::py_module_available("tensorboard"), "tensorboard is not installed")
  model <- linear_regressor(mtcars_columns(),
                            config = run_config(save_summary_steps = 1, log_step_count_steps = 0))
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 3,
                         hooks = list(hook_history_saver(every_n_step = 1)))
  metrics <- evaluate(model, mtcars_input())
  expect_message(board <- tensorboard(model, launch = TRUE, browse = FALSE), "TensorBoard serves")
  on.exit(board$stop(), add = TRUE)
  expect_match(board$url, "^http://127\\.0\\.0\\.1:[0-9]+/$")
  # TensorBoard's HTTP API, read until it has loaded the files (at most 2 minutes)
  read_json <- function(path) {
    connection <- url(paste0(board$url, path))
    on.exit(close(connection))
    text <- paste(readLines(connection, warn = FALSE), collapse = "")
    reticulate::import("json")$loads(text)
  }
  deadline <- Sys.time() + 120
  repeat {
    tags <- read_json("data/plugin/scalars/tags")
    if (!is.null(tags[["eval"]][["average_loss"]]) || Sys.time() > deadline) break
    Sys.sleep(0.5)
  }
  expect_setequal(names(tags[["."]]), "loss")
  expect_true("average_loss" %in% names(tags[["eval"]]))
  losses <- read_json("data/plugin/scalars/scalars?run=.&tag=loss")
  expect_identical(vapply(losses, function(row) as.integer(row[[2]]), 1L), 1:3)
  expect_equal(vapply(losses, function(row) row[[3]], 1), history$total_losses, tolerance = 1e-5)
  evals <- read_json("data/plugin/scalars/scalars?run=eval&tag=average_loss")
  expect_equal(evals[[1]][[3]], metrics$average_loss, tolerance = 1e-6)
  board$stop()
  expect_false(board$running)
})
