#' Input for an estimator from a data frame or matrix
#'
#' Describes how [train()], [evaluate()] and [predict()] read `data`: which
#' columns are the features and which is the response, in batches of
#' `batch_size` rows, for `num_epochs` passes.
#'
#' @param data A data frame, a matrix with column names, or a named list of
#'   equal-length vectors.
#' @param features Names of the feature columns.
#' @param response Name of the response column, or `NULL` (for
#'   [predict()]).
#' @param batch_size Rows per batch.
#' @param shuffle `"auto"` (shuffle when training), `TRUE` or `FALSE`.
#' @param num_epochs Passes over the data, or `NULL` to repeat it forever
#'   (then give `steps` to [train()]).
#' @param queue_capacity Size of the shuffle buffer (rows). `NULL` (the
#'   default) shuffles all rows: every epoch is a new random permutation of the
#'   whole data. A smaller buffer shuffles only locally (each row is drawn from
#'   the next `queue_capacity` rows not yet used).
#' @param num_threads Accepted for compatibility.
#' @param seed The shuffling seed, or `NULL`.
#' @param ... Not used; must be empty.
#' @returns An input function object for the `input_fn` argument of
#'   [train()], [evaluate()] and [predict()].
#' @family estimators
#' @seealso [train()], [feature_columns()]
#' @export
#' @examples
#' \dontrun{
#' input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"),
#'                   batch_size = 8L)
#' }
input_fn <- function(data, ...) {
  UseMethod("input_fn")
}

#' @rdname input_fn
#' @export
input_fn.default <- function(data, features, response = NULL, batch_size = 128L,
                             shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                             num_threads = 1L, seed = NULL, ...) {
  rlang::check_dots_empty()
  rlang::check_required(features)
  call <- rlang::current_env()
  if (!is.list(data) || is.null(names(data)) || !all(nzchar(names(data)))) {
    cli::cli_abort(
      "{.arg data} must be a data frame, a matrix with column names or a named list of columns, not {.obj_type_friendly {data}}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  py_pyhooks() # Python (and numpy) loaded before any column is converted
  # only the columns used are converted (and checked); the others are named
  # (for Python's error messages) and sent as NULL
  used <- names(data) %in% c(features, response)
  columns <- rep(list(NULL), length(data))
  names(columns) <- names(data)
  for (i in which(used)) columns[i] <- list(as_py_column(data[[i]], names(data)[[i]], call))
  py_construct("input_fn", list(
    data = columns,
    features = as_py_list(features),
    response = response,
    batch_size = as_py_int(batch_size),
    shuffle = shuffle,
    num_epochs = as_py_int(num_epochs),
    queue_capacity = as_py_int(queue_capacity),
    num_threads = as_py_int(num_threads),
    seed = as_py_int(seed)
  ), call = call)
}

#' @rdname input_fn
#' @export
input_fn.data.frame <- function(data, features, response = NULL, batch_size = 128L,
                                shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                                num_threads = 1L, seed = NULL, ...) {
  input_fn.default(as.list(data), features = features, response = response,
                   batch_size = batch_size, shuffle = shuffle, num_epochs = num_epochs,
                   queue_capacity = queue_capacity, num_threads = num_threads, seed = seed, ...)
}

#' @rdname input_fn
#' @export
input_fn.matrix <- function(data, features, response = NULL, batch_size = 128L,
                            shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                            num_threads = 1L, seed = NULL, ...) {
  if (is.null(colnames(data))) {
    cli::cli_abort("{.arg data} must have column names.", class = "pyhooks_error_argument")
  }
  input_fn.default(as.list(as.data.frame(data, stringsAsFactors = FALSE)),
                   features = features, response = response, batch_size = batch_size,
                   shuffle = shuffle, num_epochs = num_epochs, queue_capacity = queue_capacity,
                   num_threads = num_threads, seed = seed, ...)
}

# One column as a whole numpy array: its values' bytes (or, for strings and
# factors, codes and distinct values) go to Python in one piece, with no
# per-row work in R or Python. NA is an R error naming the column: it has no
# NumPy integer, logical or string equivalent.
as_py_column <- function(column, name, call) {
  if (!is.atomic(column) || is.null(column)) return(column)
  if (anyNA(column)) {
    missing <- which(is.na(column))
    cli::cli_abort(
      "Column {.val {name}} has {length(missing)} missing value{?s} ({.code NA}), first at row {missing[[1L]]}: remove or impute them before {.fn input_fn}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  if (is.null(.py$column_from_r)) {
    .py$column_from_r <- reticulate::import("pyhooks.estimators.inputs",
                                            convert = FALSE)$column_from_r
  }
  kind <- typeof(column)
  levels <- NULL
  if (is.factor(column)) { # its codes and labels as they are
    kind <- "character"
    levels <- as.list(levels(column))
    column <- as.integer(column)
  } else if (kind == "character") {
    levels <- unique(column)
    column <- match(column, levels)
    levels <- as.list(levels)
  } else if (kind == "logical") {
    column <- as.integer(column)
  } else if (!kind %in% c("double", "integer")) {
    return(as.vector(column)) # complex, raw: Python names the column and the problem
  }
  size <- if (is.double(column)) 8L else 4L
  .py$column_from_r(kind, writeBin(as.vector(column), raw(), size = size, endian = "little"),
                    levels)
}
