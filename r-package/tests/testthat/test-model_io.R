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
  rows <- function(tensor) do.call(rbind, lapply(tensor$numpy()$tolist(), unlist))
  expected <- predict(model, input_fn(data, species ~ petal))
  expect_equal(rows(served$probabilities), unname(unclass(expected$probabilities)),
               tolerance = 1e-6)
  expect_identical(as.vector(rows(served$class_ids)), as.vector(expected$class_ids))
  expect_error(export_savedmodel(linear_regressor(mtcars_columns()), tempfile()),
               "train the model before")
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
  expect_false(isTRUE(all.equal(old$predictions, new$predictions)))
  # the next call is back on the latest checkpoint
  expect_identical(evaluate(model, mtcars_input())$global_step, 4L)
  metrics <- evaluate(model, mtcars_input(), simplify = FALSE)
  expect_type(metrics, "list")
  expect_identical(metrics$global_step, 4L)
  expect_error(predict(model, mtcars_input(), checkpoint_path = tempfile()), "not a checkpoint")
})

test_that("train_and_evaluate() trains to max_steps, then evaluates", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  metrics <- suppressMessages(train_and_evaluate(
    model,
    train_spec(mtcars_input(num_epochs = NULL), max_steps = 6,
               hooks = list(hook_progress_bar(writer = function(text) NULL))),
    eval_spec(mtcars_input(), steps = 2, name = "check")
  ))
  expect_identical(metrics$global_step, 6L)
  expect_true(dir.exists(file.path(model_dir(model), "eval_check")))
  expect_error(train_and_evaluate(model, list(), eval_spec(mtcars_input())), "train_spec")
  expect_error(train_spec(mtcars), "must be made by")
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
