# How hooks, estimators and feature columns print.

test_that("hooks print as their R function with their settings", {
  skip_if_no_pyhooks()
  expect_identical(format(hook_history_saver(every_n_step = 2)),
                   "<hook_history_saver: every_n_step = 2>")
  expect_output(print(hook_stop_at_step(num_steps = 5)), "^<hook_stop_at_step: num_steps = 5>$")
  bar <- format(hook_progress_bar(mode = "plain"))
  expect_match(bar, '^<hook_progress_bar: label = "Training", writer = <function>, mode = "plain", min_interval = 0.1>$')
  expect_identical(format(hook_nan_tensor("loss:0", fail_on_nan_loss = FALSE)),
                   '<hook_nan_tensor: loss_tensor = "loss:0", fail_on_nan_loss = FALSE, fail_on_inf = TRUE>')
  expect_identical(format(session_run_hook(before_run = function(context) NULL,
                                           end = function(session) NULL)),
                   "<session_run_hook: before_run, end>")
})

test_that("secrets are not printed", {
  skip_if_no_pyhooks()
  hook <- hook_configure_gcs(credentials = list(client_id = "id", client_secret = "s3cret",
                                                refresh_token = "t", type = "authorized_user"))
  expect_false(grepl("s3cret", format(hook), fixed = TRUE))
  expect_match(format(hook), "credentials = <hidden>")
})

test_that("feature columns and estimators print what they are", {
  skip_if_no_pyhooks()
  expect_identical(format(column_numeric("drat")), '<column_numeric: key = "drat">')
  expect_identical(format(column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 6, 8))),
                   '<column_categorical_with_vocabulary_list: key = "cyl", vocabulary_list = c(4, 6, 8)>')
  fcs <- feature_columns(column_numeric("drat", "cyl"))
  expect_identical(format(fcs)[[1]], "<feature_columns: 2 columns>")
  expect_output(print(fcs), '  <column_numeric: key = "cyl">', fixed = TRUE)
  cyl <- column_categorical_with_identity("gear", num_buckets = 6)
  expect_match(format(column_indicator(cyl)),
               '^<column_indicator: categorical_column = <column_categorical_with_identity: key = "gear", num_buckets = 6>>$')
  dir <- tempfile("model")
  model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = dir)
  expect_identical(format(model), sprintf("<linear_regressor: 1 feature column (drat), model_dir %s>",
                                          normalizePath(dir)))
  expect_output(print(dnn_regressor(c(2, 2), fcs)), "^<dnn_regressor: 2 feature columns \\(")
  wide_deep <- dnn_linear_combined_regressor(
    linear_feature_columns = feature_columns(column_numeric("drat", "wt"), column_indicator(cyl)),
    dnn_feature_columns = feature_columns(column_numeric("drat", "wt")), dnn_hidden_units = 2)
  expect_match(format(wide_deep), "^<dnn_linear_combined_regressor: 3 feature columns \\(drat, gear_indicator, wt\\), ")
})

test_that("str(), summary() and format() of an estimator show R values, not the Python object", {
  skip_if_no_pyhooks()
  model <- linear_regressor(mtcars_columns())
  out <- capture.output(value <- str(model))
  expect_null(value)
  expect_identical(out[[1]], "<linear_regressor> a pyhooks estimator (Python object) of")
  expect_match(out, '^ \\$ feature_columns: chr "drat"$', all = FALSE)
  expect_match(out, "^ \\$ global_step +: int NA$", all = FALSE)
  expect_no_match(paste(out, collapse = "\n"), "columns \\[drat\\]") # the Python repr
  quiet_train(model, steps = 2)
  s <- summary(model)
  expect_s3_class(s, "summary.pyhooks_estimator")
  expect_identical(s$global_step, 2L)
  expect_identical(s$feature_columns, "drat")
  expect_identical(s$config$save_summary_steps, 100L)
  printed <- capture.output(print(s))
  expect_identical(printed[[1]], "linear_regressor, a pyhooks estimator")
  expect_match(printed, "trained: +to step 2 \\(checkpoint model.ckpt-2\\)$", all = FALSE)
  expect_match(printed, "config: +save_summary_steps = 100, ", all = FALSE)
  expect_match(format(model), "^<linear_regressor: 1 feature column \\(drat\\), model_dir ")
  custom <- estimator(function(features, labels, mode) NULL)
  expect_match(format(custom), "^<estimator: model_fn, model_dir ")
  expect_null(summary(custom)$feature_columns)
})

test_that("str(), summary() and format() of a history", {
  skip_if_no_pyhooks()
  history <- quiet_train(linear_regressor(mtcars_columns()), steps = 4,
                         hooks = list(hook_history_saver(every_n_step = 2)))
  out <- capture.output(value <- str(history))
  expect_null(value)
  expect_identical(out[[1]], "pyhooks_history: 2 rows (steps 2 to 4) of 3 columns")
  expect_match(out[[4]], "^ \\$ steps +: int \\[1:2\\] 2 4$")
  s <- summary(history)
  expect_s3_class(s, "summary.pyhooks_history")
  expect_identical(s$steps, c(2L, 4L))
  printed <- capture.output(print(s))
  expect_identical(printed[[1]], "<pyhooks_history: 2 rows (steps 2 to 4)>")
  expect_identical(printed[[2]], "Stopped: steps reached at step 4")
  expect_match(printed[[3]], "^Last row \\(step 4\\): mean_losses = [0-9.]+, total_losses = [0-9.]+$")
  expect_match(printed[[4]], "mean_losses +total_losses")
  expect_identical(format(history)[[1]], "  mean_losses total_losses steps")
  expect_identical(capture.output(print(summary(history[0, ]))),
                   c("<pyhooks_history: no rows>", "Stopped: steps reached at step 4"))
  expect_identical(attr(history[2, ], "run"), 1L)
})

test_that("an input prints in R's spelling", {
  skip_if_no_pyhooks()
  expect_output(print(input_fn(mtcars, features = c(drat, cyl), response = mpg, batch_size = 8)),
                '^<input_fn: 32 rows, features = c\\("drat", "cyl"\\), response = "mpg", batch_size = 8, shuffle = "auto", num_epochs = 1>$')
  expect_identical(format(input_fn(mtcars, features = "drat", num_epochs = NULL)),
                   '<input_fn: 32 rows, features = "drat", batch_size = 128, shuffle = "auto", num_epochs = NULL (forever)>')
  path <- tempfile(fileext = ".csv")
  write.csv(mtcars, path, row.names = FALSE)
  expect_identical(format(input_fn(path, features = "drat", response = "mpg", shuffle = FALSE)),
                   sprintf('<input_fn: csv file "%s", features = "drat", response = "mpg", batch_size = 128, shuffle = FALSE, num_epochs = 1>',
                           normalizePath(path)))
})
