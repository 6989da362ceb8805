# train(), evaluate(), predict() and the history.

test_that("SPEC section 3's progress bar example runs as written", {
  skip_if_no_pyhooks()
  old <- options(pyhooks.progress = "plain")
  on.exit(options(old))
  fcs <- feature_columns(column_numeric("drat"))
  input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = 8L)
  messages <- capture_messages(
    lr <- linear_regressor(feature_columns = fcs) %>%
      train(input_fn = input, steps = 2, hooks = list(hook_progress_bar()))
  )
  out <- strsplit(paste(messages, collapse = ""), "\n", fixed = TRUE)[[1]]
  expect_match(out[[length(out)]], "^Training 2/2 \\[={38}\\] - ETA: 0s - loss: [0-9]+\\.[0-9]{2}$")
  expect_s3_class(lr, "pyhooks_history")
})

test_that("SPEC section 3's history example runs as written", {
  skip_if_no_pyhooks()
  fcs <- feature_columns(column_numeric("drat"))
  input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = 8L)
  suppressMessages({ # the progress bar
    lr <- linear_regressor(feature_columns = fcs)
    training_history <- train(lr, input_fn = input, steps = 4,
                              hooks = list(hook_history_saver(every_n_step = 2)))
  })
  printed <- capture.output(training_history)
  expect_identical(printed[[1]], "  mean_losses total_losses steps")
  expect_match(printed[[2]], "^1 +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +2$")
  expect_match(printed[[3]], "^2 +[0-9]+\\.[0-9]+ +[0-9]+\\.[0-9]+ +4$")
  expect_equal(training_history$total_losses, 8 * training_history$mean_losses, tolerance = 1e-5)
  expect_true(all(training_history$mean_losses > 50 & training_history$mean_losses < 2000))
})

test_that("train() returns the history invisibly; print and as.data.frame show it", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  expect_invisible(history <- quiet_train(model, steps = 2,
                                          hooks = list(hook_history_saver(every_n_step = 1))))
  expect_s3_class(history, c("pyhooks_history", "data.frame"))
  df <- as.data.frame(history)
  expect_identical(class(df), "data.frame")
  expect_named(df, c("mean_losses", "total_losses", "steps"))
  expect_identical(df$steps, 1:2)
  expect_output(print(history), "mean_losses total_losses steps")
  fixed <- pyhooks:::new_history(NULL)
  expect_output(print(fixed), "no rows recorded")
})

test_that("a history where the estimator belongs is an error saying what to keep", {
  skip_if_no_pyhooks()
  # `model <- estimator %>% train(...)` keeps the history, not the model
  suppressMessages(model <- linear_regressor(mtcars_columns()) %>% train(mtcars_input(), steps = 1))
  expect_s3_class(model, "pyhooks_history")
  input <- mtcars_input()
  for (call in list(quote(train(model, input, steps = 1)), quote(evaluate(model, input)),
                    quote(predict(model, input)), quote(export_savedmodel(model, tempfile())),
                    quote(model_dir(model)))) {
    err <- expect_error(eval(call), class = "pyhooks_error_argument")
    text <- cli::ansi_strip(conditionMessage(err))
    expect_match(text, "`object` must be an estimator, not the training history that `train()` returns.",
                 fixed = TRUE)
    expect_match(text, "`model <- linear_regressor(...)`", fixed = TRUE)
    expect_identical(deparse(conditionCall(err)[[1]]), deparse(call[[1]]))
  }
  expect_error(evaluate(mtcars, input), "`object` must be an estimator, not a data frame",
               class = "pyhooks_error_argument")
})

test_that("a fixed history prints as SPEC section 3 shows", {
  history <- structure(
    data.frame(mean_losses = c(343.9690, 419.7618), total_losses = c(2751.752, 3358.094),
               steps = c(2L, 4L)),
    class = c("pyhooks_history", "data.frame")
  )
  expect_snapshot(print(history))
})

test_that("plot() draws one panel per metric with ggplot2, or base graphics", {
  skip_if_no_pyhooks()
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 4,
                         hooks = list(hook_history_saver(every_n_step = 1)))
  skip_if_not_installed("ggplot2")
  p <- plot(history)
  expect_s3_class(p, "ggplot")
  built <- expect_silent(ggplot2::ggplot_build(p))
  expect_identical(levels(p$data$metric), c("mean_losses", "total_losses"))
  expect_identical(nrow(built$layout$layout), 2L) # two panels
  expect_identical(vapply(p$layers, function(l) class(l$geom)[[1]], ""), c("GeomLine", "GeomPoint"))
  only <- plot(history, metrics = "total_losses")
  expect_identical(levels(only$data$metric), "total_losses")
  expect_error(plot(history, metrics = "nope"), "`metrics` must be `NULL` or some of")
  file <- tempfile(fileext = ".pdf")
  grDevices::pdf(file)
  expect_invisible(plot(history, method = "base"))
  grDevices::dev.off()
  expect_gt(file.size(file), 0)
})

test_that("plot() of a one-row history draws a point without warnings", {
  skip_if_not_installed("ggplot2")
  one <- pyhooks:::new_history(NULL)
  one <- structure(data.frame(mean_losses = 2, total_losses = 16, steps = 3L),
                   class = class(one))
  p <- plot(one)
  expect_silent(ggplot2::ggplot_build(p))
  expect_identical(vapply(p$layers, function(l) class(l$geom)[[1]], ""), "GeomPoint")
})

test_that("plot() draws evaluation columns as a second series of their metric", {
  skip_if_not_installed("ggplot2")
  history <- structure(
    data.frame(mean_losses = c(4, 3, 2), val_mean_losses = c(5, NA, 3), steps = 1:3),
    class = c("pyhooks_history", "data.frame")
  )
  p <- plot(history)
  expect_identical(levels(p$data$metric), "mean_losses")
  expect_setequal(unique(p$data$data), c("training", "evaluation"))
  expect_silent(ggplot2::ggplot_build(p))
  many <- structure(data.frame(mean_losses = 1:30 / 10, total_losses = 1:30, steps = 1:30),
                    class = c("pyhooks_history", "data.frame"))
  expect_identical(vapply(plot(many)$layers, function(l) class(l$geom)[[1]], ""), "GeomLine")
})

test_that("format() and print() of a history", {
  empty <- pyhooks:::new_history(NULL)
  expect_identical(format(empty)[[1]], "<pyhooks_history: no rows recorded>")
  history <- structure(data.frame(mean_losses = 2, total_losses = 16, steps = 3L),
                       class = c("pyhooks_history", "data.frame"))
  expect_output(print(history), "mean_losses total_losses steps")
})

test_that("each call has its own history; training continues from the last step", {
  skip_if_no_pyhooks()
  a <- linear_regressor(mtcars_columns())
  b <- linear_regressor(mtcars_columns())
  h1 <- quiet_train(a, steps = 2, hooks = list(hook_history_saver(every_n_step = 1)))
  h2 <- quiet_train(b, steps = 3, hooks = list(hook_history_saver(every_n_step = 1)))
  h3 <- quiet_train(a, steps = 2, hooks = list(hook_history_saver(every_n_step = 1)))
  expect_identical(h1$steps, 1:2)
  expect_identical(h2$steps, 1:3)
  expect_identical(h3$steps, 3:4)
})

test_that("without hooks, train() shows progress and records the history", {
  skip_if_no_pyhooks()
  old <- options(pyhooks.progress = "plain")
  on.exit(options(old))
  expect_message(history <- train(linear_regressor(mtcars_columns()), mtcars_input(), steps = 2),
                 "Training 2/2")
  expect_identical(history$steps, 2L)
  expect_message(history <- train(linear_regressor(mtcars_columns()), mtcars_input(), steps = 2,
                                  hooks = hook_history_saver(every_n_step = 1)),
                 "Training 2/2")
  expect_identical(history$steps, 1:2)
})

test_that("a failed training keeps what was recorded, in the condition and the CSV", {
  skip_if_no_pyhooks()
  path <- tempfile(fileext = ".csv")
  n <- 0
  failing <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 3) stop("stop here")
  })
  err <- expect_error(
    quiet_train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL), steps = 10,
                hooks = list(hook_history_saver(every_n_step = 1, path = path), failing)),
    "stop here"
  )
  expect_identical(err$history$steps, 1:3)
  expect_identical(utils::read.csv(path)$steps, 1:3)
})

test_that("bad arguments to train() are R errors with clear messages", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  input <- mtcars_input()
  expect_error(train(model, input, steps = 2.5), "`steps` must be a whole number, not 2.5",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, steps = -1), "`steps` must be positive, got -1",
               class = "pyhooks_python_error")
  expect_error(train(model, input, steps = "two"), "`steps` must be a whole number, got \"two\" (character)", fixed = TRUE)
  # what reticulate would turn into other values (NA and TRUE: True; NaN) is refused in R
  expect_error(train(model, input, steps = NA), "`steps` must be a whole number, not NA",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, steps = TRUE), "`steps` must be a whole number, not TRUE",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, steps = NA_integer_), "`steps` must be a whole number, not NA",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, max_steps = NaN), "`max_steps` must be a whole number, not NaN",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, steps = 2, max_steps = 3), "Can not provide both steps and max_steps")
  expect_error(train(model, mtcars_input(num_epochs = NULL)), "Training would never end")
  expect_error(train(model), "`input_fn` is absent")
  expect_error(train(model, input, steps = 2, hooks = "progress"),
               "`hooks` must be a list of hooks")
  expect_error(train(model, input, steps = 2, hooks = list(hook_progress_bar(), 42)),
               "`hooks\\[\\[2\\]\\]` must be a hook, not a number")
  expect_error(train(model, input, steps = 2, hooks = list(hook_progress_bar(), column_numeric("drat"))),
               "`hooks\\[\\[2\\]\\]` must be a SessionRunHook")
  expect_error(train(model, "input", steps = 2),
               "`input_fn` must be made by `input_fn\\(\\)`, not a string",
               class = "pyhooks_error_argument")
  # a data frame: an R error (reticulate's conversion of it fails in C++ without pandas)
  err <- expect_error(train(model, mtcars, steps = 2),
                      "`input_fn` must be made by `input_fn\\(\\)`, not a data frame",
                      class = "pyhooks_error_argument")
  expect_match(conditionMessage(err), "Wrap the data: `input_fn(data, features = ..., response = ...)`",
               fixed = TRUE)
  expect_error(evaluate(model, mtcars), "`input_fn` must be made by", class = "pyhooks_error_argument")
  expect_error(predict(model, list(1, 2)), "`input_fn` must be made by `input_fn\\(\\)`, not a list",
               class = "pyhooks_error_argument")
  expect_error(predict(model, input, predict_keys = NA), "`predict_keys` must not be `NA`",
               class = "pyhooks_error_argument")
  expect_error(evaluate(model, input, name = NA), "`name` must not be `NA`",
               class = "pyhooks_error_argument")
  expect_error(train(model, input, steps = 2, bogus = 1), "must be empty")
  expect_error(train(42, input), "`object` must be an estimator, not a number",
               class = "pyhooks_error_argument")
  expect_snapshot(train(model, input, steps = -1), error = TRUE)
})

test_that("max_steps trains up to a global step", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  history <- quiet_train(model, mtcars_input(num_epochs = NULL), steps = NULL, max_steps = 3,
                         hooks = list(hook_history_saver(every_n_step = 1)))
  expect_identical(history$steps, 1:3)
  expect_error(quiet_train(model, steps = NULL, max_steps = 1.5), "`max_steps` must be a whole number")
})

test_that("evaluate() returns the metrics and runs hooks", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 2)
  steps <- 0
  counter <- session_run_hook(after_run = function() steps <<- steps + 1)
  metrics <- evaluate(model, mtcars_input(), hooks = list(counter))
  expect_s3_class(metrics, "data.frame")
  expect_identical(nrow(metrics), 1L)
  expect_true(all(c("loss", "average_loss", "global_step") %in% names(metrics)))
  expect_identical(metrics$global_step, 2L)
  expect_identical(steps, 4)
  metrics <- evaluate(model, mtcars_input(), steps = 1)
  expect_true(is.numeric(metrics$loss))
  expect_error(evaluate(model, mtcars_input(), steps = 0.5), "`steps` must be a whole number")
  expect_error(evaluate(model, input_fn(mtcars, features = "drat")), "needs labels")
})

test_that("predict() returns one value per example", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 2)
  predictions <- predict(model, input_fn(mtcars, features = c("drat", "cyl")))
  expect_type(predictions, "double")
  expect_null(dim(predictions))
  expect_length(predictions, nrow(mtcars))
  rows <- predict(model, input_fn(mtcars[1:3, ], features = "drat"), simplify = FALSE)
  expect_length(rows, 3L)
  expect_named(rows[[1]], "predictions")
  expect_equal(rows[[1]]$predictions, predictions[[1]], tolerance = 1e-6)
  expect_error(predict(model, input_fn(mtcars, features = "drat"), predict_keys = "nope"),
               "unknown key")
})
