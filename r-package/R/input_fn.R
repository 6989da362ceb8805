#' Input for an estimator from a data frame or matrix
#'
#' Describes how [train()], [evaluate()] and [predict()] read `data`: which
#' columns are the features and which is the response, in batches of
#' `batch_size` rows, for `num_epochs` passes.
#'
#' @param data A data frame, a matrix with column names, or a named list of
#'   equal-length vectors or matrices (a matrix holds a row of numbers per
#'   example, for `column_numeric(shape = )`; tfestimators' `object =` is
#'   accepted too); or a formula `response ~ features`, followed by the
#'   data. The feature and response columns must not hold `NA` (an error
#'   names the column and the row): remove or impute them first, e.g. with
#'   `na.omit()`.
#' @param features The feature columns: names (`c("drat", "cyl")`), bare
#'   names (`c(drat, cyl)`), tidyselect helpers (`starts_with("d")`,
#'   `-mpg`), or a formula `mpg ~ drat + cyl` (`mpg ~ .`: every other
#'   column) naming the response too.
#' @param response The response column(s) (named as `features`), or `NULL`
#'   (for [predict()]). A factor response becomes its level numbers minus
#'   one (`levels(x)[1]` is class `0`), as in tfestimators.
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
#' @examplesIf is_pyhooks_available()
#' input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"),
#'                   batch_size = 8L)
input_fn <- function(data, ...) {
  if (missing(data)) { # tfestimators' `object =`
    dots <- rlang::enquos(...)
    if ("object" %in% names(dots)) {
      object <- rlang::eval_tidy(dots$object)
      return(rlang::eval_tidy(rlang::call2(input_fn, object, !!!dots[names(dots) != "object"])))
    }
  }
  UseMethod("input_fn")
}

#' @rdname input_fn
#' @export
input_fn.formula <- function(data, features, ...) {
  # tfestimators' input_fn(mpg ~ drat + cyl, mtcars)
  input_fn(features, data, ...)
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
  check_no_missing(data, c(features, response), call)
  py_pyhooks() # Python (and numpy) loaded before any column is converted
  # only the columns used are converted (and checked); the others are named
  # (for Python's error messages) and sent as NULL
  used <- names(data) %in% c(features, response)
  columns <- rep(list(NULL), length(data))
  names(columns) <- names(data)
  for (i in which(used)) {
    column <- data[[i]]
    columns[i] <- list(
      if (is.matrix(column) && ncol(column) > 1L) { # a row of numbers per example
        lapply(seq_len(nrow(column)), function(r) column[r, ])
      } else if (!is.atomic(column) && !is.factor(column)) {
        column # nested lists: one value (or vector) per example
      } else {
        as_py_column(column, names(data)[[i]], call)
      }
    )
  }
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
#' @param epochs The same as `num_epochs` (tfestimators' name), or `NULL`.
#' @export
input_fn.data.frame <- function(data, features, response = NULL, batch_size = 128L,
                                shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                                num_threads = 1L, seed = NULL, ..., epochs = NULL) {
  rlang::check_required(features)
  resolved <- resolve_input_columns(data, rlang::enquo(features), rlang::enquo(response),
                                    rlang::current_env())
  if (!is.null(epochs)) { # tfestimators' name: errors name it
    num_epochs <- as_py_int(epochs)
    if (!is.numeric(num_epochs) || length(num_epochs) != 1L || !is.finite(num_epochs) ||
        num_epochs < 1) {
      shown <- if (is.numeric(epochs) && length(epochs) == 1L) format(epochs) else
        cli::format_inline("{.obj_type_friendly {epochs}}")
      cli::cli_abort("{.arg epochs} must be a positive whole number or {.code NULL}, not {shown}.",
                     class = "pyhooks_error_argument")
    }
  }
  input_fn.default(as.list(resolved$data), features = resolved$features,
                   response = resolved$response, batch_size = batch_size, shuffle = shuffle,
                   num_epochs = num_epochs, queue_capacity = queue_capacity,
                   num_threads = num_threads, seed = seed, ...)
}

#' @rdname input_fn
#' @export
input_fn.list <- function(data, ...) {
  if (is.null(names(data)) || !all(nzchar(names(data)))) return(input_fn.default(data, ...))
  input_fn.data.frame(data, ...)
}

#' @rdname input_fn
#' @export
input_fn.matrix <- function(data, ...) {
  if (is.null(colnames(data))) {
    cli::cli_abort("{.arg data} must have column names.", class = "pyhooks_error_argument")
  }
  input_fn.data.frame(as.data.frame(data, stringsAsFactors = FALSE), ...)
}

# An R error for a missing value (NA, or NaN) in a feature or response column,
# naming the column and the R row of the first one. Reticulate would send an
# integer NA as -2147483648, a logical NA as TRUE and a character NA as "NA".
check_no_missing <- function(data, names, call = rlang::caller_env()) {
  if (!is.character(names)) return(invisible()) # Python names what is wrong with them
  for (name in intersect(unique(names), names(data))) {
    column <- data[[name]]
    if (!is.atomic(column) && !is.factor(column)) next
    missing <- which(is.na(column))
    if (!length(missing)) next
    cli::cli_abort(
      c(
        "Column {.val {name}} has {length(missing)} missing value{?s} ({.code NA}), first in row {missing[[1L]]}.",
        "i" = "Remove or impute them before {.fn input_fn}, e.g. with {.code na.omit(data)}."
      ),
      class = "pyhooks_error_argument", call = call
    )
  }
  invisible()
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
