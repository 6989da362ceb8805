# export_savedmodel(), train_and_evaluate(), checkpoint_path, simplify, keys.

test_that("export_savedmodel() writes a SavedModel serving the same predictions", {
  skip_if_no_pyhooks()
  data <- data.frame(petal = iris$Petal.Length, species = iris$Species)
  model <- dnn_classifier(hidden_units = 3, n_classes = 3,
                          feature_columns = feature_columns(column_numeric("petal")),
                          label_vocabulary = levels(iris$Species))
  quiet_train(model, input_fn(data, species ~ petal, batch_size = 10), steps = 3)
  path <- export_savedmodel(model, tempfile("export"))
  expect_true(file.exists(file.path(path, "saved_model.pb")))
  tf_module <- reticulate::import("tensorflow")
  serve <- tf_module$saved_model$load(path)$signatures[["serving_default"]]
  served <- serve(petal = tf_module$constant(data$petal, dtype = "float32"))
  rows <- function(tensor) tensor$numpy() # an R matrix (reticulate converts NumPy arrays)
  expected <- predict(model, input_fn(data, species ~ petal))
  expect_equal(rows(served$probabilities), unname(unclass(expected$probabilities)),
               tolerance = 1e-6)
  expect_identical(as.integer(rows(served$class_ids)), as.integer(expected$class_ids))
  expect_error(export_savedmodel(linear_regressor(mtcars_columns()), tempfile()),
               "train the model before")
})

test_that("export_savedmodel() takes overwrite and versioned as the tensorflow package did", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 2)
  has_saved_model <- function(dir) {
    all(file.exists(file.path(dir, c("saved_model.pb", "variables"))))
  }
  # default (overwrite = TRUE, versioned = FALSE): the SavedModel in the directory itself
  target <- file.path(tempfile("export-"), "model")
  expect_identical(export_savedmodel(model, target), normalizePath(target))
  expect_true(has_saved_model(target))
  writeLines("old", file.path(target, "stale.txt"))
  quiet_train(model, steps = 1)
  export_savedmodel(model, target)  # replaced by the newer export, nothing of the old left
  expect_false(file.exists(file.path(target, "stale.txt")))
  expect_true(has_saved_model(target))
  expect_identical(list.files(dirname(target), all.files = TRUE, no.. = TRUE), "model")
  # overwrite = FALSE: versioned, as tfestimators' own test exports
  base <- file.path(tempfile("exports-"), "testthat-save")
  first <- export_savedmodel(model, base, overwrite = FALSE)
  expect_identical(dirname(first), normalizePath(base))
  expect_match(basename(first), "^[0-9]+$")
  second <- export_savedmodel(model, base, overwrite = FALSE)
  expect_false(identical(first, second))
  expect_true(has_saved_model(first) && has_saved_model(second))
  # neither replaced nor versioned: an existing directory is an error
  expect_error(export_savedmodel(model, target, overwrite = FALSE, versioned = FALSE),
               "already exists: give overwrite = TRUE to replace it, or versioned = TRUE")
  # a directory holding something else is never deleted
  precious <- tempfile("not-a-model-")
  dir.create(precious)
  writeLines("keep me", file.path(precious, "notes.txt"))
  expect_error(export_savedmodel(model, precious), "holds no SavedModel: it is not replaced")
  expect_identical(readLines(file.path(precious, "notes.txt")), "keep me")
  expect_error(export_savedmodel(model, target, overwrite = NA), "`overwrite` must not be `NA`")
  expect_error(export_savedmodel(model, target, serving_input_receiver_fn = function() 1),
               "`serving_input_receiver_fn` must be `NULL`")
  expect_error(export_savedmodel(model, target, unknown = 1), "must be empty")
})

test_that("predict() and evaluate() take a checkpoint_path; evaluate() a simplify", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 1)
  first <- latest_checkpoint(model)
  quiet_train(model, steps = 3)
  expect_identical(evaluate(model, mtcars_input(), checkpoint_path = first)$global_step, 1L)
  old <- predict(model, mtcars_input(), checkpoint_path = first)
  new <- predict(model, mtcars_input())
  expect_false(isTRUE(all.equal(old, new)))  # one output each: vectors
  # the next call is back on the latest checkpoint
  expect_identical(evaluate(model, mtcars_input())$global_step, 4L)
  metrics <- evaluate(model, mtcars_input(), simplify = FALSE)
  expect_type(metrics, "list")
  expect_identical(metrics$global_step, 4L)
  expect_error(predict(model, mtcars_input(), checkpoint_path = tempfile()), "not a checkpoint")
})

test_that("train_and_evaluate() evaluates after checkpoint saves as throttled, and at the end", {
  skip_if_no_pyhooks()
  evaluated <- function(...) {
    model <- linear_regressor(mtcars_columns(), config = run_config(save_checkpoints_steps = 3))
    history <- suppressMessages(train_and_evaluate(
      model,
      train_spec(mtcars_input(num_epochs = NULL), max_steps = 10,
                 hooks = list(hook_progress_bar(writer = function(text) NULL))),
      eval_spec(mtcars_input(), steps = NULL, name = "check", ...)
    ))
    expect_s3_class(history, "pyhooks_history")
    events <- event_values(file.path(model_dir(model), "eval_check"))
    # NA where no evaluation ran (NaN would be an evaluation's value)
    expect_false(any(is.nan(history$eval_average_loss)))
    steps <- history$steps[!is.na(history$eval_average_loss)]
    # the same evaluations in the history and in TensorBoard's files
    expect_identical(steps, as.integer(events$step[events$tag == "average_loss"]))
    expect_equal(history$eval_average_loss[!is.na(history$eval_average_loss)],
                 events$value[events$tag == "average_loss"], tolerance = 1e-6)
    final <- evaluate(model, mtcars_input())
    expect_equal(history$eval_average_loss[nrow(history)], final$average_loss, tolerance = 1e-6)
    # max_steps reached already: one evaluation, in a row whose training columns are NA numbers
    again <- suppressMessages(train_and_evaluate(
      model, train_spec(mtcars_input(num_epochs = NULL), max_steps = 10),
      eval_spec(mtcars_input(), steps = NULL, name = "check")
    ))
    expect_identical(again$steps, 10L)
    expect_identical(again$mean_losses, NA_real_)
    steps
  }
  # the real clock cannot reach 10^6 seconds here: no flaky timing
  expect_identical(evaluated(throttle_secs = 0, start_delay_secs = 0), c(3L, 6L, 9L, 10L))
  expect_identical(evaluated(throttle_secs = 1e6, start_delay_secs = 0), c(3L, 10L))
  expect_identical(evaluated(throttle_secs = 0, start_delay_secs = 1e6), 10L)
})

test_that("train_and_evaluate() and its specs refuse bad arguments", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_error(train_and_evaluate(model, list(), eval_spec(mtcars_input())), "train_spec")
  expect_error(train_spec(mtcars), "must be made by")
  # checked when the spec is made, not once training has begun
  expect_error(train_spec(mtcars_input(), max_steps = -1), "`max_steps` must be positive, got -1.",
               fixed = TRUE)
  expect_error(eval_spec(mtcars_input(), throttle_secs = -1), "throttle_secs")
  expect_error(eval_spec(mtcars_input(), start_delay_secs = NA), "start_delay_secs")
  expect_error(run_config(save_checkpoints_steps = 2, save_checkpoints_secs = 60),
               "at most one of")
})

test_that("prediction_keys() and metric_keys() name what predict() and evaluate() give", {
  skip_if_no_pyhooks()
  model <- linear_classifier(feature_columns(column_numeric("wt")))
  input <- input_fn(mtcars, am ~ wt, batch_size = 8)
  quiet_train(model, input, steps = 2)
  expect_setequal(names(predict(model, input)),
                  unlist(prediction_keys()[c("CLASSES", "CLASS_IDS", "LOGISTIC", "LOGITS",
                                             "PROBABILITIES")]))
  expect_setequal(setdiff(names(evaluate(model, input)), "global_step"), unlist(metric_keys()))
})
