#' Input from arrays, as TensorFlow 1's numpy_input_fn
#'
#' tfestimators' `numpy_input_fn()`: `x` (named columns) and `y` (the labels)
#' become an [input_fn()], read by the estimators as any other input. The
#' defaults are TensorFlow's: batches of 128, one epoch, a shuffle buffer of
#' 1000 rows, and `shuffle` given explicitly.
#'
#' @param x The features: a named list of equal-length vectors or matrices (a
#'   matrix holds a row of numbers per example, for `column_numeric(shape =
#'   )`), a data frame, or a matrix with column names.
#' @param y The labels: a vector or factor, a matrix (one response per
#'   column), a named list of columns or a data frame, or `NULL` (for
#'   [predict()]). A vector or factor is named `"y"` (a matrix's columns
#'   `"y_0"`, `"y_1"`, ...). A custom estimator's `model_fn` gets a named list
#'   `y` as a named list of tensors, as in TensorFlow, and a matrix (even of
#'   one column) as one tensor whose columns are the responses.
#' @param batch_size Rows per batch.
#' @param num_epochs Passes over the data, or `NULL` to repeat it forever
#'   (then give `steps` to [train()]).
#' @param shuffle `TRUE` or `FALSE` (required, as in TensorFlow: shuffle
#'   when training, not when evaluating or predicting).
#' @param queue_capacity The shuffle buffer: each row is drawn from the next
#'   `queue_capacity` rows not yet used (`NULL`: a new permutation of all
#'   rows every epoch).
#' @param num_threads Accepted for compatibility.
#' @returns An input function object, as [input_fn()] returns.
#' @family estimators
#' @seealso [input_fn()]
#' @export
#' @examplesIf is_pyhooks_available()
#' input <- numpy_input_fn(list(drat = mtcars$drat, wt = mtcars$wt), mtcars$mpg,
#'                         batch_size = 8, shuffle = TRUE)
numpy_input_fn <- function(x, y = NULL, batch_size = 128L, num_epochs = 1L, shuffle = NULL,
                           queue_capacity = 1000L, num_threads = 1L) {
  rlang::check_required(x)
  call <- rlang::current_env()
  user_call <- sys.call()
  if (is.matrix(x) && !is.null(colnames(x))) x <- as.data.frame(x, stringsAsFactors = FALSE)
  if (!is.list(x) || !length(x) || is.null(names(x)) || !all(nzchar(names(x)))) {
    cli::cli_abort(
      c("{.arg x} must be a named list of columns, a data frame or a matrix with column names, not {.obj_type_friendly {x}}.",
        "i" = "Name the columns, e.g. {.code list(pixels = x)}."),
      class = "pyhooks_error_argument", call = call
    )
  }
  if (!rlang::is_bool(shuffle)) {
    cli::cli_abort(
      "{.arg shuffle} must be {.code TRUE} or {.code FALSE}, not {.obj_type_friendly {shuffle}}: shuffle when training, not when evaluating or predicting.",
      class = "pyhooks_error_argument", call = call
    )
  }
  x <- lapply(as.list(x), numpy_to_r)
  if (is.list(y) && !is.data.frame(y)) y <- lapply(y, numpy_to_r) else y <- numpy_to_r(y)
  labels <- label_columns(y, names(x), call)
  rows <- vapply(c(x, labels), NROW, integer(1))
  if (length(unique(rows)) > 1L) {
    sizes <- paste0(names(rows), ": ", rows, collapse = ", ")
    cli::cli_abort("{.arg x} and {.arg y} must hold the same number of rows, not {sizes}.",
                   class = "pyhooks_error_argument", call = call)
  }
  made <- rlang::try_fetch(
    input_fn(c(x, labels), features = names(x),
             response = if (length(labels)) names(labels), batch_size = batch_size,
             shuffle = shuffle, num_epochs = num_epochs, queue_capacity = queue_capacity,
             num_threads = num_threads),
    error = function(cnd) { # what input_fn() refuses is the user's numpy_input_fn() call
      cnd$call <- user_call
      stop(cnd)
    }
  )
  # a named list or data frame `y`: a model_fn's labels are a named list, as in TensorFlow
  reticulate::py_set_attr(made, "labels_as_dict", is_named_columns(y))
  made
}

is_named_columns <- function(y) is.data.frame(y) || (is.list(y) && !is.null(names(y)))

# A NumPy array (from reticulate, e.g. `np$asarray(images, dtype = np$float32)`) as the R
# array of the same shape and values, then converted as R columns are (`?input_fn`); anything
# else as it is.
numpy_to_r <- function(value) {
  if (inherits(value, "numpy.ndarray")) reticulate::py_to_r(value) else value
}

# numpy_input_fn()'s labels as named columns, named as Python's numpy_input_fn() names them.
label_columns <- function(y, taken, call) {
  if (is.null(y)) return(list())
  if (is_named_columns(y)) {
    clash <- intersect(names(y), taken)
    if (length(clash)) {
      cli::cli_abort("{.arg y} and {.arg x} both have the column{?s} {.val {clash}}: give them other names.",
                     class = "pyhooks_error_argument", call = call)
    }
    return(as.list(y))
  }
  name <- setdiff(c("y", "__y__", "__label__"), taken)[[1L]]
  if (is.matrix(y) && ncol(y) > 1L) {
    columns <- lapply(seq_len(ncol(y)), function(i) y[, i])
    return(stats::setNames(columns, paste0(name, "_", seq_len(ncol(y)) - 1L)))
  }
  stats::setNames(list(y), name) # a one-column matrix of numbers: [n, 1], as NumPy's (n, 1)
}
