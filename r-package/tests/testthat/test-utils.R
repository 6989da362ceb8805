test_that("whole doubles become integers, other values are left to Python", {
  expect_identical(pyhooks:::as_py_int(2), 2L)
  expect_identical(pyhooks:::as_py_int(c(a = 1, b = 3)), c(a = 1L, b = 3L))
  expect_identical(pyhooks:::as_py_int(-4), -4L)
  expect_identical(pyhooks:::as_py_int(5L), 5L)
  expect_null(pyhooks:::as_py_int(NULL))
  expect_identical(pyhooks:::as_py_int("a"), "a")
  expect_identical(pyhooks:::as_py_int(Inf), Inf)
  expect_identical(pyhooks:::as_py_int(3e10), 3e10)
})

test_that("NA, NaN and logicals are R errors: reticulate would send True or NaN", {
  steps <- NA
  expect_error(pyhooks:::as_py_int(steps), "`steps` must be a whole number, not NA",
               class = "pyhooks_error_argument")
  expect_error(pyhooks:::as_py_int(c(1L, NA)), "not NA", class = "pyhooks_error_argument")
  expect_error(pyhooks:::as_py_int(NaN), "not NaN", class = "pyhooks_error_argument")
  expect_error(pyhooks:::as_py_int(FALSE), "not FALSE", class = "pyhooks_error_argument")
  expect_error(pyhooks:::as_py_list(c(4, NA), int = TRUE), "not NA",
               class = "pyhooks_error_argument")
})

test_that("NA in other vectors is an R error: reticulate would send True, -2147483648 or 'NA'", {
  for (bad in list(NA, c("a", NA), c(1L, NA), factor(c("u", NA)))) {
    expect_error(pyhooks:::check_not_na(bad, "x"), "`x` must not be `NA`",
                 class = "pyhooks_error_argument")
  }
  for (fine in list(NULL, NaN, c(1, NA), "NA", list(NA), mtcars)) {  # NaN is a value
    expect_null(pyhooks:::check_not_na(fine, "x"))
  }
  keys <- c("predictions", NA)
  expect_error(pyhooks:::as_py_list(keys), "`keys` must not be `NA`")
})

test_that("a fractional number is an R error naming the argument", {
  steps <- 2.5
  expect_error(pyhooks:::as_py_int(steps), "`steps` must be a whole number, not 2.5",
               class = "pyhooks_error_argument")
  f <- function(every_n_step) pyhooks:::as_py_int(every_n_step)
  expect_snapshot(f(0.1), error = TRUE)
})

test_that("vectors for Python list arguments are always lists", {
  expect_identical(pyhooks:::as_py_list("a"), list("a"))
  expect_identical(pyhooks:::as_py_list(c(x = "a", y = "b")), list(x = "a", y = "b"))
  expect_identical(pyhooks:::as_py_list(c(10, 5), int = TRUE), list(10L, 5L))
  expect_identical(pyhooks:::as_py_list(factor("u")), list("u"))
  expect_null(pyhooks:::as_py_list(NULL))
})

test_that("a data frame is no list of values, nor a number", {
  skip_if_no_pyhooks()
  expect_error(dnn_regressor(hidden_units = data.frame(a = 1),
                             feature_columns = feature_columns(column_numeric("drat"))),
               "`hidden_units` must be a vector or a list, not a data frame",
               class = "pyhooks_error_argument")
  expect_error(column_categorical_with_vocabulary_list("x", vocabulary_list = data.frame(a = 1)),
               "`vocabulary_list` must be a vector or a list, not a data frame")
  expect_error(hook_step_counter(every_n_steps = data.frame(a = 1)),
               "`every_n_steps` must be a whole number, not a data frame")
})

test_that("arrays converted by the bridge are restored", {
  x <- list(a = list(`__pyhooks_array__` = TRUE, data = c(1, 2, 3, 4, 5, 6), dim = c(2L, 3L)),
            b = list(1, "x"))
  out <- pyhooks:::restore_arrays(x)
  expect_identical(out$a, matrix(c(1, 2, 3, 4, 5, 6), 2, 3))
  expect_identical(out$b, list(1, "x"))
})

test_that("Python list positions in messages become R ones", {
  expect_identical(pyhooks:::python_index_to_r("`hooks[1]` must be a SessionRunHook, got x"),
                   "`hooks[[2]]` must be a SessionRunHook, got x")
  expect_identical(pyhooks:::python_index_to_r("`steps` must be positive"), "`steps` must be positive")
})

test_that("a TensorFlow error's message loses the Python frames where its op was defined", {
  message <- paste(
    "Graph execution error:", "",
    "Detected at node CollectiveReduceV2 defined at (most recent call last):",
    '  File "/x/pyhooks/session.py", line 3, in run', "",
    '  File "/x/pyhooks/distribute.py", line 9, in vote', "",
    "Collective ops is aborted by: task 1 crashed",
    "Restart your program to reset.", "Restart your program to reset.",
    "\t [[{{node CollectiveReduceV2}}]] [Op:__inference_vote_178]", sep = "\n")
  expect_equal(without_python_frames(message),
               "Collective ops is aborted by: task 1 crashed\nRestart your program to reset.")
  graph <- paste('Node: "a/CollectiveBcastSend"', "From /job:worker/replica:0/task:0:",
                 "aborted: worker 1 failed", "",
                 'Original stack trace for "a/CollectiveBcastSend":',
                 '  File "/x/base.py", line 318, in train', "    self._train()", sep = "\n")
  expect_equal(without_python_frames(graph),
               "From /job:worker/replica:0/task:0:\naborted: worker 1 failed")
  peer <- paste("From /job:worker/replica:0/task:0:",
                "Collective ops is aborted by: Collective ops is aborted by: Error reported from",
                "/job:worker/task:1: pyhooks: worker 1 failed building the input: no column",
                "\t [[{{node a/CollectiveBcastSend}}]]")
  expect_equal(without_python_frames(peer), "worker 1 failed building the input: no column")
  expect_equal(without_python_frames("a plain message\n  indented stays"),
               "a plain message\n  indented stays")
})
