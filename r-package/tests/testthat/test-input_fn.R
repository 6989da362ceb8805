# The data contract from R: factors matched by label, dates and infinities refused, the
# schema recorded at the first train() and held to in a new R session.

cars <- function() {
  data <- mtcars
  data$am <- factor(ifelse(mtcars$am == 1, "yes", "no"), levels = c("no", "yes"))
  data$gear <- factor(mtcars$gear)
  data
}

flip <- function(x) factor(as.character(x), levels = rev(levels(x)))

contract_model <- function(model_dir = tempfile("contract_")) {
  model <- linear_classifier(feature_columns = feature_columns(
    column_numeric("drat", "wt"),
    column_indicator(column_categorical_with_vocabulary_list("gear", vocabulary_list = c("3", "4", "5")))
  ), model_dir = model_dir)
  quiet_train(model, input_fn(cars(), response = "am", features = c("drat", "wt", "gear"),
                              batch_size = 8L, num_epochs = NULL), steps = 30)
  model
}

test_that("a factor response is matched by its labels, whatever the order of its levels", {
  skip_if_no_pyhooks()
  model <- contract_model()
  data <- cars()
  metrics <- evaluate(model, input_fn(data, response = "am", features = c("drat", "wt", "gear")))
  flipped <- data
  flipped$am <- flip(data$am)
  flipped$gear <- flip(data$gear)
  expect_equal(evaluate(model, input_fn(flipped, response = "am",
                                        features = c("drat", "wt", "gear"))), metrics)
  classes <- predict(model, input_fn(flipped, features = c("drat", "wt", "gear")),
                     predict_keys = "classes")
  expect_identical(classes, predict(model, input_fn(data, features = c("drat", "wt", "gear")),
                                    predict_keys = "classes"))
  expect_true(all(classes %in% c("no", "yes"))) # the levels' names, not 0 and 1
  # character labels where a factor was recorded: matched by label too
  text <- data
  text$am <- as.character(data$am)
  expect_equal(evaluate(model, input_fn(text, response = "am",
                                        features = c("drat", "wt", "gear"))), metrics)
})

test_that("a level never seen in training names the column, the level and the row", {
  skip_if_no_pyhooks()
  model <- contract_model()
  data <- cars()
  data$am <- factor(as.character(data$am), levels = c("no", "yes", "maybe"))
  data$am[4] <- "maybe"
  expect_error(
    evaluate(model, input_fn(data, response = "am", features = c("drat", "wt", "gear"))),
    "\"am\" holds \"maybe\" at row 4, which was not one of its levels"
  )
  data <- cars()
  data$gear <- factor(as.character(data$gear), levels = c("3", "4", "5", "6"))
  data$gear[2] <- "6"
  expect_error(predict(model, input_fn(data, features = c("drat", "wt", "gear"))),
               "\"gear\" holds \"6\" at row 2")
})

test_that("the first train() names a feature column whose input is not among the features", {
  skip_if_no_pyhooks()
  model <- linear_regressor(feature_columns(column_numeric("drat", "cyl")))
  expect_error(train(model, input_fn(mtcars, features = drat, response = mpg), steps = 1),
               "Feature column \"cyl\" needs the input column \"cyl\", which is not one of the input's features: drat.",
               fixed = TRUE)
  expect_error(train(model, input_fn(mtcars, features = c(drat, mpg), response = cyl), steps = 1),
               "which is the input's response, not one of its features")
})

test_that("a changed kind or a missing column is named; extra columns are ignored", {
  skip_if_no_pyhooks()
  model <- contract_model()
  data <- cars()
  data$wt <- as.character(data$wt)
  expect_error(predict(model, input_fn(data, features = c("drat", "wt", "gear"))),
               "\"wt\" holds character values; the model was trained on numeric values")
  expect_error(predict(model, input_fn(cars(), features = c("drat", "wt"))),
               "no feature column \"gear\", which the model was trained on")
  expect_length(predict(model, input_fn(cars(), features = c("drat", "wt", "gear", "qsec")),
                        predict_keys = "classes"), 32L)
  data <- cars()
  data$drat <- as.integer(round(data$drat)) # integers where numbers were recorded: fine
  expect_length(predict(model, input_fn(data, features = c("drat", "wt", "gear")),
                        predict_keys = "classes"), 32L)
})

test_that("dates, times, durations, complex and raw columns are refused with a conversion", {
  skip_if_no_pyhooks()
  base <- data.frame(y = c(1, 2))
  columns <- list(
    Date = as.Date(c("2020-01-01", "2020-02-01")),
    POSIXct = as.POSIXct(c("2020-01-01 10:00", "2020-01-01 11:00"), tz = "UTC"),
    difftime = as.difftime(c(1, 2), units = "days"),
    complex = c(1 + 2i, 3i),
    raw = as.raw(c(1, 2))
  )
  for (kind in names(columns)) {
    data <- base
    data$when <- columns[[kind]]
    error <- expect_error(input_fn(data, features = "when", response = "y"),
                          class = "pyhooks_error_argument")
    expect_match(conditionMessage(error), paste0("Column \"when\" is <", kind, ">"))
    expect_match(conditionMessage(error), "Convert it first")
  }
  expect_snapshot(input_fn(data.frame(y = 1, when = Sys.Date()), features = "when",
                           response = "y"), error = TRUE)
})

test_that("a list column of vectors is column_numeric(shape =)'s input; ragged rows are refused", {
  skip_if_no_pyhooks()
  data <- data.frame(y = c(1.5, 2.5, 3.5, 4.5))
  data$v <- list(c(1, 2), c(3, 4), c(5, 6), c(7, 8))
  model <- linear_regressor(feature_columns(column_numeric("v", shape = 2)))
  expect_identical(quiet_train(model, input_fn(data, features = "v", response = "y"), steps = 1)$steps, 1L)
  data$v[[3]] <- c(5, 6, 7)
  expect_error(input_fn(data, features = "v", response = "y"),
               "Column \"v\" holds rows of different lengths: 2 value(s) at row 1, 3 at row 3.",
               fixed = TRUE)
})

test_that("bit64's integer64 columns are refused: their doubles hold 64-bit integers' bits", {
  skip_if_no_pyhooks()
  # as doubles these would be 5e-324, 1e-323...: never read them so
  big <- structure(c(1, 2), class = "integer64") # bit64's class (the package is not needed)
  for (role in c("feature", "response")) {
    data <- data.frame(x = c(1, 2), y = c(1, 2))
    data[[if (role == "feature") "x" else "y"]] <- big
    error <- expect_error(input_fn(data, features = "x", response = "y"),
                          class = "pyhooks_error_argument")
    expect_match(conditionMessage(error), "Column \"[xy]\" is <integer64>")
    expect_match(conditionMessage(error), "as.numeric(x)` (exact up to 2^53)", fixed = TRUE)
  }
})

test_that("haven's labelled columns are refused: their codes or their labels is a choice", {
  skip_if_no_pyhooks()
  # haven's class (the package is not needed): codes 1 and 2, labelled "no" and "yes"
  answers <- structure(c(1, 2, 1, 2), labels = c(no = 1, yes = 2),
                       class = c("haven_labelled", "vctrs_vctr", "double"))
  data <- data.frame(x = c(1, 2, 3, 4), y = c(1, 2, 3, 4))
  data$x <- answers
  error <- expect_error(input_fn(data, features = "x", response = "y"),
                        class = "pyhooks_error_argument")
  expect_match(conditionMessage(error), "Column \"x\" is <haven_labelled>")
  expect_match(conditionMessage(error), "`haven::as_factor(x)` (its value labels", fixed = TRUE)
  # another class of numbers is read as its numbers
  data$x <- structure(c(1, 2, 3, 4), class = "my_measure")
  expect_s3_class(input_fn(data, features = "x", response = "y"), "python.builtin.object")
})

test_that("a factor level that is NA is refused: its name would be the text \"NA\"", {
  skip_if_no_pyhooks()
  data <- data.frame(x = c(1, 2, 3, 4))
  data$y <- addNA(factor(c("a", NA, "b", "a")))
  error <- expect_error(input_fn(data, features = "x", response = "y"),
                        class = "pyhooks_error_argument")
  expect_match(conditionMessage(error), "Column \"y\" has a level that is `NA`")
  levels(data$y)[is.na(levels(data$y))] <- "(missing)" # the way out it names
  expect_s3_class(input_fn(data, features = "x", response = "y"), "python.builtin.object")
})

test_that("Inf in a feature or the response is refused naming the column and the row", {
  skip_if_no_pyhooks()
  data <- mtcars
  data$mpg[5] <- Inf
  expect_error(input_fn(data, features = "drat", response = "mpg"),
               "Column \"mpg\" has 1 infinite value .*first in row 5")
  data <- mtcars
  data$drat[c(2, 9)] <- -Inf
  expect_error(input_fn(data, features = "drat", response = "mpg"),
               "Column \"drat\" has 2 infinite values .*first in row 2")
})

test_that("two columns of one name are refused", {
  skip_if_no_pyhooks()
  data <- cbind(mtcars[c("drat", "mpg")], mtcars["drat"])
  expect_error(input_fn(data, features = "drat", response = "mpg"),
               "`data` has more than one column named \"drat\"")
  expect_error(input_fn(as.list(data), features = "drat", response = "mpg"),
               "more than one column named \"drat\"")
})

test_that("the contract is read back from model_dir by a new R session", {
  skip_if_no_pyhooks()
  dir <- tempfile("contract_")
  model <- contract_model(dir)
  expect_true(file.exists(file.path(dir, "pyhooks_schema.json")))
  accuracy <- evaluate(model, input_fn(cars(), response = "am",
                                       features = c("drat", "wt", "gear")))$accuracy
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(pyhooks)",
    "data <- mtcars",
    "data$am <- factor(ifelse(mtcars$am == 1, 'yes', 'no'), levels = c('yes', 'no'))",
    "data$gear <- factor(mtcars$gear)",
    "model <- linear_classifier(feature_columns = feature_columns(",
    "  column_numeric('drat', 'wt'),",
    "  column_indicator(column_categorical_with_vocabulary_list('gear', vocabulary_list = c('3', '4', '5')))",
    sprintf("), model_dir = '%s')", dir),
    "cat(evaluate(model, input_fn(data, response = 'am', features = c('drat', 'wt', 'gear')))$accuracy, '\\n')",
    "data$wt <- as.character(data$wt)",
    "cat(tryCatch(predict(model, input_fn(data, features = c('drat', 'wt', 'gear'))),",
    "             error = function(e) conditionMessage(e)), '\\n')"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE, stderr = FALSE)
  expect_equal(as.numeric(out[[1L]]), accuracy)
  expect_match(paste(out[-1L], collapse = " "), "\"wt\" holds character values")
})

test_that("column names beyond ASCII train, evaluate and predict", {
  skip_if_no_pyhooks()
  data <- data.frame(x = mtcars$drat, y = mtcars$mpg)
  names(data) <- c("größe", "prix €")
  model <- linear_regressor(feature_columns = feature_columns(column_numeric("größe")))
  quiet_train(model, input_fn(data, features = "größe", response = "prix €", batch_size = 8L),
              steps = 4)
  expect_identical(evaluate(model, input_fn(data, features = "größe",
                                            response = "prix €"))$global_step, 4L)
  expect_length(predict(model, input_fn(data, features = "größe")), 32L)
  expect_error(linear_regressor(feature_columns = feature_columns(
    column_numeric("a b"), column_numeric("a_b"))), "would share the variable names")
})

test_that("a logical response is class 0 for FALSE and 1 for TRUE, named \"FALSE\" and \"TRUE\"", {
  skip_if_no_pyhooks()
  data <- mtcars
  data$manual <- data$am == 1 # the feature am (0/1) tells it exactly
  model <- linear_classifier(feature_columns(column_numeric("am")))
  quiet_train(model, input_fn(data, manual ~ am, batch_size = 8, num_epochs = NULL), steps = 200)
  predicted <- predict(model, input_fn(data, features = am))
  expect_identical(predicted$class_ids, as.integer(data$manual)) # TRUE is class 1
  # named as R prints logicals, so that they compare equal to the response
  expect_identical(predicted$classes, c("FALSE", "TRUE")[predicted$class_ids + 1L])
  expect_true(all(predicted$classes == data$manual))
  expect_identical(colnames(predicted$probabilities), c("FALSE", "TRUE"))
  one_by_one <- predict(model, input_fn(data, features = am), simplify = FALSE)
  expect_identical(vapply(one_by_one, `[[`, "", "classes"), predicted$classes)
  expect_identical(predict(model, input_fn(data, features = am), predict_keys = "classes"),
                   predicted$classes)
  # Python's names are TensorFlow's class ids
  expect_identical(unlist(model$class_names()), c("0", "1"))
  expect_identical(evaluate(model, input_fn(data, manual ~ am))$accuracy, 1)
  # a later input must be logical too: 0/1 numbers are another kind of data
  data$manual <- data$am
  expect_error(evaluate(model, input_fn(data, manual ~ am)),
               "holds numeric values; the model was trained on logical values")
})

test_that("input_fn()'s errors name input_fn() as called, not the method that found them", {
  skip_if_no_pyhooks()
  calls <- list(
    quote(input_fn(mtcars, features = c(drat, nope), response = mpg)), # R's check
    quote(input_fn(mtcars, features = drat, response = mpg, batch_size = 0)), # Python's
    quote(input_fn(mtcars, features = drat, response = mpg, epochs = -1)),
    quote(input_fn(mpg ~ drat + nope, mtcars)),
    quote(input_fn(unname(as.matrix(mtcars)), features = 1)),
    quote(input_fn(list(a = 1:3), features = a, response = b))
  )
  for (call in calls) {
    error <- tryCatch(eval(call), error = identity)
    expect_s3_class(error, "error")
    expect_identical(conditionCall(error), call)
  }
})
