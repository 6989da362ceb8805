# tfestimators' documented R code (its articles and example scripts), written
# again in our own words, runs with library(pyhooks).

test_that("quantile() boundaries (a named vector) make a bucketized column", {
  skip_if_no_pyhooks()
  boundaries <- quantile(mtcars$drat, c(.2, .4, .6, .8))
  column <- column_bucketized(column_numeric("drat"), boundaries)
  expect_equal(unlist(column$boundaries), unname(boundaries),
               tolerance = 1e-12)
  model <- linear_regressor(feature_columns(column))
  quiet_train(model, input_fn(mtcars, mpg ~ drat, batch_size = 8), steps = 2)
  weights <- variable_value(model, "linear/linear_model/drat_bucketized/weights")[[1]]
  expect_identical(dim(weights), c(5L, 1L))
  # other lists of values lose their names too
  vocab <- c(four = 4, six = 6, eight = 8)
  expect_no_error(column_categorical_with_vocabulary_list("cyl", vocabulary_list = vocab))
  expect_no_error(dnn_regressor(hidden_units = c(a = 3, b = 2), mtcars_columns()))
})

test_that("input_fn() takes formulas, bare names, tidyselect, object= and epochs=", {
  skip_if_no_pyhooks()
  same <- function(input, features, response) {
    expect_identical(unlist(input$features), features)
    expect_identical(unlist(input$response), response)
  }
  same(input_fn(mtcars, features = c(drat, cyl), response = mpg, batch_size = 128, epochs = 3),
       c("drat", "cyl"), "mpg")
  same(input_fn(mpg ~ drat + cyl, data = mtcars, batch_size = 128, epochs = 3),
       c("drat", "cyl"), "mpg")
  same(input_fn(vs ~ drat + mpg + am, data = mtcars), c("drat", "mpg", "am"), "vs")
  same(input_fn(mtcars, mpg ~ drat + cyl), c("drat", "cyl"), "mpg")
  same(input_fn(mtcars, mpg ~ .), setdiff(names(mtcars), "mpg"), "mpg")
  same(input_fn(mtcars, features = -mpg, response = mpg), setdiff(names(mtcars), "mpg"), "mpg")
  same(input_fn(mtcars, features = starts_with("d"), response = "mpg"), c("disp", "drat"), "mpg")
  same(input_fn(mtcars, features = ends_with("t"), response = "mpg"), c("drat", "wt"), "mpg")
  same(input_fn(mtcars, features = contains("ar"), response = "mpg"), c("gear", "carb"), "mpg")
  same(input_fn(mtcars, features = one_of(c("hp", "wt")), response = "mpg"), c("hp", "wt"), "mpg")
  same(input_fn(object = mtcars, features = c("drat", "cyl"), response = "mpg"),
       c("drat", "cyl"), "mpg")
  names_held <- c("drat", "cyl")
  same(input_fn(mtcars, features = names_held, response = "mpg"), names_held, "mpg")
  expect_identical(input_fn(mtcars, mpg ~ drat, epochs = 3)$num_epochs, 3L)
  # epochs = NULL is num_epochs = NULL: the data repeats for as long as training asks
  expect_null(input_fn(mtcars, mpg ~ drat, epochs = NULL)$num_epochs)
  model <- linear_regressor(feature_columns(column_numeric("drat")))
  history <- quiet_train(model, input_fn(mtcars, mpg ~ drat, batch_size = 8, epochs = NULL),
                         steps = 10)
  expect_identical(max(as.data.frame(history)$steps), 10L) # 4 batches an epoch
  expect_identical(input_fn(mtcars, mpg ~ drat)$num_epochs, 1L)
  expect_error(input_fn(mtcars, mpg ~ drat, num_epochs = 2, epochs = 2),
               "Give `num_epochs` or `epochs` (the same), not both.", fixed = TRUE,
               class = "pyhooks_error_argument")
  # the input_fn generator of tfestimators' docs
  mtcars_input_fn <- function(data, ...) {
    input_fn(data, features = c("drat", "cyl"), response = "mpg", ...)
  }
  model <- linear_regressor(feature_columns(column_numeric("drat", "cyl")))
  quiet_train(model, mtcars_input_fn(mtcars[1:24, ], batch_size = 8), steps = NULL)
  expect_named(evaluate(model, mtcars_input_fn(mtcars[25:32, ])),
               c("average_loss", "label/mean", "loss", "prediction/mean", "global_step"))
  # a matrix with column names
  m <- matrix(c(1:12), nrow = 4, ncol = 3)
  colnames(m) <- c("x1", "x2", "y")
  same(input_fn(m, features = c("x1", "x2"), response = "y"), c("x1", "x2"), "y")
  expect_error(input_fn(mtcars, features = c(nope, cyl), response = mpg), "must select columns")
  expect_error(input_fn(mtcars, mpg ~ nope), "\"nope\", which is not a column")
  expect_error(input_fn(mtcars, mpg ~ drat, response = "mpg"), "not both")
})

test_that("a factor response is sent with its levels and its classes are their names", {
  skip_if_no_pyhooks()
  input <- input_fn(iris, Species ~ ., batch_size = 10)
  expect_identical(as.character(unlist(input$columns$Species)), as.character(iris$Species))
  expect_identical(unlist(input$factors$Species$levels), levels(iris$Species))
  # tfestimators' iris example: a dnn_classifier without label_vocabulary
  classifier <- dnn_classifier(feature_columns = feature_columns(
    column_numeric(setdiff(names(iris), "Species"))), hidden_units = c(10, 20, 10), n_classes = 3)
  quiet_train(classifier, input, steps = 5)
  predictions <- predict(classifier, input_fn = input)
  expect_true(all(predictions$class_ids %in% 0:2))
  expect_true(all(predictions$classes %in% levels(iris$Species)))
  expect_identical(predictions$classes, levels(iris$Species)[predictions$class_ids + 1L])
  # with the levels as label_vocabulary, classes are the level names too
  named <- dnn_classifier(feature_columns = feature_columns(column_numeric("Petal.Width")),
                          hidden_units = 3, n_classes = 3, label_vocabulary = levels(iris$Species))
  quiet_train(named, input, steps = 2)
  expect_true(all(predict(named, input)$classes %in% levels(iris$Species)))
})

test_that("feature columns: several names, duplicates, names= and with_columns()", {
  skip_if_no_pyhooks()
  keys <- function(columns) vapply(columns, function(c) c$name, "")
  expect_identical(keys(feature_columns(column_numeric("drat"), column_numeric("wt"))),
                   c("drat", "wt"))
  expect_identical(keys(feature_columns(column_numeric("drat", "wt"))), c("drat", "wt"))
  expect_identical(keys(feature_columns(column_numeric("drat", "wt"), column_numeric("drat"))),
                   c("wt", "drat"))
  expect_identical(keys(feature_columns(names = mtcars, column_numeric(ends_with("t")))),
                   c("drat", "wt"))
  expect_identical(keys(with_columns(mtcars, feature_columns(column_numeric(starts_with("d"))))),
                   c("disp", "drat"))
  expect_identical(keys(with_columns(mtcars, feature_columns(ends_with("t") ~ column_numeric()))),
                   c("drat", "wt"))
  expect_identical(
    keys(feature_columns(names = names(mtcars), contains("ar") ~ column_numeric(),
                         column_numeric(hp))),
    c("gear", "carb", "hp"))
  expect_error(feature_columns(names = 1, column_numeric("x")), "`names` must be column names")
})

test_that("vocabulary-file and weighted categorical columns train", {
  skip_if_no_pyhooks()
  vocabulary <- tempfile(fileext = ".txt")
  writeLines(c("4", "6", "8"), vocabulary)
  cyl <- column_categorical_with_vocabulary_file("cyl", vocabulary_file = vocabulary,
                                                 dtype = "int64")
  gear <- column_categorical_weighted(column_categorical_with_identity("gear", num_buckets = 6),
                                      weight_feature_key = "wt")
  model <- linear_regressor(feature_columns(cyl, gear))
  quiet_train(model, input_fn(mtcars, mpg ~ cyl + gear + wt, batch_size = 8), steps = 2)
  expect_true("linear/linear_model/cyl/weights" %in% variable_names(model))
  deep <- dnn_regressor(hidden_units = 3, feature_columns(column_indicator(gear),
                                                          column_indicator(cyl)))
  expect_no_error(quiet_train(deep, input_fn(mtcars, mpg ~ cyl + gear + wt), steps = 1))
  expect_error(column_categorical_with_vocabulary_file("cyl", vocabulary_file = "/nonexistent"),
               "cannot be read")
})

test_that("wide and deep, as in tfestimators' basics and census example", {
  skip_if_no_pyhooks()
  # the basics article
  input <- input_fn(vs ~ drat + mpg + am, data = mtcars, batch_size = 128, epochs = 3)
  classifier <- dnn_linear_combined_classifier(
    linear_feature_columns = feature_columns(column_numeric("mpg")),
    dnn_feature_columns = feature_columns(column_numeric("drat")),
    dnn_hidden_units = c(3, 3),
    dnn_optimizer = "Adagrad"
  )
  # 32 rows, 3 epochs in batches of 128: the input ends after one step
  history <- classifier %>% quiet_train(input, steps = 2)
  expect_identical(history$steps, 1L)
  saved_model_dir <- model_dir(classifier)
  expect_true(dir.exists(saved_model_dir))
  loaded_model <- dnn_linear_combined_classifier(
    linear_feature_columns = feature_columns(column_numeric("mpg")),
    dnn_feature_columns = feature_columns(column_numeric("drat")),
    dnn_hidden_units = c(3, 3),
    dnn_optimizer = "Adagrad",
    model_dir = saved_model_dir
  )
  expect_identical(evaluate(loaded_model, input)$global_step, 1L)
  expect_equal(variable_value(loaded_model, "dnn/logits/bias"),
               variable_value(classifier, "dnn/logits/bias"))

  # the census example, on made-up rows of the same columns
  set.seed(1)
  n <- 64
  census <- data.frame(
    age = sample(18:80, n, TRUE), education_num = sample(1:16, n, TRUE),
    hours_per_week = sample(10:60, n, TRUE),
    gender = sample(c("Female", "Male"), n, TRUE),
    education = sample(c("Bachelors", "HS-grad", "Masters"), n, TRUE),
    occupation = sample(c("Sales", "Tech-support", "Craft-repair"), n, TRUE),
    income_bracket = sample(c(">50K", "<=50K"), n, TRUE), stringsAsFactors = FALSE
  )
  census$label <- ifelse(census$income_bracket == ">50K", 1, 0)
  gender <- column_categorical_with_vocabulary_list("gender", vocabulary_list = c("Female", "Male"))
  education <- column_categorical_with_vocabulary_list(
    "education", vocabulary_list = c("Bachelors", "HS-grad", "Masters"))
  occupation <- column_categorical_with_hash_bucket("occupation", hash_bucket_size = 1000,
                                                    dtype = tf$string)
  age <- column_numeric("age")
  age_buckets <- column_bucketized(age, boundaries = c(18, 25, 30, 35, 40, 45, 50, 55, 60, 65))
  crossed_columns <- feature_columns(
    gender, education, occupation, age_buckets,
    column_crossed(c("education", "occupation"), hash_bucket_size = 10000),
    column_crossed(c(age_buckets, "education", "occupation"), hash_bucket_size = 10000)
  )
  deep_columns <- feature_columns(
    column_embedding(education, dimension = 8),
    column_embedding(occupation, dimension = 8),
    age, column_numeric("education_num", "hours_per_week")
  )
  model <- dnn_linear_combined_classifier(
    linear_feature_columns = crossed_columns, dnn_feature_columns = deep_columns,
    dnn_hidden_units = c(100, 50)
  )
  constructed_input_fn <- function(dataset) input_fn(dataset, features = -label, response = label)
  quiet_train(model, constructed_input_fn(census), steps = 2)
  metrics <- evaluate(model, input_fn = constructed_input_fn(census), steps = 2)
  expect_identical(metrics$global_step, 1L)  # 64 rows: one batch of the default 128
  expect_true(all(c("accuracy", "auc") %in% names(metrics)))
  expect_true(any(startsWith(variable_names(model), "linear/")))
  expect_true(any(startsWith(variable_names(model), "dnn/")))
})

test_that("boosted trees say they are gone and what to use instead", {
  expect_error(boosted_trees_classifier(), class = "pyhooks_unsupported")
  expect_error(boosted_trees_regressor(feature_columns = list()), "tf.estimator")
})

test_that("model_dir() & co. read the estimator's checkpoints", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_null(latest_checkpoint(model))
  quiet_train(model, steps = 3)
  expect_match(latest_checkpoint(model), "model.ckpt-3$")
  expect_true(startsWith(latest_checkpoint(model), model_dir(model)))
  expect_true("global_step" %in% variable_names(model))
  expect_error(model_dir(mtcars), "must be an estimator")
})

test_that("variable_names() and variable_value() answer as tfestimators' did", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  # before any training: tfestimators' words, then where pyhooks looked
  err <- expect_error(variable_names(model), class = "pyhooks_error_untrained")
  expect_match(conditionMessage(err), "'variable_names()' must be called on a trained model",
               fixed = TRUE)
  expect_match(conditionMessage(err), paste0("There is no checkpoint in '", model_dir(model),
                                            "' yet: `train()` it first."), fixed = TRUE)
  expect_error(variable_value(model),
               "'variable_value()' must be called on a trained model", fixed = TRUE)
  quiet_train(model, steps = 2)
  # one name still gives a named list; the global step (int64) is a double
  expect_identical(variable_value(model, "global_step"), list(global_step = 2))
  all_values <- variable_value(model)
  expect_identical(names(all_values), variable_names(model))
  expect_identical(all_values$global_step, 2)
  expect_type(all_values[["linear/linear_model/drat/weights"]], "double")
  expect_identical(coef(model), all_values)
  two <- variable_value(model, c("linear/linear_model/bias_weights", "global_step"))
  expect_named(two, c("linear/linear_model/bias_weights", "global_step"))
  # names it does not hold: tfestimators' words, then what the checkpoint holds
  err <- expect_error(variable_value(model, c("foo", "global_step", "bar")))
  expect_match(conditionMessage(err), "Variable not found: foo, bar. The latest checkpoint (model.ckpt-2) holds global_step, linear/", fixed = TRUE)
  expect_error(variable_value(model, 1), "`name` must be variable names")
  expect_error(variable_value(model, NA_character_), "`name` must not be `NA`")
})

test_that("matrix input and column_numeric(shape =), as tfestimators' MNIST example", {
  skip_if_no_pyhooks()
  set.seed(3)
  n <- 120
  pixels <- matrix(runif(n * 16), n, 16)
  digits <- list(x = pixels, y = as.integer(rowSums(pixels[, 1:8]) > rowSums(pixels[, 9:16])))
  classifier <- linear_classifier(
    feature_columns = feature_columns(column_numeric("x", shape = 16L)),
    n_classes = 2L
  )
  mnist_input_fn <- function(data, ...) {
    input_fn(data, response = "y", features = "x", batch_size = 20, ...)
  }
  quiet_train(classifier, mnist_input_fn(digits), steps = 6)
  expect_identical(evaluate(classifier, input_fn = mnist_input_fn(digits), steps = 2)$global_step,
                   6L)
  predictions <- predict(classifier, input_fn = mnist_input_fn(digits))
  expect_identical(nrow(predictions), 120L)
  classes <- vapply(1:5, function(i) predictions$classes[[i]], character(1))
  expect_true(all(classes %in% c("0", "1")))
  weights <- variable_value(classifier, "linear/linear_model/x/weights")[[1]]
  expect_identical(dim(weights), c(16L, 1L))
  expect_error(quiet_train(linear_classifier(feature_columns(column_numeric("x"))),
                           mnist_input_fn(digits), steps = 1), "holds 16")
})

test_that("nested lists are sequences, as in tfestimators' input function article", {
  skip_if_no_pyhooks()
  input <- input_fn(
    object = list(
      inputs = list(list(list(1), list(2), list(3)), list(list(4), list(5), list(6))),
      output = list(list(1, 2, 3), list(4, 5, 6))
    ),
    features = "inputs",
    response = "output"
  )
  seen <- new.env()
  model_fn <- function(features, labels, mode) {
    seen$features <- unlist(features$inputs$shape$as_list())
    seen$labels <- unlist(labels$shape$as_list())
    estimator_spec(mode, predictions = list(
      total = tf$reduce_sum(features$inputs, axis = list(1L, 2L)),
      last = tf$reshape(tf$gather(features$inputs, 2L, axis = 1L), list(-1L))
    ))
  }
  predictions <- predict(estimator(model_fn), input)
  expect_identical(seen$features, c(3L, 1L))  # [batch, 3 steps, 1 value]
  expect_identical(seen$labels, 3L)
  expect_equal(predictions$total, c(6, 15))
  expect_equal(predictions$last, c(3, 6))
})

test_that("the estimator basics article: predict_keys, coef() and a weighted column by its old name", {
  skip_if_no_pyhooks()
  input <- input_fn(mtcars, features = c(drat, cyl, gear, wt), response = vs, batch_size = 8)
  gear <- column_weighted_categorical(column_categorical_with_identity("gear", num_buckets = 6),
                                      weight_feature_key = "wt")
  classifier <- dnn_linear_combined_classifier(
    linear_feature_columns = feature_columns(gear),
    dnn_feature_columns = feature_columns(column_numeric("drat", "cyl")),
    dnn_hidden_units = c(3L, 3L),
    dnn_optimizer = "Adagrad"
  )
  quiet_train(classifier, input, steps = 2)
  logistic <- predict(classifier, input_fn = input, predict_keys = prediction_keys()$LOGISTIC)
  probabilities <- predict(classifier, input_fn = input,
                           predict_keys = prediction_keys()$PROBABILITIES)
  expect_equal(as.vector(logistic), unclass(probabilities$probabilities)[, 2], tolerance = 1e-6)
  coefs <- coef(classifier)
  expect_identical(names(coefs), variable_names(classifier))
  expect_identical(dim(coefs[["linear/linear_model/gear_weighted_by_wt/weights"]]), c(6L, 1L))
  expect_identical(coefs$global_step, 2)
})

test_that("the TensorBoard article's tensorboard(log_dir =, launch_browser =)", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 1)
  expect_message(command <- tensorboard(log_dir = model_dir(model), launch_browser = FALSE),
                 "tensorboard --logdir")
  expect_match(command, basename(model_dir(model)), fixed = TRUE)
})

test_that("a custom input function (returning tensors) is refused with what to use instead", {
  skip_if_no_pyhooks()
  mtcars_input_fn <- function(data) {
    force(data)
    function() list(list(drat = tf$constant(data$drat)), tf$constant(data$mpg))
  }
  model <- linear_regressor(mtcars_columns())
  expect_error(train(model, mtcars_input_fn(mtcars), steps = 1),
               "Give its data to `input_fn\\(\\)` or `numpy_input_fn\\(\\)`")
  # a custom estimator calls it, and says what it must return instead of tensors
  custom <- estimator(function(features, labels, mode) stop("not reached"))
  err <- expect_error(train(custom, mtcars_input_fn(mtcars), steps = 1),
                      class = "pyhooks_error_argument")
  expect_match(conditionMessage(err), "must return a TensorFlow dataset (`tf$data$Dataset`), not a list",
               fixed = TRUE)
  expect_match(conditionMessage(err), "Tensors (tfestimators' custom input functions) are not taken: give their data to `input_fn()` or `numpy_input_fn()`",
               fixed = TRUE)
})

test_that("an input function of one argument is called with the estimator, as tfestimators did", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  given <- list()
  # tfestimators' TensorFlow Layers article: function(features_as_named_list) numpy_input_fn(...)
  cars_input_fn <- function(features_as_named_list) {
    given[[length(given) + 1L]] <<- features_as_named_list
    numpy_input_fn(x = list(drat = mtcars$drat), y = mtcars$mpg, batch_size = 8L,
                   shuffle = FALSE)
  }
  history <- quiet_train(model, cars_input_fn, steps = 3)
  expect_identical(history$steps[[nrow(history)]], 3L)
  expect_identical(evaluate(model, cars_input_fn)$global_step, 3L)
  expect_length(predict(model, cars_input_fn), 32L)
  expect_length(given, 3L)
  expect_true(all(vapply(given, identical, logical(1), model)))
  # a function of one argument that returns no input
  expect_error(train(model, function(estimator) mtcars, steps = 1),
               "must return an input made by `input_fn\\(\\)` or `numpy_input_fn\\(\\)`.*not a data frame")
  expect_error(train(model, function(a, b) NULL, steps = 1), "must be made by `input_fn\\(\\)`")
})

test_that("train(steps = 1) records its one step: the two values tfestimators' long history held", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  history <- quiet_train(model, mtcars_input(), steps = 1)  # the default history saver
  # tfestimators' as.data.frame() was long (one row per metric and step): 2 rows for this step;
  # pyhooks' history is one row per step with both losses
  expect_identical(nrow(history), 1L)
  expect_identical(history$steps, 1L)
  expect_equal(history$total_losses, 8 * history$mean_losses, tolerance = 1e-6)
  long <- pyhooks:::history_long(as.data.frame(history))
  expect_identical(dim(long[, c("steps", "metric", "value")]), c(2L, 3L))
  # a longer call: every 10th step and the last, from the first row on
  expect_identical(quiet_train(model, mtcars_input(num_epochs = NULL), steps = 25)$steps,
                   c(11L, 21L, 26L))
})

# Where the default progress bar writes. R's progress bars (the progress package
# tfestimators used, cli) write to stderr, so that capture.output() holds only
# what a user's code printed; issue 28 moves pyhooks' bar there.
progress_on_stderr <- function() {
  model <- linear_regressor(mtcars_columns())
  input <- mtcars_input()
  stderr_text <- character()
  stdout_text <- utils::capture.output(
    stderr_text <- utils::capture.output(train(model, input, steps = 1), type = "message")
  )
  !any(grepl("Training", stdout_text)) && any(grepl("Training", stderr_text))
}

test_that("capture.output(train()) holds only what a custom hook printed", {
  skip_if_no_pyhooks()
  skip_if_not(progress_on_stderr(),
              "the progress bar still writes to stdout here (issue 28 moves it to stderr)")
  said <- "Running custom session run hook at the end of a session"
  custom_hook <- session_run_hook(end = function(session) cat(said))
  output <- utils::capture.output(
    linear_regressor(mtcars_columns()) %>%
      train(input_fn = mtcars_input(), steps = 10, hooks = custom_hook)
  )
  expect_identical(output, said)
})

test_that("shape() and import() as the tensorflow package gave them to tfestimators' scripts", {
  skip_if_no_pyhooks()
  expect_identical(reticulate::py_str(shape(784L)), "(784,)")
  expect_identical(reticulate::py_str(shape(NULL, 28, 28)), "(None, 28, 28)")
  expect_error(shape(2.5), "whole number >= 0 or `NULL`.*dimension 1", class = "pyhooks_error_argument")
  expect_error(shape(3, "a"), "dimension 2", class = "pyhooks_error_argument")
  # import() is reticulate's: numpy arrays kept as Python objects, fed to numpy_input_fn()
  np <- import("numpy", convert = FALSE)
  expect_true(inherits(np, "python.builtin.module"))
  # a column of 16 values per example, its shape written with shape(); images as rows
  set.seed(3)
  pixels <- matrix(runif(40 * 16), 40, 16)
  data <- list(x = pixels, y = as.integer(rowSums(pixels[, 1:8]) > rowSums(pixels[, 9:16])))
  classifier <- linear_classifier(
    feature_columns = feature_columns(column_numeric("x", shape = shape(16L))), n_classes = 2L)
  quiet_train(classifier, input_fn(data, response = "y", features = "x", batch_size = 8), steps = 2)
  weights <- variable_value(classifier, "linear/linear_model/x/weights")[[1]]
  expect_identical(dim(weights), c(16L, 1L))
  expect_error(column_numeric("x", shape = shape(NULL, 16L)), "shape")
})

test_that("parsing specs, as the parsing utilities article builds them, parse real records", {
  skip_if_no_pyhooks()
  spec <- classifier_parse_example_spec(column_numeric("a"), label_key = "b", weight_column = "c")
  expect_identical(names(spec), c("a", "b", "c"))
  expect_identical(vapply(spec, reticulate::py_str, ""), c(
    a = "FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=None)",
    b = "FixedLenFeature(shape=(1,), dtype=tf.int64, default_value=None)",
    c = "FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=None)"))
  spec <- regressor_parse_example_spec(
    feature_columns(column_numeric("x"),
                    column_indicator(column_categorical_with_vocabulary_list("color", vocabulary_list = c("red", "blue")))),
    label_key = "y", label_default = 0, label_dimension = 1)
  expect_identical(reticulate::py_str(spec$color), "VarLenFeature(dtype=tf.string)")
  expect_identical(reticulate::py_str(spec$y),
                   "FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=0.0)")

  # records written by TensorFlow, parsed with the spec, trained on from R
  records <- reticulate::py_run_string("
import tensorflow as tf
f = tf.train.Feature
records = []
for i in range(16):
    records.append(tf.train.Example(features=tf.train.Features(feature={
        'x': f(float_list=tf.train.FloatList(value=[i / 10])),
        'color': f(bytes_list=tf.train.BytesList(value=[[b'red', b'blue'][i % 2]])),
        'y': f(float_list=tf.train.FloatList(value=[2 * i / 10]))})).SerializeToString())
", local = TRUE)$records
  parsed <- tf$io$parse_example(records, spec)
  data <- data.frame(
    x = as.vector(parsed$x$numpy()),
    color = vapply(tf$sparse$to_dense(parsed$color, default_value = "")$numpy(),
                   function(b) b$decode("utf-8"), ""),
    y = as.vector(parsed$y$numpy())
  )
  expect_equal(data$x, (0:15) / 10, tolerance = 1e-6)
  expect_identical(data$color, rep(c("red", "blue"), 8))
  model <- linear_regressor(feature_columns(
    column_numeric("x"),
    column_indicator(column_categorical_with_vocabulary_list("color", vocabulary_list = c("red", "blue")))))
  quiet_train(model, input_fn(data, features = c("x", "color"), response = "y", batch_size = 4),
              steps = 2)
  expect_match(latest_checkpoint(model), "model.ckpt-2$")
})

test_that("parsing specs name bad arguments in R's words", {
  skip_if_no_pyhooks()
  expect_error(classifier_parse_example_spec(column_numeric("a"), label_key = "a"),
               "`label_key` \"a\" is also a feature")
  expect_error(classifier_parse_example_spec(column_numeric("a"), label_key = "b",
                                             weight_column = "b"), "`weight_column` \"b\"")
  expect_error(classifier_parse_example_spec(column_numeric("a"), label_key = NA),
               "`label_key` must not be `NA`")
  expect_error(regressor_parse_example_spec(column_numeric("a"), "b", label_dimension = 1.5),
               "`label_dimension` must be a whole number")
  expect_error(classifier_parse_example_spec(column_numeric("a")), "label_key")
  expect_error(classifier_parse_example_spec(column_numeric("a"), "b", label_default = TRUE),
               "`label_default` must be 1 whole number .*got TRUE")
  expect_error(regressor_parse_example_spec(column_numeric("a"), "b", label_dimension = 2,
                                            label_default = 1), "`label_default` must be 2 numbers")
})
