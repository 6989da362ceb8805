# Custom estimators: estimator(), estimator_spec(), mode_keys(), input_layer(), tf.

new_model_dir <- function() {
  dir <- tempfile("pyhooks-model-")
  dir.create(dir)
  normalizePath(dir)
}

# tfestimators' abalone model function (examples/custom_estimator.R), written
# again: two hidden layers, a reshaped output, mean squared error, an rmse
# metric and gradient descent, in every mode (no branch on `mode`).
abalone_like_model_fn <- function(features, labels, mode, params, config) {
  first <- tf$layers$dense(features, 10L, activation = tf$nn$relu)
  second <- tf$layers$dense(first, 10L, activation = tf$nn$relu)
  output <- tf$layers$dense(second, 1L)
  predictions <- tf$reshape(output, list(-1L))
  loss <- tf$losses$mean_squared_error(labels, predictions)
  eval_metric_ops <- list(rmse = tf$metrics$root_mean_squared_error(
    tf$cast(labels, tf$float64), predictions
  ))
  optimizer <- tf$train$GradientDescentOptimizer(learning_rate = params$learning_rate)
  train_op <- optimizer$minimize(loss = loss, global_step = tf$train$get_global_step())
  estimator_spec(mode = mode, predictions = list(ages = predictions), loss = loss,
                 train_op = train_op, eval_metric_ops = eval_metric_ops)
}

test_that("a model_fn written as in tfestimators' docs trains, evaluates and predicts", {
  skip_if_no_pyhooks()
  dir <- new_model_dir()
  # unscaled mtcars (disp up to 472): small steps, or a shuffled order can diverge
  model <- estimator(abalone_like_model_fn, model_dir = dir, params = list(learning_rate = 1e-5))
  expect_s3_class(model, "pyhooks_estimator")
  input <- input_fn(mtcars, features = -mpg, response = mpg, batch_size = 8, epochs = 5)
  history <- quiet_train(model, input, steps = NULL)
  expect_identical(history$steps[[nrow(history)]], 20L)
  metrics <- evaluate(model, input_fn(mtcars, features = -mpg, response = mpg))
  expect_named(metrics, c("loss", "rmse", "global_step"))
  expect_identical(metrics$global_step, 20L)
  predictions <- predict(model, input_fn(mtcars, features = -mpg, response = mpg))
  # one output ("ages"): a vector, one value per row
  expect_true(is.numeric(predictions) && is.null(dim(predictions)))
  expect_length(predictions, 32L)
  # the metric agrees with the predictions of the checkpoint
  expect_equal(sqrt(mean((predictions - mtcars$mpg)^2)), metrics$rmse, tolerance = 1e-4)
  expect_true(any(grepl("^dense_2/kernel$", variable_names(model))))
  expect_identical(model_dir(model), normalizePath(dir))
})

test_that("features are a named list of tensors, and the matrix of them for TensorFlow", {
  skip_if_no_pyhooks()
  seen <- new.env()
  model_fn <- function(features, labels, mode) {
    seen$names <- names(features)
    seen$mode <- mode
    seen$labels <- labels
    seen$drat <- features$drat$dtype$name
    total <- tf$reduce_sum(features, axis = 1L)
    estimator_spec(mode, predictions = list(total = total, drat = features$drat))
  }
  model <- estimator(model_fn)
  predictions <- predict(model, input_fn(mtcars, features = c("cyl", "drat")))
  expect_identical(seen$names, c("cyl", "drat"))
  expect_identical(seen$mode, mode_keys()$PREDICT)
  expect_null(seen$labels)
  expect_identical(seen$drat, "float64")
  expect_equal(predictions$total, mtcars$cyl + mtcars$drat)
  expect_equal(predictions$drat, mtcars$drat)
})

test_that("input_layer() gives the dense input of feature columns", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode, params) {
    net <- input_layer(features, feature_columns(
      column_indicator(column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 6, 8))),
      column_numeric("drat")
    ))
    estimator_spec(mode, predictions = list(input = net))
  }
  predictions <- predict(estimator(model_fn), input_fn(mtcars, c(cyl, drat)))
  expected <- cbind(outer(mtcars$cyl, c(4, 6, 8), `==`) + 0, mtcars$drat)
  expect_equal(unname(unclass(predictions$input)), unname(expected), tolerance = 1e-6)
  expect_error(input_layer(list(), feature_columns(column_numeric("x"))), "features")
  # TensorFlow's name for it, which tfestimators' input_layer() called: the same input
  model_fn <- function(features, labels, mode, params) {
    estimator_spec(mode, predictions = list(
      input = tf$feature_column$input_layer(features, params$feature_columns)))
  }
  columns <- feature_columns(column_numeric("drat", "wt"))
  predictions <- predict(estimator(model_fn, params = list(feature_columns = columns)),
                         input_fn(mtcars, c(drat, wt)))
  expect_equal(unname(unclass(predictions$input)), unname(as.matrix(mtcars[c("drat", "wt")])),
               tolerance = 1e-6)
  # TensorFlow's own columns, made from R (whose calls have no Python frame for TensorFlow's
  # deprecation notice to read): a TensorFlow column, which pyhooks' estimators refuse by name
  theirs <- tf$feature_column$numeric_column("drat")
  expect_match(class(theirs)[[1]], "NumericColumn")
  expect_error(linear_regressor(list(theirs)),
               "use column_numeric() in place of tf.feature_column's NumericColumn", fixed = TRUE)
  # any deprecated function called from R runs (its notice says "From R:")
  expect_false(tf$train$checkpoint_exists(file.path(tempdir(), "no-such-checkpoint")))
  expect_identical(as.integer(tf$arg_max(tf$constant(c(1, 3, 2)), 0L)$numpy()), 1L)
})

test_that("a model_fn taking params gets list() when the estimator has none", {
  skip_if_no_pyhooks()
  seen <- list()
  model_fn <- function(features, labels, mode, params) {
    seen[[mode]] <<- params
    rate <- if (is.null(params$learning_rate)) 0.01 else params$learning_rate
    predictions <- tf$reshape(tf$layers$dense(features, 1L), list(-1L))
    loss <- tf$losses$mean_squared_error(labels, predictions)
    train_op <- tf$train$GradientDescentOptimizer(rate)$minimize(
      loss, global_step = tf$train$get_global_step())
    estimator_spec(mode, predictions = predictions, loss = loss, train_op = train_op)
  }
  quiet_train(estimator(model_fn), input_fn(mtcars, mpg ~ drat, batch_size = 8), steps = 1)
  expect_identical(seen$train, list())
  quiet_train(estimator(model_fn, params = list(learning_rate = 0.1)),
              input_fn(mtcars, mpg ~ drat, batch_size = 8), steps = 1)
  expect_identical(seen$train, list(learning_rate = 0.1))
})

test_that("a classifier model_fn branching on mode, as tfestimators' iris example", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode, params, config) {
    logits <- features %>%
      tf$layers$dense(10L, activation = tf$nn$relu) %>%
      tf$layers$dropout(rate = 0.1, training = mode == "train") %>%
      tf$layers$dense(3L)
    predicted_classes <- tf$argmax(logits, 1L)
    if (mode == "infer") {
      return(estimator_spec(mode = mode, predictions = list(
        class = predicted_classes, prob = tf$nn$softmax(logits)
      )))
    }
    onehot_labels <- tf$one_hot(labels, 3L, 1L, 0L)
    loss <- tf$losses$softmax_cross_entropy(onehot_labels, logits)
    if (mode == "train") {
      global_step <- tf$train$get_global_step()
      learning_rate <- tf$train$exponential_decay(
        learning_rate = 0.1, global_step = global_step, decay_steps = 100L, decay_rate = 0.001)
      optimizer <- tf$train$AdagradOptimizer(learning_rate = learning_rate)
      train_op <- optimizer$minimize(loss, global_step = global_step)
      return(estimator_spec(mode = mode, loss = loss, train_op = train_op))
    }
    eval_metric_ops <- list(accuracy = tf$metrics$accuracy(
      labels = labels, predictions = predicted_classes
    ))
    estimator_spec(mode = mode, loss = loss, eval_metric_ops = eval_metric_ops)
  }
  inputs <- input_fn(iris, response = "Species",
                     features = c("Sepal.Length", "Sepal.Width", "Petal.Length", "Petal.Width"),
                     batch_size = 10)
  classifier <- estimator(model_fn = model_fn)
  quiet_train(classifier, inputs, steps = 15)
  metrics <- evaluate(classifier, inputs)
  expect_gte(metrics$accuracy, 0)
  expect_lte(metrics$accuracy, 1)
  predictions <- predict(classifier, input_fn = inputs)
  expect_identical(nrow(predictions), 150L)
  expect_true(all(predictions$class %in% 0:2))
  expect_equal(rowSums(predictions$prob), rep(1, 150), tolerance = 1e-5)
  listed <- predict(classifier, input_fn = inputs, simplify = FALSE)
  expect_length(listed, 150L)  # one list per example, as tfestimators gave
  expect_identical(listed[[1]]$class, predictions$class[[1]])
})

test_that("a train_op that leaves the global step alone is an error, not an endless loop", {
  skip_if_no_pyhooks()
  model_fn <- function(features, labels, mode) {
    loss <- tf$losses$mean_squared_error(labels, tf$reshape(tf$layers$dense(features, 1L),
                                                            list(-1L)))
    train_op <- tf$train$GradientDescentOptimizer(0.01)$minimize(loss)
    estimator_spec(mode, loss = loss, train_op = train_op)
  }
  input <- input_fn(mtcars, mpg ~ drat, epochs = NULL)
  expect_error(quiet_train(estimator(model_fn), input, steps = 5), "global step")
})

test_that("estimator() and estimator_spec() check their arguments", {
  skip_if_no_pyhooks()
  expect_error(estimator(), "`model_fn` is absent")
  expect_error(estimator("f"), "must be an R function")
  expect_error(estimator(function(features, labels, mode) NULL, params = list(1)), "named list")
  expect_error(estimator_spec("training"), '"train", "eval" or "infer"', fixed = TRUE)
  expect_error(estimator_spec("eval", eval_metric_ops = list(1)), "named list")
  expect_error(predict(estimator(function(features, labels, mode) 1), input_fn(mtcars, "drat")),
               "estimator_spec")
  expect_identical(mode_keys(), list(TRAIN = "train", EVAL = "eval", PREDICT = "infer"))
  # the same values as Python's ModeKeys (tf$estimator$ModeKeys) and mode_keys()
  keys <- tf$estimator$ModeKeys
  expect_identical(list(TRAIN = keys$TRAIN, EVAL = keys$EVAL, PREDICT = keys$PREDICT), mode_keys())
  expect_identical(pyhooks:::py_pyhooks()$mode_keys(), mode_keys())
})

test_that("run_config() sets the model directory and seed of estimators", {
  skip_if_no_pyhooks()
  dir <- new_model_dir()
  config <- run_config(model_dir = dir, tf_random_seed = 42)
  model <- linear_regressor(mtcars_columns(), config = config)
  expect_identical(model_dir(model), normalizePath(dir))
  custom <- estimator(abalone_like_model_fn, config = config,
                      params = list(learning_rate = 0.001))
  expect_identical(model_dir(custom), normalizePath(dir))
  expect_error(linear_regressor(mtcars_columns(), config = list()), "run_config")
  expect_error(run_config(save_summary_steps = -1), "save_summary_steps")
})

test_that("run_config() writes summaries, step rates and checkpoints at their own steps", {
  skip_if_no_pyhooks()
  model <- estimator(abalone_like_model_fn, params = list(learning_rate = 0.001),
                     config = run_config(save_summary_steps = 3, log_step_count_steps = 2,
                                         save_checkpoints_steps = 4, keep_checkpoint_max = 2))
  quiet_train(model, mtcars_input(num_epochs = NULL), steps = 7)
  events <- event_values(model_dir(model))
  expect_identical(events$step[events$tag == "loss"], c(1, 4, 7))
  # measured at step 1, then written every 2 steps
  expect_identical(events$step[events$tag == "global_step/sec"], c(3, 5, 7))
  expect_true(all(events$value[events$tag == "global_step/sec"] > 0))
  # saved at steps 0, 4 and 7; two kept
  kept <- sort(as.integer(sub("^model\\.ckpt-([0-9]+)\\.index$", "\\1",
                              list.files(model_dir(model), "\\.index$"))))
  expect_identical(kept, c(4L, 7L))
  # and one every keep_checkpoint_every_n_hours (here ~4 microseconds): every one kept
  every <- linear_regressor(mtcars_columns(), config = run_config(
    save_checkpoints_steps = 4, keep_checkpoint_max = 2, keep_checkpoint_every_n_hours = 1e-9))
  quiet_train(every, mtcars_input(num_epochs = NULL), steps = 7)
  expect_length(list.files(model_dir(every), "\\.index$"), 3L)
  expect_error(run_config(keep_checkpoint_every_n_hours = 0), "keep_checkpoint_every_n_hours")
})

test_that("a convolutional model_fn as tfestimators' layers example, with a logging hook", {
  skip_if_no_pyhooks()
  # 8x8 one-channel "images", one column per pixel; the class is whether the
  # top half is brighter than the bottom half
  set.seed(2)
  n <- 64
  pixels <- matrix(runif(n * 64), n, 64)
  images <- as.data.frame(pixels)
  images$label <- as.integer(rowSums(pixels[, 1:32]) > rowSums(pixels[, 33:64]))
  cnn_model_fn <- function(features, labels, mode, params, config) {
    input_layer <- tf$reshape(features, c(-1L, 8L, 8L, 1L))
    conv1 <- tf$layers$conv2d(inputs = input_layer, filters = 4L, kernel_size = c(3L, 3L),
                              padding = "same", activation = tf$nn$relu)
    pool1 <- tf$layers$max_pooling2d(inputs = conv1, pool_size = c(2L, 2L), strides = 2L)
    pool1_flat <- tf$reshape(pool1, c(-1L, 4L * 4L * 4L))
    dense <- tf$layers$dense(inputs = pool1_flat, units = 16L, activation = tf$nn$relu)
    dropout <- tf$layers$dropout(inputs = dense, rate = 0.4, training = (mode == "train"))
    logits <- tf$layers$dense(inputs = dropout, units = 2L)
    predicted_classes <- tf$argmax(input = logits, axis = 1L, name = "predicted_classes")
    if (mode == "infer") {
      return(estimator_spec(mode = mode, predictions = list(
        classes = predicted_classes,
        probabilities = tf$nn$softmax(logits, name = "softmax_tensor")
      )))
    }
    onehot_labels <- tf$one_hot(indices = tf$cast(labels, tf$int32), depth = 2L)
    loss <- tf$losses$softmax_cross_entropy(onehot_labels = onehot_labels, logits = logits)
    if (mode == "train") {
      optimizer <- tf$train$GradientDescentOptimizer(learning_rate = 0.001)
      train_op <- optimizer$minimize(loss = loss, global_step = tf$train$get_global_step())
      return(estimator_spec(mode = mode, loss = loss, train_op = train_op))
    }
    eval_metric_ops <- list(accuracy = tf$metrics$accuracy(
      labels = labels, predictions = predicted_classes))
    estimator_spec(mode = mode, loss = loss, eval_metric_ops = eval_metric_ops)
  }
  classifier <- estimator(model_fn = cnn_model_fn)
  input <- input_fn(images, features = -label, response = label, batch_size = 16, epochs = NULL)
  quiet_train(classifier, input, steps = 4)
  logged <- character()
  logging_hook <- hook_logging_tensor(tensors = list(predicted_classes = "predicted_classes"),
                                      every_n_iter = 2,
                                      formatter = function(values) {
                                        logged <<- c(logged, paste(values$predicted_classes,
                                                                   collapse = ""))
                                        ""
                                      })
  metrics <- suppressMessages(evaluate(classifier, input_fn = input, steps = 4,
                                       hooks = list(logging_hook)))
  expect_identical(metrics$global_step, 4L)
  expect_true("accuracy" %in% names(metrics))
  expect_length(logged, 2L)
  expect_match(logged, "^[01]{16}$")
})

# tfestimators' iris model of its tests and its custom-decay example, in our
# words: three hidden layers stacked with tf$contrib$layers (dropout in the
# normalizer's place), a linear output layer, and optimize_loss().
contrib_model_fn <- function(features, labels, mode, params, config) {
  logits <- features %>%
    tf$contrib$layers$stack(tf$contrib$layers$fully_connected, c(8L, 16L, 8L),
                            normalizer_fn = tf$contrib$layers$dropout,
                            normalizer_params = list(keep_prob = 0.95)) %>%
    tf$contrib$layers$fully_connected(3L, activation_fn = NULL)
  predictions <- list(classes = tf$argmax(logits, 1L), probabilities = tf$nn$softmax(logits))
  if (mode == mode_keys()$PREDICT) {
    return(estimator_spec(mode = mode, predictions = predictions))
  }
  loss <- tf$losses$softmax_cross_entropy(tf$one_hot(labels, 3L), logits)
  train_op <- tf$contrib$layers$optimize_loss(
    loss, tf$contrib$framework$get_global_step(), optimizer = "Adagrad", learning_rate = 0.1)
  estimator_spec(mode = mode, predictions = predictions, loss = loss, train_op = train_op)
}

test_that("tf$contrib's layers, optimize_loss() and get_global_step() build a model", {
  skip_if_no_pyhooks()
  input <- input_fn(iris, response = "Species", features = -Species, batch_size = 10)
  model <- estimator(contrib_model_fn)
  history <- quiet_train(model, input, steps = 6)
  expect_identical(history$steps[[nrow(history)]], 6L)
  names <- variable_names(model)
  # TensorFlow 1.x's variable names: a scope per stacked layer, weights without biases
  # where dropout takes the normalizer's place, then the output layer with biases
  expect_true(all(c("Stack/fully_connected_1/weights", "Stack/fully_connected_3/weights",
                    "fully_connected/weights", "fully_connected/biases",
                    "OptimizeLoss/learning_rate") %in% names))
  expect_false("Stack/fully_connected_1/biases" %in% names)
  expect_identical(dim(variable_value(model, "Stack/fully_connected_2/weights")[[1]]), c(8L, 16L))
  expect_equal(variable_value(model, "OptimizeLoss/learning_rate")[[1]], 0.1, tolerance = 1e-7)
  # float64 features make a float64 network: probabilities sum to 1 within double precision
  predictions <- predict(model, input_fn = input, simplify = FALSE)
  expect_length(predictions, 150L)
  sums <- vapply(predictions, function(p) sum(p$prob), numeric(1))  # `$prob`: partial match
  expect_equal(sums, rep(1, 150), tolerance = 1e-12)
  expect_true(all(vapply(predictions, function(p) p$class, numeric(1)) %in% 0:2))
  expect_identical(dim(predict(model, input_fn = input)), c(150L, 2L))
  expect_named(evaluate(model, input, steps = 2, simplify = FALSE), c("loss", "global_step"))
  # what pyhooks does not provide names its replacement
  expect_error(tf$contrib$learn$read_batch_features, "tf.contrib.learn.read_batch_features is gone")
  expect_error(tf$contrib$layers$conv2d, "use tf.layers.conv2d")
  expect_error(tf$contrib$layers$optimize_loss(tf$constant(1), NULL, 0.1, "Momentum"),
               "`optimizer` .Momentum. is not one of")
})

test_that("tf$layers name what they got when it is not a tensor", {
  skip_if_no_pyhooks()
  # outside a model_fn, the articles' `input_layer` is pyhooks' function, not a tensor
  expect_error(tf$layers$dense(inputs = input_layer, units = 10L, activation = tf$nn$relu),
               "dense\\(\\): `inputs` must be a tensor .*, got a function\\.")
  expect_error(tf$layers$flatten(NULL), "flatten\\(\\): `inputs` .*, got None \\(NULL in R\\)")
})

test_that("R hooks see a custom estimator's loss in the losses collection", {
  skip_if_no_pyhooks()
  seen <- numeric()
  hook <- session_run_hook(
    before_run = function(context) {
      session_run_args(losses = context$session$graph$get_collection("losses"))
    },
    after_run = function(context, values) seen <<- c(seen, values$results$losses[[1]])
  )
  model <- estimator(abalone_like_model_fn, params = list(learning_rate = 0.001))
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 3,
                         hooks = list(hook, hook_history_saver(every_n_step = 1)))
  expect_length(seen, 3L)
  expect_equal(seen, history$mean_losses, tolerance = 1e-5)
})

test_that("run_config(steps_per_execution =) runs several steps per call, counted exactly", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns(),
                            config = run_config(steps_per_execution = 4,
                                                save_checkpoints_steps = 8))
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = 10,
                         hooks = list(hook_history_saver(every_n_step = 4)))
  # one row per call that reaches a multiple of 4, and the last (shorter) call's step
  expect_identical(as.data.frame(history)$steps, c(4L, 8L, 10L))
  saved <- sub("^model\\.ckpt-([0-9]+)\\.index$", "\\1",
               list.files(model_dir(model), pattern = "^model\\.ckpt-[0-9]+\\.index$"))
  expect_identical(sort(as.numeric(saved)), c(0, 8, 10))
  expect_error(run_config(steps_per_execution = 0), "steps_per_execution")
  expect_error(run_config(steps_per_execution = 2.5), "steps_per_execution")
})

test_that("run_config() takes how often several workers agree on stopping", {
  skip_if_no_pyhooks()
  expect_identical(run_config()$agree_every_n_steps, "auto")
  expect_identical(run_config(agree_every_n_steps = 10)$agree_every_n_steps, 10L)
  expect_null(run_config(agree_every_n_steps = NULL)$agree_every_n_steps)
  expect_error(run_config(agree_every_n_steps = "sometimes"), "agree_every_n_steps")
  expect_error(run_config(agree_every_n_steps = 2.5), "agree_every_n_steps")
  expect_error(run_config(agree_every_n_steps = 0), "agree_every_n_steps")
})

# tfestimators passed an input function of no arguments to TensorFlow as it was:
# here a custom estimator calls it in each call's graph; it returns a dataset.
mtcars_dataset <- function(repeated = FALSE, labels = TRUE) {
  function() {
    features <- list(drat = mtcars$drat, wt = mtcars$wt)
    slices <- if (labels) reticulate::tuple(features, mtcars$mpg) else features
    dataset <- tf$data$Dataset$from_tensor_slices(slices)
    if (repeated) dataset <- dataset$`repeat`()
    dataset$batch(8L)
  }
}

two_column_model_fn <- function(features, labels, mode) {
  inputs <- tf$stack(list(features$drat, features$wt), axis = 1L)
  predictions <- tf$reshape(tf$layers$dense(inputs, 1L), list(-1L))
  if (mode == "infer") return(estimator_spec(mode, predictions = list(mpg = predictions)))
  loss <- tf$losses$mean_squared_error(labels, predictions)
  optimizer <- tf$train$AdamOptimizer(0.1)
  estimator_spec(mode, loss = loss,
                 train_op = optimizer$minimize(loss, global_step = tf$train$get_global_step()))
}

test_that("a custom estimator takes an input function of no arguments returning a dataset", {
  skip_if_no_pyhooks()
  model <- estimator(two_column_model_fn)
  history <- quiet_train(model, mtcars_dataset(repeated = TRUE), steps = 30)
  expect_identical(history$steps[[nrow(history)]], 30L)
  # a dataset that ends ends training: 32 rows in batches of 8
  history <- quiet_train(model, mtcars_dataset(), steps = NULL)
  expect_identical(attr(history, "stop")$reason, "end_of_input")
  expect_identical(attr(history, "stop")$step, 34L)
  # the same model on the same rows, through the dataset or numpy_input_fn()
  arrays <- numpy_input_fn(list(drat = mtcars$drat, wt = mtcars$wt), mtcars$mpg,
                           batch_size = 8L, shuffle = FALSE)
  through_dataset <- evaluate(model, mtcars_dataset())
  expect_identical(through_dataset$global_step, 34L)
  expect_equal(through_dataset$loss, evaluate(model, arrays)$loss, tolerance = 1e-6)
  predicted <- predict(model, mtcars_dataset(labels = FALSE))
  expect_length(predicted, 32L)
  expect_equal(predicted, predict(model, arrays), tolerance = 1e-6)
  expect_error(predict(model, mtcars_dataset(repeated = TRUE)), "repeats forever")
  # R hooks run on its steps; an error in one keeps what was trained and recorded
  n <- 0
  failing <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 3) stop("stop here")
  })
  err <- expect_error(
    quiet_train(model, mtcars_dataset(repeated = TRUE), steps = 10,
                hooks = list(hook_history_saver(every_n_step = 1), failing)),
    "stop here"
  )
  expect_identical(err$history$steps, 35:37)
  expect_identical(evaluate(model, mtcars_dataset())$global_step, 37L)
  # train_and_evaluate() takes them in its specs
  history <- suppressMessages(train_and_evaluate(
    model,
    train_spec(mtcars_dataset(repeated = TRUE), max_steps = 43),
    eval_spec(mtcars_dataset(), steps = NULL, start_delay_secs = 0, throttle_secs = 0)
  ))
  final <- evaluate(model, mtcars_dataset())
  expect_identical(final$global_step, 43L)
  expect_equal(history$eval_loss[[nrow(history)]], final$loss, tolerance = 1e-6)
})

test_that("an input function of no arguments is refused where it cannot be read", {
  skip_if_no_pyhooks()
  canned <- linear_regressor(mtcars_columns())
  expect_error(quiet_train(canned, mtcars_dataset(), steps = 1),
               "a function of no arguments, is an input of custom estimators",
               class = "pyhooks_error_argument")
  model <- estimator(two_column_model_fn)
  err <- expect_error(quiet_train(model, function() list(mtcars$drat, mtcars$mpg), steps = 1),
                      "must return a TensorFlow dataset (`tf$data$Dataset`), not a list",
                      fixed = TRUE, class = "pyhooks_error_argument")
  expect_match(format(err$call)[[1L]], "^train\\(")
  # the user's error is the parent of an R error naming the input function
  err <- expect_error(quiet_train(model, function() stop("the data went away"), steps = 1),
                      class = "pyhooks_callback_error")
  expect_identical(err$callback, "input_fn")
  expect_match(conditionMessage(err),
               "Training stopped by an error in the input function (`input_fn`)", fixed = TRUE)
  expect_identical(conditionMessage(err$parent), "the data went away")
  expect_false(file.exists(file.path(model_dir(model), "checkpoint")))
  err <- expect_error(suppressMessages(train_and_evaluate(
    model, train_spec(mtcars_dataset(repeated = TRUE), max_steps = 2),
    eval_spec(function() stop("no evaluation data"), start_delay_secs = 0, throttle_secs = 0)
  )), class = "pyhooks_callback_error")
  expect_identical(err$callback, "input_fn")
  expect_identical(conditionMessage(err$parent), "no evaluation data")
  expect_identical(err$history$steps, 2L) # the steps trained before the evaluation
})

# An error of the user's model_fn: an R error naming it (and the mode), whose parent is
# the user's own condition, of its class, in each call that builds the model.
test_that("an error in a model_fn is the parent of an R error naming the model function", {
  skip_if_no_pyhooks()
  failing_in <- function(failing_mode) {
    force(failing_mode)
    function(features, labels, mode) {
      # rlang's errors record the call stack, and stopifnot() formats its call
      if (mode == failing_mode) rlang::abort("no model here", class = "my_model_error")
      if (mode == "eval") stopifnot("no evaluation here" = FALSE)
      two_column_model_fn(features, labels, mode)
    }
  }
  model <- estimator(failing_in("train"))
  err <- expect_error(quiet_train(model, mtcars_dataset(), steps = 1),
                      class = "pyhooks_callback_error")
  expect_identical(err$callback, "model_fn")
  expect_match(conditionMessage(err),
               "Training stopped by an error in the model function (`model_fn`, mode \"train\")",
               fixed = TRUE)
  expect_s3_class(err$parent, "my_model_error")
  expect_identical(conditionMessage(err$parent), "no model here")
  expect_true(rlang::cnd_inherits(err, "my_model_error")) # rlang's look along the parents
  expect_false(file.exists(file.path(model_dir(model), "checkpoint")))

  model <- estimator(failing_in("infer"))
  quiet_train(model, mtcars_dataset(), steps = 2)
  err <- expect_error(evaluate(model, mtcars_dataset()), class = "pyhooks_callback_error")
  expect_match(conditionMessage(err), "Evaluation stopped by an error in the model function")
  expect_identical(conditionMessage(err$parent), "no evaluation here")
  for (call in list(quote(predict(model, mtcars_dataset(labels = FALSE))),
                    quote(export_savedmodel(model, tempfile())))) {
    err <- expect_error(eval(call), class = "pyhooks_callback_error")
    expect_match(conditionMessage(err), "mode \"infer\"", fixed = TRUE)
    expect_match(conditionMessage(err), paste0("^", c(predict = "Prediction",
                 export_savedmodel = "Export")[[as.character(call[[1L]])]]))
    expect_s3_class(err$parent, "my_model_error")
  }
  # a later call that fails elsewhere does not report the model_fn's earlier error
  err <- expect_error(evaluate(model, input_fn(mtcars, features = "drat", response = "mpg")))
  expect_false(inherits(err, "pyhooks_callback_error"))
  # an interrupt (Ctrl-C) in a model_fn or an input function stays an interrupt
  interrupted <- function(expr) {
    tryCatch(expr, interrupt = function(cnd) class(cnd)[[1L]], error = function(cnd) "error")
  }
  expect_identical(interrupted(quiet_train(estimator(function(features, labels, mode) {
    rlang::interrupt()
  }), mtcars_dataset(), steps = 1)), "pyhooks_interrupt")
  expect_identical(interrupted(quiet_train(estimator(two_column_model_fn),
                                           function() rlang::interrupt(), steps = 1)),
                   "pyhooks_interrupt")
})
