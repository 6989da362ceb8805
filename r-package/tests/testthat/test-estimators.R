# Estimators, feature columns and input_fn().

test_that("linear_regressor() trains, evaluates and predicts", {
  skip_if_no_pyhooks()
  model <- linear_regressor(feature_columns = mtcars_columns(), seed = 1)
  expect_s3_class(model, "pyhooks_estimator")
  expect_output(print(model), "^<linear_regressor: 1 feature column \\(drat\\), model_dir ")
  history <- quiet_train(model, steps = 2)
  expect_identical(history$steps, 2L)
  expect_error(linear_regressor(), "`feature_columns` is absent")
  expect_error(linear_regressor(mtcars_columns(), label_dimension = 1.5), "whole number")
  expect_error(linear_regressor(mtcars_columns(), optimizer = "Magic"), "optimizer")
})

test_that("predict() refuses an input that shuffles: its rows would not be the data's", {
  skip_if_no_pyhooks()
  model <- linear_regressor(feature_columns = mtcars_columns(), seed = 1)
  quiet_train(model, steps = 1)
  expect_error(predict(model, input_fn(mtcars, features = "drat", shuffle = TRUE)),
               "`input_fn` shuffles its rows (shuffle=TRUE), so the predictions would not follow",
               fixed = TRUE)
  in_order <- predict(model, input_fn(mtcars, features = "drat", shuffle = FALSE))
  expect_identical(in_order, predict(model, input_fn(mtcars, features = "drat")))
  expect_equal(abs(cor(in_order, mtcars$drat)), 1, tolerance = 1e-5) # linear in drat, row by row
})

test_that("linear_classifier() predicts classes and probabilities", {
  skip_if_no_pyhooks()
  input <- input_fn(mtcars, features = c("wt", "hp"), response = "am", batch_size = 8L)
  model <- linear_classifier(feature_columns(column_numeric("wt", "hp")), n_classes = 2)
  quiet_train(model, input, steps = 3)
  metrics <- evaluate(model, input)
  expect_true("accuracy" %in% names(metrics))
  predictions <- predict(model, input_fn(mtcars, features = c("wt", "hp")))
  expect_identical(nrow(predictions), 32L)
  expect_true(all(c("probabilities", "class_ids") %in% names(predictions)))
  expect_identical(dim(predictions$probabilities), c(32L, 2L))
  expect_equal(rowSums(predictions$probabilities), rep(1, 32), tolerance = 1e-5)
  expect_null(dim(predictions$class_ids)) # one value per example: a vector column
  expect_length(predictions$class_ids, 32L)
  expect_error(linear_classifier(mtcars_columns(), n_classes = 2.5), "`n_classes` must be a whole number")
})

test_that("a classifier's probabilities and logits are named by class, as the model knows them", {
  skip_if_no_pyhooks()
  data <- transform(mtcars, gears = factor(gear, levels = c(5, 4, 3)))
  model <- linear_classifier(feature_columns(column_numeric("wt", "hp")), n_classes = 3)
  quiet_train(model, input_fn(data, features = c("wt", "hp"), response = "gears"), steps = 3)
  # later data lists the levels in another order: the columns keep the trained one
  later <- transform(mtcars, gears = factor(gear, levels = c(3, 4, 5)))
  predictions <- predict(model, input_fn(later, features = c("wt", "hp")))
  expect_identical(colnames(predictions$probabilities), c("5", "4", "3"))
  expect_identical(colnames(predictions$logits), c("5", "4", "3"))
  best <- colnames(predictions$probabilities)[max.col(predictions$probabilities, "first")]
  expect_identical(best, predictions$classes)
  binary <- linear_classifier(feature_columns(column_numeric("wt")), n_classes = 2)
  quiet_train(binary, input_fn(mtcars, features = "wt", response = "am"), steps = 1)
  predictions <- predict(binary, input_fn(mtcars, features = "wt"))
  expect_identical(colnames(predictions$probabilities), c("0", "1"))
  expect_null(dim(predictions$logits)) # one logit per example: a vector
})

test_that("linear_classifier() takes string labels with a vocabulary", {
  skip_if_no_pyhooks()
  data <- data.frame(x = mtcars$wt, gear = paste0("g", mtcars$gear))
  input <- input_fn(data, features = "x", response = "gear", batch_size = 8L)
  model <- linear_classifier(feature_columns(column_numeric("x")), n_classes = 3,
                             label_vocabulary = c("g3", "g4", "g5"))
  quiet_train(model, input, steps = 2)
  classes <- predict(model, input_fn(data, features = "x"), predict_keys = "classes")
  expect_type(classes, "character") # one output: a vector
  expect_length(classes, nrow(data))
  expect_true(all(classes %in% c("g3", "g4", "g5")))
})

test_that("dnn_regressor() and dnn_classifier() train", {
  skip_if_no_pyhooks()
  fcs <- feature_columns(column_numeric("drat", "wt"))
  input <- input_fn(mtcars, features = c("drat", "wt"), response = "mpg", batch_size = 8L)
  history <- quiet_train(dnn_regressor(hidden_units = c(4, 4), feature_columns = fcs), input, steps = 2)
  expect_identical(history$steps, 2L)
  input <- input_fn(mtcars, features = c("drat", "wt"), response = "vs", batch_size = 8L)
  model <- dnn_classifier(hidden_units = 3, feature_columns = fcs, dropout = 0.1)
  history <- quiet_train(model, input, steps = 2)
  expect_identical(history$steps, 2L)
  expect_error(dnn_regressor(hidden_units = 2.5, feature_columns = fcs), "`hidden_units` must be a whole number")
  expect_error(dnn_regressor(feature_columns = fcs), "`hidden_units` is absent")
  expect_error(dnn_classifier(hidden_units = c(2, -1), feature_columns = fcs), "hidden_units")
})

test_that("the column functions build feature columns", {
  skip_if_no_pyhooks()
  num <- column_numeric("drat")
  expect_match(reticulate::py_repr(num), "NumericColumn\\(key='drat'\\)")
  two <- column_numeric("drat", "wt")
  expect_length(two, 2L)
  expect_length(feature_columns(two, column_numeric("hp")), 3L)
  cyl <- column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 6, 8))
  expect_match(reticulate::py_repr(cyl), "vocabulary_list=\\[4, 6, 8\\]")
  gear <- column_categorical_with_identity("gear", num_buckets = 6)
  hashed <- column_categorical_with_hash_bucket("carb", hash_bucket_size = 5)
  crossed <- column_crossed(c("cyl", "gear"), hash_bucket_size = 10)
  bucket <- column_bucketized(column_numeric("hp"), boundaries = c(100, 200))
  indicator <- column_indicator(cyl)
  embedding <- column_embedding(hashed, dimension = 2)
  fcs <- feature_columns(num, cyl, gear, hashed, crossed, bucket)
  input <- input_fn(mtcars, features = c("drat", "cyl", "gear", "carb", "hp"), response = "mpg",
                    batch_size = 8L)
  expect_identical(quiet_train(linear_regressor(fcs), input, steps = 1)$steps, 1L)
  dense <- feature_columns(num, indicator, embedding, bucket)
  expect_identical(quiet_train(dnn_regressor(c(3), dense), input, steps = 1)$steps, 1L)
})

test_that("hashed and crossed columns of numbers take whole numbers and refuse fractions", {
  skip_if_no_pyhooks()
  # R's numbers are doubles: whole ones hash as their integers; a fraction is never rounded
  for (column in list(column_categorical_with_hash_bucket("wt", hash_bucket_size = 5),
                      column_crossed(c("wt", "cyl"), hash_bucket_size = 10))) {
    model <- linear_regressor(feature_columns(column))
    expect_error(quiet_train(model, input_fn(mtcars, features = c("wt", "cyl"), response = "mpg"),
                             steps = 1),
                 "Column \"wt\" must hold strings or whole numbers for .*, got 2.62")
    whole <- transform(mtcars, wt = round(wt))
    expect_identical(quiet_train(model, input_fn(whole, features = c("wt", "cyl"), response = "mpg"),
                                 steps = 1)$steps, 1L)
  }
})

test_that("column errors are clear", {
  skip_if_no_pyhooks()
  expect_error(column_numeric(), "At least one column name")
  expect_error(feature_columns(column_numeric(starts_with("zz")), names = names(mtcars)),
               '`starts_with("zz")` gave no column names.', fixed = TRUE)
  expect_error(column_numeric(3), "`key` must be a non-empty string")
  expect_error(column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 4)), "duplicates")
  expect_error(column_categorical_with_vocabulary_list("cyl", vocabulary_list = list(a = 4)),
               "`vocabulary_list` must be a vector of values, e.g. `c\\(\"a\", \"b\"\\)`, not a list with names")
  expect_no_error(column_categorical_with_vocabulary_list("cyl", vocabulary_list = list(4, 6)))
  expect_error(column_categorical_with_vocabulary_list("cyl"), "`vocabulary_list` is absent")
  # the column names come first (tfestimators' order): a value after them unnamed is a name
  expect_error(column_categorical_with_vocabulary_list("cyl", c(4, 6, 8)),
               "named: `vocabulary_list = c\\(4, 6, 8\\)`", class = "pyhooks_error_argument")
  expect_error(column_categorical_with_identity("am", 2), "named: `num_buckets = 2`")
  expect_error(column_categorical_with_hash_bucket("carb", 10), "named: `hash_bucket_size = 10`")
  expect_error(column_categorical_with_vocabulary_file("cyl", "cyl.txt"),
               "named: `vocabulary_file = \"cyl.txt\"`")
  expect_no_match(tryCatch(column_categorical_with_identity("am"), error = conditionMessage),
                  "must be named")
  expect_error(column_categorical_with_identity("gear", num_buckets = 0), "`num_buckets` must be positive")
  expect_error(column_categorical_with_identity("gear", num_buckets = 2.5), "whole number")
  expect_error(column_categorical_with_hash_bucket("carb", hash_bucket_size = 1), "at least 2")
  expect_error(column_bucketized(column_numeric("hp"), boundaries = c(200, 100)), "strictly increasing")
  expect_error(column_indicator(column_numeric("hp")), "must be a categorical column")
  expect_error(column_embedding(column_numeric("hp"), dimension = 2), "must be a categorical column")
  expect_error(column_crossed("cyl", hash_bucket_size = 10), "at least two columns")
  expect_error(feature_columns(), "at least one column")
  expect_error(feature_columns(column_numeric("a"), "b"), "takes feature columns")
})

test_that("input_fn() takes data frames, matrices and named lists", {
  skip_if_no_pyhooks()
  from_df <- input_fn(mtcars, features = c("drat", "cyl"), response = "mpg", batch_size = 8L)
  expect_match(reticulate::py_repr(from_df), "<input_fn: 32 rows, features=\\['drat', 'cyl'\\], response='mpg', batch_size=8")
  from_matrix <- input_fn(as.matrix(mtcars), features = "drat", response = "mpg", batch_size = 4)
  expect_match(reticulate::py_repr(from_matrix), "32 rows.*batch_size=4")
  from_list <- input_fn(list(x = 1, y = 2), features = "x", response = "y")
  expect_match(reticulate::py_repr(from_list), "1 rows|1 row")
  with_factor <- input_fn(data.frame(x = c(1, 2), g = factor(c("a", "b"))), features = c("x", "g"))
  expect_match(reticulate::py_repr(with_factor), "2 rows")
  model <- linear_regressor(mtcars_columns())
  expect_identical(quiet_train(model, from_matrix, steps = 1)$steps, 1L)
})

test_that("input_fn() errors are clear", {
  skip_if_no_pyhooks()
  err <- expect_error(input_fn(mtcars, features = c("drat", "nope"), response = "mpg"),
                      class = "pyhooks_error_argument")
  expect_identical(gsub("\\s+", " ", cli::ansi_strip(conditionMessage(err))), paste(
    '`features`: no column "nope" in `data`; the data frame has: mpg, cyl, disp,',
    "hp, drat, wt, qsec, vs, am, gear, and carb."))
  expect_error(input_fn(mtcars, features = "drat", response = "MPG"),
               '`response`: no column "MPG" in `data`', class = "pyhooks_error_argument")
  expect_error(input_fn(mtcars, response = "mpg"), "`features` is absent")
  expect_error(input_fn(mtcars, features = NULL), "`features` is required")
  expect_error(input_fn(mtcars, features = "drat", batch_size = 0), "`batch_size` must be positive, got 0")
  expect_error(input_fn(mtcars, features = "drat", batch_size = 2.5), "`batch_size` must be a whole number, not 2.5")
  # NA would reach Python as True (or "NA"): an R error naming the argument
  expect_error(input_fn(mtcars, features = "drat", shuffle = NA), "`shuffle` must not be `NA`",
               class = "pyhooks_error_argument")
  expect_error(input_fn(mtcars, features = c("drat", NA)), "`features` must not be `NA`",
               class = "pyhooks_error_argument")
  expect_error(linear_regressor(mtcars_columns(), model_dir = NA), "`model_dir` must not be `NA`",
               class = "pyhooks_error_argument")
  expect_error(input_fn(mtcars, features = "drat", shuffle = "sometimes"), "`shuffle` must be TRUE, FALSE or \"auto\"", fixed = TRUE)
  expect_error(input_fn(unname(as.list(mtcars)), features = "drat"), "`data` must be a data frame")
  expect_error(input_fn(matrix(1:4, 2), features = "V1"), "`data` must have column names")
  expect_error(input_fn(data.frame(x = c(1, NA)), features = "x"), "missing")
})

test_that("input_fn() sends whole columns: numbers, integers, logicals, strings and factors", {
  skip_if_no_pyhooks()
  data <- data.frame(x = c(0.5, -2), i = c(3L, 4L), l = c(TRUE, FALSE), s = c("a", "b"),
                     f = factor(c("q", "p"), levels = c("p", "q")), unused = c(NA, 1))
  input <- input_fn(data, features = c("x", "i", "l", "s", "f"))
  columns <- reticulate::py_get_attr(input, "columns")
  values <- reticulate::py_eval("lambda c: {k: [v.dtype.kind, v.tolist()] for k, v in c.items()}")(
    columns
  )
  expect_identical(values$x, list("f", c(0.5, -2)))
  expect_identical(values$i, list("i", c(3L, 4L)))
  expect_identical(values$l, list("b", c(TRUE, FALSE)))
  expect_identical(values$s, list("U", c("a", "b")))
  expect_identical(values$f, list("U", c("q", "p")))
  expect_null(values$unused) # not used, so not converted nor checked
})

test_that("input_fn() names a column holding NA, with the row", {
  skip_if_no_pyhooks()
  expect_error(input_fn(data.frame(n = c(1L, NA, NA)), features = "n"),
               "Column \"n\" has 2 missing values \\(`NA`\\), first in row 2",
               class = "pyhooks_error_argument")
  expect_error(input_fn(data.frame(s = c("a", NA)), features = "s"), "first in row 2",
               class = "pyhooks_error_argument")
})
