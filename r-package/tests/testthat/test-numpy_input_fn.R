# numpy_input_fn(), as tfestimators had it, on pyhooks' input.

test_that("numpy_input_fn() trains and predicts as the same input_fn()", {
  skip_if_no_pyhooks()
  x <- list(drat = mtcars$drat, wt = mtcars$wt)
  columns <- feature_columns(column_numeric("drat", "wt"))
  numpy <- linear_regressor(columns, config = run_config(tf_random_seed = 1))
  plain <- linear_regressor(columns, config = run_config(tf_random_seed = 1))
  a <- quiet_train(numpy, numpy_input_fn(x, mtcars$mpg, batch_size = 8, shuffle = FALSE),
                   steps = 3)
  b <- quiet_train(plain, input_fn(mtcars, mpg ~ drat + wt, batch_size = 8, shuffle = FALSE),
                   steps = 3)
  expect_identical(a$total_losses, b$total_losses)
  expect_identical(predict(numpy, numpy_input_fn(x, shuffle = FALSE)),
                   predict(plain, input_fn(mtcars, mpg ~ drat + wt)))
  # one epoch by default: 32 rows in batches of 5 are 7 steps
  history <- quiet_train(numpy, numpy_input_fn(x, mtcars$mpg, batch_size = 5, shuffle = TRUE),
                         steps = 100)
  expect_identical(history$steps[nrow(history)], 10L)
})

test_that("numpy_input_fn() takes a factor response and matrix features", {
  skip_if_no_pyhooks()
  x <- list(petals = as.matrix(iris[, c("Petal.Length", "Petal.Width")]))
  model <- dnn_classifier(hidden_units = 4, n_classes = 3,
                          feature_columns = feature_columns(column_numeric("petals", shape = 2)))
  quiet_train(model, numpy_input_fn(x, iris$Species, batch_size = 16, num_epochs = NULL,
                                    shuffle = TRUE), steps = 5)
  predicted <- predict(model, numpy_input_fn(x, shuffle = FALSE))
  expect_identical(dim(predicted$probabilities), c(150L, 3L))
  metrics <- evaluate(model, numpy_input_fn(x, iris$Species, shuffle = FALSE))
  expect_true(metrics$accuracy >= 0 && metrics$accuracy <= 1)
})

test_that("numpy_input_fn() takes NumPy arrays made through reticulate, as the R arrays", {
  skip_if_no_pyhooks()
  np <- reticulate::import("numpy", convert = FALSE)
  petals <- as.matrix(iris[, c("Petal.Length", "Petal.Width")])
  columns <- feature_columns(column_numeric("petals", shape = 2))
  as_r <- dnn_classifier(hidden_units = 4, n_classes = 3, feature_columns = columns,
                         config = run_config(tf_random_seed = 1))
  as_numpy <- dnn_classifier(hidden_units = 4, n_classes = 3, feature_columns = columns,
                             config = run_config(tf_random_seed = 1))
  labels <- as.integer(iris$Species) - 1L
  a <- quiet_train(as_r, numpy_input_fn(list(petals = petals), labels, batch_size = 50,
                                        shuffle = FALSE), steps = 3)
  b <- quiet_train(as_numpy, numpy_input_fn(list(petals = np$asmatrix(petals, dtype = np$float32)),
                                            np$asarray(labels, dtype = np$int32),
                                            batch_size = 50, shuffle = FALSE), steps = 3)
  expect_equal(b$total_losses, a$total_losses, tolerance = 1e-6)
})

test_that("numpy_input_fn() refuses what TensorFlow's refused, in R's words", {
  skip_if_no_pyhooks()
  x <- list(drat = mtcars$drat)
  expect_error(numpy_input_fn(x, mtcars$mpg), "`shuffle` must be `TRUE` or `FALSE`, not NULL")
  expect_error(numpy_input_fn(mtcars$drat, mtcars$mpg, shuffle = TRUE),
               "must be a named list of columns")
  expect_error(numpy_input_fn(x, mtcars$mpg[-1], shuffle = TRUE),
               "same number of rows, not drat: 32, y: 31")
  expect_error(numpy_input_fn(x, list(drat = mtcars$mpg), shuffle = TRUE), "both have")
  expect_error(numpy_input_fn(x, mtcars$mpg, batch_size = 0, shuffle = TRUE), "batch_size")
})

test_that("a named list y reaches a model_fn as a named list of tensors, each of its type", {
  skip_if_no_pyhooks()
  seen <- list()
  model_fn <- function(features, labels, mode) {
    seen[[length(seen) + 1L]] <<- if (is.null(labels)) "none" else
      vapply(labels, function(t) t$dtype$name, "")
    hidden <- tf$layers$dense(features, 4L, activation = tf$nn$relu)
    logits <- tf$layers$dense(hidden, 2L)
    am <- tf$argmax(logits, 1L, output_type = tf$int32)
    if (mode == "infer") return(estimator_spec(mode, predictions = list(am = am)))
    loss <- tf$losses$sparse_softmax_cross_entropy(labels$am, logits)
    estimator_spec(mode, loss = loss, eval_metric_ops = list(
      accuracy = tf$metrics$accuracy(labels$am, am)),
      train_op = tf$train$AdamOptimizer(0.05)$minimize(
        loss, global_step = tf$train$get_global_step()))
  }
  model <- estimator(model_fn)
  x <- list(wt = mtcars$wt)
  y <- list(am = as.integer(mtcars$am), mpg = mtcars$mpg)
  quiet_train(model, numpy_input_fn(x, y, batch_size = 8, shuffle = TRUE), steps = 4)
  metrics <- evaluate(model, numpy_input_fn(x, as.data.frame(y), shuffle = FALSE))
  predicted <- predict(model, numpy_input_fn(x, shuffle = FALSE))
  expect_identical(seen, list(c(am = "int64", mpg = "float64"),
                              c(am = "int64", mpg = "float64"), "none"))
  expect_equal(metrics$accuracy, mean(predicted == mtcars$am), tolerance = 1e-6)
})

test_that("a one-column matrix of numbers reaches a model_fn as [batch, 1], as NumPy's (n, 1)", {
  skip_if_no_pyhooks()
  seen <- list()
  model_fn <- function(features, labels, mode) {
    seen <<- list(wt = features$wt$shape$as_list(), cyl = features$cyl$shape$as_list(),
                  am = features$am$shape$as_list(), gear = features$gear$shape$as_list(),
                  labels = labels$shape$as_list())
    prediction <- tf$layers$dense(tf$reshape(features$wt, c(-1L, 1L)), 1L)
    loss <- tf$losses$mean_squared_error(tf$reshape(labels, c(-1L, 1L)), prediction)
    estimator_spec(mode, loss = loss, predictions = prediction,
                   train_op = tf$train$GradientDescentOptimizer(0.01)$minimize(
                     loss, global_step = tf$train$get_global_step()))
  }
  model <- estimator(model_fn)
  x <- list(wt = matrix(mtcars$wt), cyl = matrix(as.integer(mtcars$cyl)),
            am = matrix(mtcars$am == 1), gear = matrix(as.character(mtcars$gear)))
  quiet_train(model, numpy_input_fn(x, matrix(mtcars$mpg), batch_size = 8, shuffle = TRUE),
              steps = 2)
  expect_identical(seen, list(wt = list(NULL, 1L), cyl = list(NULL, 1L), am = list(NULL, 1L),
                              gear = list(NULL), labels = list(NULL, 1L)))
  # vectors stay [batch]
  quiet_train(model, numpy_input_fn(lapply(x, as.vector), mtcars$mpg, shuffle = TRUE),
              steps = 1)
  expect_identical(seen, list(wt = list(NULL), cyl = list(NULL), am = list(NULL),
                              gear = list(NULL), labels = list(NULL)))
})

test_that("what input_fn() refuses of a numpy_input_fn() call is told as numpy_input_fn()'s error", {
  skip_if_no_pyhooks()
  missing_wt <- replace(mtcars$wt, 3, NA)
  error <- expect_error(numpy_input_fn(list(wt = missing_wt), mtcars$mpg, shuffle = TRUE),
                        "Column \"wt\" has 1 missing value .* row 3", class = "pyhooks_error_argument")
  expect_identical(conditionCall(error)[[1L]], quote(numpy_input_fn))
  error <- expect_error(numpy_input_fn(list(wt = mtcars$wt), mtcars$mpg, shuffle = TRUE,
                                       batch_size = 0), "`batch_size` must be positive, got 0")
  expect_identical(conditionCall(error)[[1L]], quote(numpy_input_fn))
  # input_fn() called directly still names itself
  error <- expect_error(input_fn(mtcars, features = "wt", response = "mpg", batch_size = 0))
  expect_identical(conditionCall(error)[[1L]], quote(input_fn))
})
