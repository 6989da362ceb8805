# input_fn() from CSV and TFRecord files in R: streamed through TensorFlow, checked
# as data frames are, with errors naming the column, the file and the row.

big_cars <- function(times = 80L) { # 2560 rows: more than one chunk of the stream
  data <- mtcars[rep(seq_len(nrow(mtcars)), times), c("mpg", "drat", "wt", "cyl", "am")]
  data$am <- ifelse(data$am == 1, "yes", "no")
  rownames(data) <- NULL
  data
}

write_cars <- function(data = big_cars()) {
  path <- tempfile(fileext = ".csv")
  utils::write.csv(data, path, row.names = FALSE)
  path
}

test_that("a CSV file trains, evaluates and predicts like the same data frame", {
  skip_if_no_pyhooks()
  data <- big_cars()
  path <- write_cars(data)
  fcs <- feature_columns(column_numeric("drat", "wt", "cyl"))
  files <- input_fn(path, features = c("drat", "wt", "cyl"), response = "mpg",
                    batch_size = 64L, shuffle = FALSE)
  frame <- input_fn(data, features = c("drat", "wt", "cyl"), response = "mpg",
                    batch_size = 64L, shuffle = FALSE)
  a <- linear_regressor(feature_columns = fcs, seed = 1L)
  b <- linear_regressor(feature_columns = fcs, seed = 1L)
  history_a <- quiet_train(a, files, steps = 20)
  history_b <- quiet_train(b, frame, steps = 20)
  expect_equal(history_a$mean_losses, history_b$mean_losses, tolerance = 1e-5)
  expect_equal(evaluate(a, files)$average_loss, evaluate(b, frame)$average_loss,
               tolerance = 1e-5)
  predicted <- predict(a, input_fn(path, features = c("drat", "wt", "cyl"), batch_size = 500L))
  expect_length(predicted, nrow(data)) # a regressor: one prediction per row
})

test_that("text labels of a CSV file are the classifier's classes", {
  skip_if_no_pyhooks()
  path <- write_cars()
  model <- linear_classifier(feature_columns = feature_columns(column_numeric("drat", "wt")),
                             label_vocabulary = c("no", "yes"))
  quiet_train(model, input_fn(path, features = c("drat", "wt"), response = "am"), steps = 10)
  expect_true(evaluate(model, input_fn(path, features = c("drat", "wt"),
                                       response = "am"))$accuracy > 0.5)
})

test_that("an NA past the rows input_fn() reads names the column, the file and the row", {
  skip_if_no_pyhooks()
  data <- big_cars()
  data$wt[2100] <- NA # write.csv writes "NA"
  path <- write_cars(data)
  model <- linear_regressor(feature_columns = feature_columns(column_numeric("drat", "wt")))
  expect_error(
    quiet_train(model, input_fn(path, features = c("drat", "wt"), response = "mpg")),
    "\"wt\" of file \".*\" holds \"NA\" at row 2100 \\(line 2101\\): a missing value"
  )
  data$wt[2100] <- 1.5
  data$wt[3] <- NA
  expect_error(input_fn(write_cars(data), features = c("drat", "wt"), response = "mpg"),
               "holds \"NA\" at row 3 \\(line 4\\)", class = "pyhooks_python_ValueError")
})

test_that("bad files and arguments are refused with R's names", {
  skip_if_no_pyhooks()
  path <- write_cars(big_cars(1L))
  expect_error(input_fn(path, features = "nope"), "no column \"nope\"")
  expect_error(input_fn(path, features = c(drat, wt)), class = "pyhooks_error_argument")
  expect_error(input_fn(path, features = "drat", column_types = c("integer")),
               "named character vector", class = "pyhooks_error_argument")
  expect_error(input_fn(path, features = "drat", column_types = c(drat = "Date")),
               "\"double\", \"integer\", \"character\"")
  empty <- tempfile(fileext = ".csv")
  file.create(empty)
  expect_error(input_fn(empty, features = "drat"), "is empty")
  expect_error(input_fn(file.path(tempdir(), "none-*.csv"), features = "drat"),
               "no file matches")
  typed <- input_fn(path, features = c("drat", "cyl"), column_types = c(cyl = "double"))
  expect_equal(typed$types$cyl, "numeric")
})

test_that("the schema recorded from a data frame holds a CSV file, in R's words", {
  skip_if_no_pyhooks()
  data <- big_cars(2L)
  model <- linear_regressor(feature_columns = feature_columns(column_numeric("drat")),
                            model_dir = tempfile("files_schema_"))
  quiet_train(model, input_fn(data, features = "drat", response = "mpg"), steps = 2)
  data$drat <- ifelse(data$drat > 3.5, "high", "low")
  expect_error(evaluate(model, input_fn(write_cars(data), features = "drat", response = "mpg")),
               "holds character values; the model was trained on numeric")
})

test_that("TFRecord files are read with a parsing spec", {
  skip_if_no_pyhooks()
  tf <- reticulate::import("tensorflow")
  path <- tempfile(fileext = ".tfrecord")
  writer <- tf$io$TFRecordWriter(path)
  for (i in seq_len(nrow(mtcars))) {
    example <- tf$train$Example(features = tf$train$Features(feature = list(
      drat = tf$train$Feature(float_list = tf$train$FloatList(value = list(mtcars$drat[[i]]))),
      mpg = tf$train$Feature(float_list = tf$train$FloatList(value = list(mtcars$mpg[[i]])))
    )))
    writer$write(example$SerializeToString())
  }
  writer$close()
  drat <- column_numeric("drat")
  spec <- regressor_parse_example_spec(drat, label_key = "mpg")
  input <- input_fn(path, features = "drat", response = "mpg", example_spec = spec,
                    batch_size = 8L)
  model <- linear_regressor(feature_columns = feature_columns(drat))
  quiet_train(model, input, steps = 3)
  expect_length(predict(model, input), nrow(mtcars))
})
