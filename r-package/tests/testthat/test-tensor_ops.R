# R's operators and math functions on tensors (tensor_ops.R), checked against R's own
# results on the same numbers, then where users write them: a normalizer_fn and a model_fn.

values <- function(tensor) as.vector(tensor$numpy())

test_that("tensors have the R class tensorflow.tensor; other Python objects do not", {
  skip_if_no_pyhooks()
  expect_identical(class(tf$constant(1))[[1L]], "tensorflow.tensor")
  expect_identical(class(tf$Variable(1))[[1L]], "tensorflow.tensor")
  expect_false(inherits(tf$TensorShape(list(2L)), "tensorflow.tensor"))
  expect_identical(sum(class(tf$constant(1)) == "tensorflow.tensor"), 1L)
})

test_that("each operator gives what R gives on the same numbers, with the tensor on either side", {
  skip_if_no_pyhooks()
  a <- c(-7, -2.5, 0.5, 3, 8)
  b <- c(2, -3, 4, 1.5, 3)
  ta <- tf$constant(a, dtype = tf$float64)
  tb <- tf$constant(b, dtype = tf$float64)
  for (op in c("+", "-", "*", "/", "^", "%%", "%/%", "==", "!=", "<", "<=", ">", ">=")) {
    f <- match.fun(op)
    expected <- f(abs(a), b)
    expect_equal(values(f(abs(ta), tb)), expected, info = op)
    expect_equal(values(f(abs(ta), b)), expected, info = paste(op, "number on the right"))
    expect_equal(values(f(abs(a), tb)), expected, info = paste(op, "number on the left"))
  }
  expect_equal(values(-ta), -a)
  expect_equal(values(+ta), a)
  p <- c(TRUE, TRUE, FALSE, FALSE)
  q <- c(TRUE, FALSE, TRUE, FALSE)
  expect_identical(values(tf$constant(p) & tf$constant(q)), p & q)
  expect_identical(values(tf$constant(p) | q), p | q)
  expect_identical(values(!tf$constant(p)), !p)
})

test_that("an R number takes the tensor's type; integers divide and round as in R", {
  skip_if_no_pyhooks()
  x <- tf$constant(c(1, 4, 9), dtype = tf$float32)
  expect_identical((x - 3)$dtype$name, "float32")
  expect_identical((3 - x)$dtype$name, "float32")
  expect_identical((x * matrix(1:3, 1))$dtype$name, "float32")
  i <- c(7L, -7L, 6L)
  ti <- tf$constant(i)
  expect_identical(values(ti %% 4L), i %% 4L)
  expect_identical(values(ti %/% 4L), i %/% 4L)
  expect_equal(values(ti / 2L), i / 2L)
  expect_identical((ti / 2L)$dtype$name, "float64")
})

test_that("the math functions and reductions give what R gives", {
  skip_if_no_pyhooks()
  x <- c(0.5, 1.5, 2.5, 4, 9)
  tx <- tf$constant(x, dtype = tf$float64)
  for (fn in c("abs", "sign", "sqrt", "floor", "ceiling", "round", "exp", "expm1", "log",
               "log2", "log10", "log1p", "cos", "sin", "tan", "atan", "cosh", "sinh",
               "tanh", "asinh", "lgamma", "digamma", "cumsum", "cumprod")) {
    f <- match.fun(fn)
    expect_equal(values(f(tx)), f(x), tolerance = 1e-12, info = fn)
  }
  expect_equal(values(log(tx, 3)), log(x, 3))
  expect_equal(values(round(tf$constant(c(-1.5, 0.5, 2.5)))), round(c(-1.5, 0.5, 2.5)))
  u <- c(0.1, 0.5, 0.9)
  for (fn in c("acos", "asin", "atanh")) {
    expect_equal(values(match.fun(fn)(tf$constant(u, dtype = tf$float64))), match.fun(fn)(u), info = fn)
  }
  expect_equal(values(acosh(tx + 1)), acosh(x + 1))
  m <- matrix(c(1, -2, 3, 4, 5, -6), 2)
  tm <- tf$constant(m, dtype = tf$float64)
  for (fn in c("sum", "prod", "max", "min", "range", "mean")) {
    expect_equal(values(match.fun(fn)(tm)), match.fun(fn)(m), info = fn)
  }
  expect_identical(values(all(tm > -7)), TRUE)
  expect_identical(values(any(tm > 5)), FALSE)
})

test_that("what has no tensor counterpart is an error naming it", {
  skip_if_no_pyhooks()
  x <- tf$constant(c(1.25, 2.5))
  expect_error(trunc(x), "`trunc\\(\\)` of a tensor is not supported", class = "pyhooks_error_argument")
  expect_error(round(x, 1), "whole numbers only.*digits = 1", class = "pyhooks_error_argument")
  expect_error(sum(x, x), "`sum\\(\\)` takes one tensor, not 2 values", class = "pyhooks_error_argument")
})

test_that("in a model_fn, such an error says what failed (not TensorFlow's error on formatting a graph tensor)", {
  skip_if_no_pyhooks()
  for (case in list(
    list(fn = function(v) trunc(v), message = "`trunc\\(\\)` of a tensor is not supported"),
    list(fn = function(v) sum(v, v), message = "`sum\\(\\)` takes one tensor, not 2 values")
  )) {
    model_fn <- function(features, labels, mode, params, config) {
      fitted <- case$fn(tf$reshape(tf$layers$dense(tf$reshape(features$drat, list(-1L, 1L)), 1L), list(-1L)))
      loss <- mean((labels - fitted)^2)
      estimator_spec(mode, loss = loss, train_op = tf$train$GradientDescentOptimizer(0.01)$minimize(
        loss, global_step = tf$train$get_global_step()))
    }
    input <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 32L)
    expect_error(quiet_train(estimator(model_fn), input, steps = 1), case$message,
                 class = "pyhooks_error_argument")
  }
})

test_that("a normalizer_fn written with R's operators normalizes the column", {
  skip_if_no_pyhooks()
  input <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 32L)
  predicted <- function(normalizer_fn) {
    model <- linear_regressor(feature_columns(column_numeric("drat", normalizer_fn = normalizer_fn)))
    quiet_train(model, input, steps = 5)
    as.data.frame(predict(model, input_fn(mtcars, features = "drat")))[[1L]]
  }
  # a column made all zero leaves only the bias: one prediction for every car
  expect_length(unique(predicted(function(x) x * 0)), 1L)
  # tfestimators' documented example: the predictions follow drat
  normalized <- predicted(function(x) (x - 3) / 4.2)
  expect_equal(cor(normalized, mtcars$drat), 1, tolerance = 1e-6)
})

test_that("a model_fn's loss written with R's operators is the loss evaluate() reports", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode, params, config) {
    x <- tf$reshape(features$drat, list(-1L, 1L))
    fitted <- tf$reshape(tf$layers$dense(x, 1L), list(-1L))
    if (mode == "infer") return(estimator_spec(mode, predictions = list(mpg = fitted)))
    loss <- mean((labels - fitted)^2)
    step <- tf$train$GradientDescentOptimizer(0.01)$minimize(
      loss, global_step = tf$train$get_global_step())
    estimator_spec(mode, loss = loss, train_op = step)
  }
  model <- estimator(model_fn)
  input <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 32L)
  quiet_train(model, input, steps = 1)
  first <- evaluate(model, input, steps = 1)
  quiet_train(model, input, steps = 30)
  fitted <- as.data.frame(predict(model, input_fn(mtcars, features = "drat")))[[1L]]
  after <- evaluate(model, input, steps = 1)
  expect_equal(after$loss, mean((mtcars$mpg - fitted)^2), tolerance = 1e-6)
  expect_lt(after$loss, first$loss)
})

test_that("R functions TensorFlow calls with tensors run as written; their errors name the argument", {
  skip_if_no_pyhooks()
  input <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 32L)
  columns <- feature_columns(column_numeric("drat"))
  # an activation that zeroes every hidden unit leaves only the output's bias
  flat <- dnn_regressor(hidden_units = c(4, 4), feature_columns = columns,
                        activation_fn = function(x) x * 0)
  quiet_train(flat, input, steps = 3)
  expect_length(unique(as.data.frame(predict(flat, input_fn(mtcars, features = "drat")))[[1L]]), 1L)
  # an error in one stops the call as an error in the model's other R functions does: the
  # user's condition is the parent, and the message names the argument
  error <- expect_error(
    quiet_train(dnn_regressor(hidden_units = 4, feature_columns = columns,
                              activation_fn = function(x) rlang::abort("no activation today", class = "my_error")), input),
    "Training stopped by an error in the `activation_fn` of `dnn_regressor()`.", fixed = TRUE,
    class = "pyhooks_callback_error"
  )
  expect_identical(error$callback, "activation_fn")
  expect_true(rlang::cnd_inherits(error, "my_error"))
  expect_identical(conditionMessage(error$parent), "no activation today")
  # stopifnot() records R's call stack, which holds graph tensors
  error <- expect_error(
    quiet_train(dnn_linear_combined_regressor(dnn_feature_columns = columns, dnn_hidden_units = 4,
                                              dnn_activation_fn = function(x) stopifnot(is.numeric(x))), input),
    "the `dnn_activation_fn` of `dnn_linear_combined_regressor()`", fixed = TRUE, class = "pyhooks_callback_error"
  )
  expect_identical(conditionMessage(error$parent), "is.numeric(x) is not TRUE")
  error <- expect_error(
    evaluate(linear_regressor(feature_columns(column_numeric("drat", normalizer_fn = function(x) x - "a"))), input),
    "Evaluation stopped by an error in the `normalizer_fn` of `column_numeric(\"drat\")`", fixed = TRUE,
    class = "pyhooks_callback_error"
  )
  expect_match(conditionMessage(error$parent), "got a of type 'str'")
  # predict() and the export build their own graphs, and report it likewise
  fail <- FALSE
  model <- dnn_regressor(hidden_units = 4, feature_columns = columns, activation_fn = function(x) {
    if (fail) stop("not now")
    tf$nn$relu(x)
  })
  quiet_train(model, input, steps = 2)
  fail <- TRUE
  for (call in list(quote(predict(model, input_fn(mtcars, features = "drat"))),
                    quote(export_savedmodel(model, tempfile())))) {
    error <- expect_error(eval(call), "stopped by an error in the `activation_fn` of `dnn_regressor()`",
                          fixed = TRUE, class = "pyhooks_callback_error")
    expect_identical(conditionMessage(error$parent), "not now")
  }
  # inside a model_fn, the innermost function that failed is the one named
  error <- expect_error(
    quiet_train(estimator(function(features, labels, mode, params, config) {
      input_layer(features, feature_columns(column_numeric("drat", normalizer_fn = function(x) {
        rlang::abort("bad column", class = "column_error")
      })))
    }), input),
    class = "pyhooks_callback_error"
  )
  expect_identical(error$callback, "normalizer_fn")
  expect_true(rlang::cnd_inherits(error, "column_error"))
  # called from Python outside train() and the others, Python's error names it
  normalize <- column_numeric("drat", normalizer_fn = function(x) stop("outside"))$normalizer_fn
  expect_error(normalize(tf$constant(1)), "The `normalizer_fn` of column_numeric(\"drat\") failed: outside",
               fixed = TRUE)
})

test_that("x[i, j] counts from 1 and selects what R selects from the same matrix", {
  skip_if_no_pyhooks()
  m <- matrix(c(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), 3)
  tm <- tf$constant(m)
  expect_identical(values(tf$constant(c(10, 20, 30))[1]), 10)
  for (case in list(quote(tm[1, ]), quote(tm[, 1]), quote(tm[2, 3]), quote(tm[2:3, ]),
                    quote(tm[, 2:4]), quote(tm[1:2, 3:4]), quote(tm[3, 1:2]))) {
    r_case <- case
    r_case[[2L]] <- quote(m)
    expect_equal(tm_value <- eval(case)$numpy(), eval(r_case), ignore_attr = TRUE,
                 info = deparse(case))
    expect_identical(length(dim(tm_value)) > 1L, length(dim(eval(r_case))) > 1L, info = deparse(case))
  }
  # drop = FALSE keeps the dimension, as for a matrix
  expect_identical(unlist(eval(tm[2, , drop = FALSE])$shape$as_list()), dim(m[2, , drop = FALSE]))
  # an index held in a variable, inside a function
  pick <- function(t, k) t[k, 1]
  expect_equal(values(pick(tm, 3L)), m[3L, 1])
})

test_that("selections R would make another way are refused, naming the value", {
  skip_if_no_pyhooks()
  x <- tf$constant(c(10, 20, 30))
  for (index in list(-1, c(1, 3), 0, 4, TRUE, 1.5, NA)) {
    expect_error(x[index], "Index 1 of a tensor must be empty, a whole number from 1 to 3",
                 class = "pyhooks_error_argument", info = deparse(index))
  }
  expect_error(x[c(3, 1)], "not `c\\(3, 1\\)`", class = "pyhooks_error_argument")
  # a matrix takes two indices (R's one-index form counts down the columns)
  expect_error(tf$constant(diag(2))[1], "one index per dimension: it has 2 dimension\\(s\\), and 1 was given",
               class = "pyhooks_error_argument")
})

test_that("in a model_fn, logits[, 1] of a batch of unknown size is the first column", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode, params, config) {
    both <- tf$layers$dense(tf$reshape(features$drat, list(-1L, 1L)), 2L)
    fitted <- both[, 1]
    if (mode == "infer") return(estimator_spec(mode, predictions = list(mpg = fitted, both = both)))
    loss <- mean((labels - fitted)^2)
    estimator_spec(mode, loss = loss, train_op = tf$train$GradientDescentOptimizer(0.01)$minimize(
      loss, global_step = tf$train$get_global_step()))
  }
  model <- estimator(model_fn)
  quiet_train(model, input_fn(mtcars, features = "drat", response = "mpg", batch_size = 8L), steps = 2)
  predicted <- predict(model, input_fn(mtcars, features = "drat"), simplify = FALSE)
  first <- predicted[[1L]]
  expect_equal(first$mpg, first$both[[1L]])
})

test_that("a range beyond a batch's size is refused when the step runs, not cut short", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode, params, config) {
    x <- tf$reshape(features$drat, list(-1L, 1L))
    fitted <- tf$layers$dense(x, 1L)[, 1]
    # its first 6 rows: Python's slicing of a batch of 4 would give 4
    loss <- mean((labels[1:6] - fitted[1:6])^2)
    estimator_spec(mode, loss = loss, train_op = tf$train$GradientDescentOptimizer(0.01)$minimize(
      loss, global_step = tf$train$get_global_step()))
  }
  model <- estimator(model_fn)
  quiet_train(model, input_fn(mtcars, features = "drat", response = "mpg", batch_size = 8L), steps = 2)
  expect_identical(as.integer(variable_value(model, "global_step")[[1L]]), 2L)
  expect_error(
    quiet_train(model, input_fn(mtcars, features = "drat", response = "mpg", batch_size = 4L), steps = 2),
    "Index 1 of a tensor, 1:6, goes beyond its size", class = "pyhooks_python_InvalidArgumentError"
  )
})

test_that("dim() and length() of a tensor are its shape and number of values, NA where unknown", {
  skip_if_no_pyhooks()
  m <- tf$constant(matrix(1:6, 2))
  expect_identical(dim(m), c(2L, 3L))
  expect_identical(nrow(m), 2L)
  expect_identical(length(m), 6L)
  expect_identical(length(tf$constant(1)), 1L)
  seen <- new.env()
  model_fn <- function(features, labels, mode, params, config) {
    seen$dim <- dim(features$drat)
    seen$length <- length(features$drat)
    # an R error with a graph tensor as an argument on R's call stack: rlang's backtrace
    # calls length() on it (Python's len() raised TensorFlow's "symbolic Tensor as bool")
    do.call(function(t) rlang::abort("a helper refused", class = "helper_error"), list(features$drat))
  }
  error <- expect_error(
    quiet_train(estimator(model_fn), input_fn(mtcars, features = "drat", response = "mpg", batch_size = 8L)),
    class = "pyhooks_callback_error"
  )
  expect_true(rlang::cnd_inherits(error, "helper_error"))
  expect_match(conditionMessage(error$parent), "a helper refused")
  expect_identical(seen$dim, NA_integer_)
  expect_identical(seen$length, NA_integer_)
})
