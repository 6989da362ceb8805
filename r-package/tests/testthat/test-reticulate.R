# R values through reticulate, with pyhooks loaded: reticulate and pyhooks' NumPy agree
# (Debian's reticulate 1.28 converts to NumPy's 1.x binary interface; the stack pins NumPy < 2).

test_that("every kind of R value goes to Python and comes back the same", {
  skip_if_no_pyhooks()
  values <- list(
    logical = c(TRUE, FALSE), integer = c(1L, -2L, 3L), double = c(1.5, -2, NaN, Inf),
    character = c("a", "\u00e9", ""), scalar = 2.5, complex = 1 + 2i, raw = as.raw(1:3),
    matrix = matrix(1:6, 2), double_matrix = matrix(c(0.5, 1.5, 2.5, 3.5), 2),
    logical_matrix = matrix(c(TRUE, FALSE), 1), array = array(1:24, c(2, 3, 4)),
    list = list(1, "a", TRUE), named_list = list(a = 1, b = "x", c = list(d = 2L)),
    null = NULL, date = as.Date("2024-01-02")
  )
  for (name in names(values)) {
    value <- values[[name]]
    expect_identical(reticulate::py_to_r(reticulate::r_to_py(value)), value, label = name)
  }
  # a factor goes as its labels
  expect_identical(reticulate::py_to_r(reticulate::r_to_py(factor(c("b", "a", "b")))),
                   c("b", "a", "b"))
})

test_that("R vectors, matrices and arrays become NumPy arrays of their shape and type", {
  skip_if_no_pyhooks()
  np <- reticulate::import("numpy", convert = FALSE)
  expect_match(reticulate::py_to_r(np$`__version__`), "^1\\.")
  cases <- list(
    list(matrix(1:6, 2), "int32", c(2L, 3L)),
    list(matrix(c(0.5, 1.5, 2.5, 3.5), 2), "float64", c(2L, 2L)),
    list(array(1:24, c(2, 3, 4)), "int32", c(2L, 3L, 4L)),
    list(matrix(c(TRUE, FALSE), 1), "bool", c(1L, 2L)),
    list(c(1.5, 2), "float64", 2L),
    list(c(TRUE, FALSE), "bool", 2L),
    list(c("a", "b"), "str32", 2L),
    list(factor(c("b", "a", "b")), "str32", 3L)
  )
  for (case in cases) {
    array <- np$asarray(case[[1]])
    label <- paste(deparse(case[[1]]), collapse = "")
    expect_identical(reticulate::py_to_r(array$dtype$name), case[[2]], label = label)
    expect_identical(as.integer(unlist(reticulate::py_to_r(array$shape))), case[[3]], label = label)
  }
  # numbers computed by NumPy come back to R in R's layout (column-major)
  m <- matrix(1:6, 2)
  expect_identical(reticulate::py_to_r(np$asarray(m)$sum(axis = 0L)), array(colSums(m)))
  expect_identical(reticulate::py_to_r(np$transpose(np$asarray(m))), t(m))
  expect_identical(reticulate::py_to_r(np$asarray(array(1:24, c(2, 3, 4)))), array(1:24, c(2, 3, 4)))
})
