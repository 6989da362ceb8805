#' Input for an estimator from a data frame or matrix
#'
#' Describes how [train()], [evaluate()] and [predict()] read `data`: which
#' columns are the features and which is the response, in batches of
#' `batch_size` rows, for `num_epochs` passes.
#'
#' @param data A data frame, a matrix with column names, or a named list of
#'   equal-length vectors or matrices (a matrix, or a list column of
#'   equal-length numeric vectors, holds a row of numbers per example, for
#'   `column_numeric(shape = )`; tfestimators' `object =` is accepted too); or
#'   a formula `response ~ features`, followed by the data. The feature and
#'   response columns may be numeric, integer, logical, character or factor
#'   columns, and must not hold `NA`, `Inf` or `-Inf` (an error names the
#'   column and the row): remove or impute them first, e.g. with `na.omit()`.
#'   `Date`, `POSIXct`, `difftime`, `integer64`, haven's labelled (codes or
#'   labels?), complex and raw columns are refused, with the conversion to
#'   choose (e.g. `as.numeric(date)`): pyhooks never turns them into numbers
#'   silently. Other classes built on numbers are read as their numbers. Column names must be unique. Or the paths
#'   (or globs) of CSV or TFRecord files, streamed and never held in memory
#'   (see "Files bigger than memory").
#' @param features The feature columns: names (`c("drat", "cyl")`), bare
#'   names (`c(drat, cyl)`), tidyselect helpers (`starts_with("d")`,
#'   `-mpg`), or a formula `mpg ~ drat + cyl` (`mpg ~ .`: every other
#'   column) naming the response too.
#' @param response The response column(s) (named as `features`), or `NULL`
#'   (for [predict()]). A factor response is matched by its labels: a
#'   classifier's classes are the factor's levels when the model is first
#'   trained (`levels(x)[1]` is class `0`, and `predict()`'s `classes` are
#'   the level names), and a later input whose factor lists its levels in
#'   another order means the same classes. A logical response is class `0`
#'   for `FALSE` and `1` for `TRUE`; `predict()` names them `"FALSE"` and
#'   `"TRUE"` (its `classes` compare equal to the response; a SavedModel's
#'   `classes`, as Python's, are `"0"` and `"1"`).
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
  # on a worker of a cluster (TF_CONFIG), a refused input is told to the other workers
  withCallingHandlers(
    input_fn_dispatch(data, ...),
    error = function(cnd) tell_cluster("building the input (input_fn())", cnd)
  )
}

input_fn_dispatch <- function(data, ...) {
  if (missing(data)) { # tfestimators' `object =`
    dots <- rlang::enquos(...)
    if ("object" %in% names(dots)) {
      object <- rlang::eval_tidy(dots$object)
      return(rlang::eval_tidy(rlang::call2(input_fn_dispatch, object,
                                           !!!dots[names(dots) != "object"])))
    }
  }
  UseMethod("input_fn")
}

#' @rdname input_fn
#' @export
input_fn.formula <- function(data, features, ...) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  # tfestimators' input_fn(mpg ~ drat + cyl, mtcars)
  input_fn_dispatch(features, data, ...)
}

#' @rdname input_fn
#' @export
input_fn.default <- function(data, features, response = NULL, batch_size = 128L,
                             shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                             num_threads = 1L, seed = NULL, ...) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  rlang::check_dots_empty()
  rlang::check_required(features)
  call <- rlang::current_env()
  if (!is.list(data) || is.null(names(data)) || !all(nzchar(names(data)))) {
    cli::cli_abort(
      "{.arg data} must be a data frame, a matrix with column names or a named list of columns, not {.obj_type_friendly {data}}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  check_unique_names(data, call)
  check_no_missing(data, c(features, response), call)
  check_column_types(data, c(features, response), call)
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
#' @param epochs The same as `num_epochs` (tfestimators' name): passes over the
#'   data, or `NULL` to repeat it forever. Give one of the two.
#' @export
input_fn.data.frame <- function(data, features, response = NULL, batch_size = 128L,
                                shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                                num_threads = 1L, seed = NULL, ..., epochs) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  rlang::check_required(features)
  check_unique_names(data, rlang::current_env())
  resolved <- resolve_input_columns(data, rlang::enquo(features), rlang::enquo(response),
                                    rlang::current_env())
  if (!missing(epochs)) { # tfestimators' name: errors name it
    if (!missing(num_epochs)) {
      cli::cli_abort("Give {.arg num_epochs} or {.arg epochs} (the same), not both.",
                     class = "pyhooks_error_argument")
    }
    num_epochs <- as_py_int(epochs)
    if (!is.null(epochs) && (!is.numeric(num_epochs) || length(num_epochs) != 1L ||
                             !is.finite(num_epochs) || num_epochs < 1)) {
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
#' @param column_types For CSV files: a named character vector (or list) of
#'   column types, `"double"`, `"integer"` or `"character"` (`"numeric"`,
#'   `"string"` too), for columns whose type is not to be taken from the first
#'   `guess_rows` rows. The rule otherwise: a column whose values in those rows
#'   are all whole numbers is integer, all numbers double, else character. A
#'   later value of another type stops the call with an error naming the
#'   column, the file and the row.
#' @param na For CSV files: the fields that mean a missing value (by default
#'   `""` and `"NA"`, what [write.csv()] writes for `NA`), refused in every
#'   column, as `NaN`, `Inf` and `-Inf` are in numeric ones.
#' @param example_spec For TFRecord files of `tf.Example` records: their parsing
#'   spec, e.g. [regressor_parse_example_spec()] or
#'   [classifier_parse_example_spec()]. Without it, the files are CSV.
#' @param guess_rows For files: the rows of the first file read by `input_fn()`
#'   to check the input (and to infer a CSV file's column types).
#' @section Files bigger than memory:
#' `data` may be file paths or globs (`"data/part-*.csv"`): CSV files with a
#' header row (the same columns in every file, one row per line), or TFRecord
#' files with `example_spec`. They are read again at every [train()],
#' [evaluate()] and [predict()] call and never held in memory: the rows stream
#' through TensorFlow (`shuffle`: a buffer of `queue_capacity` rows, 10,000
#' by default; the files in a new order every epoch), and every value is
#' checked on the way. `input_fn()` reads each file's header and the first
#' `guess_rows` rows of the first file, which are checked at once (and
#' against the model's recorded columns at each call). Rows are counted from 1
#' after the header (row 1 is line 2).
#' @export
input_fn.character <- function(data, features, response = NULL, batch_size = 128L,
                               shuffle = "auto", num_epochs = 1L, queue_capacity = NULL,
                               num_threads = 1L, seed = NULL, ..., column_types = NULL,
                               na = c("", "NA"), example_spec = NULL, guess_rows = 1000L) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  rlang::check_dots_empty()
  rlang::check_required(features)
  call <- rlang::current_env()
  for (arg in c("features", "response")) {
    value <- tryCatch(get(arg), error = function(cnd) cnd)
    if (inherits(value, "error") ||
        (!is.null(value) && (!is.character(value) || anyNA(value) || !length(value)))) {
      shown <- if (inherits(value, "error")) "bare names (they need a data frame)" else
        cli::format_inline("{.obj_type_friendly {value}}")
      cli::cli_abort(
        "{.arg {arg}} must name columns of the files as a character vector, not {shown}.",
        class = "pyhooks_error_argument", call = call
      )
    }
  }
  if (!is.null(column_types) && (is.null(names(column_types)) || !all(nzchar(names(column_types))))) {
    cli::cli_abort(
      "{.arg column_types} must be a named character vector, such as {.code c(cyl = \"integer\")}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  input <- py_construct("input_fn", list(
    data = as.list(data),
    features = as_py_list(features),
    response = if (is.null(response)) NULL else as_py_list(response),
    batch_size = as_py_int(batch_size),
    shuffle = shuffle,
    num_epochs = as_py_int(num_epochs),
    queue_capacity = as_py_int(queue_capacity),
    num_threads = as_py_int(num_threads),
    seed = as_py_int(seed),
    column_types = if (is.null(column_types)) NULL else as.list(column_types),
    na = as.list(na),
    example_spec = example_spec,
    guess_rows = as_py_int(guess_rows)
  ), call = call)
  reticulate::py_set_attr(input, "first_row", 1L) # R's words in the data contract's errors
  input
}

#' @rdname input_fn
#' @export
input_fn.list <- function(data, ...) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  if (is.null(names(data)) || !all(nzchar(names(data)))) return(input_fn.default(data, ...))
  input_fn.data.frame(data, ...)
}

#' @rdname input_fn
#' @export
input_fn.matrix <- function(data, ...) {
  rlang::local_error_call(rlang::caller_env()) # errors name input_fn(), not the method
  if (is.null(colnames(data))) {
    cli::cli_abort("{.arg data} must have column names.", class = "pyhooks_error_argument")
  }
  input_fn.data.frame(as.data.frame(data, stringsAsFactors = FALSE), ...)
}

# An R error for a missing value (NA, or NaN) or an infinite one in a feature or
# response column, naming the column and the R row of the first one. Reticulate
# would send an integer NA as -2147483648, a logical NA as TRUE and a character
# NA as "NA".
check_no_missing <- function(data, names, call = rlang::caller_env()) {
  if (!is.character(names)) return(invisible()) # Python names what is wrong with them
  for (name in intersect(unique(names), names(data))) {
    column <- data[[name]]
    if (!is.atomic(column) && !is.factor(column)) next
    missing <- which(is.na(column))
    if (length(missing)) {
      cli::cli_abort(
        c(
          "Column {.val {name}} has {length(missing)} missing value{?s} ({.code NA}), first in row {missing[[1L]]}.",
          "i" = "Remove or impute them first, e.g. with {.code na.omit(data)}."
        ),
        class = "pyhooks_error_argument", call = call
      )
    }
    infinite <- if (is.double(column)) which(is.infinite(column))
    if (length(infinite)) {
      row <- (infinite[[1L]] - 1L) %% NROW(column) + 1L # a matrix column: its row
      cli::cli_abort(
        c(
          "Column {.val {name}} has {length(infinite)} infinite value{?s} ({.code Inf} or {.code -Inf}), first in row {row}.",
          "i" = "Remove them first, or replace them by finite values."
        ),
        class = "pyhooks_error_argument", call = call
      )
    }
  }
  invisible()
}

# Two columns of one name: which one to read would be a guess.
check_unique_names <- function(data, call) {
  twice <- unique(names(data)[duplicated(names(data))])
  if (!length(twice)) return(invisible())
  cli::cli_abort(
    c("{.arg data} has more than one column named {.val {twice}}.",
      "i" = "Rename or drop the copies first, e.g. {.code data[!duplicated(names(data))]}."),
    class = "pyhooks_error_argument", call = call
  )
}

# Columns whose meaning as numbers is a choice (dates, times, durations, labelled codes) or
# that hold no numbers (complex, raw): refused, with the conversions to choose from. Other
# classes of numbers (e.g. the units package's) are read as their numbers.
check_column_types <- function(data, names, call) {
  if (!is.character(names)) return(invisible())
  for (name in intersect(unique(names), names(data))) {
    column <- data[[name]]
    fix <- if (inherits(column, "Date")) {
      c("as.numeric(x)" = "days since 1970-01-01", "factor(format(x, \"%m\"))" = "its month")
    } else if (inherits(column, "POSIXt")) {
      c("as.numeric(x)" = "seconds since 1970-01-01 UTC",
        "factor(format(x, \"%H\"))" = "its hour")
    } else if (inherits(column, "difftime")) {
      c("as.numeric(x, units = \"days\")" = "a number of days (or the units you mean)")
    } else if (inherits(column, c("haven_labelled", "labelled"))) { # codes with value labels
      c("haven::as_factor(x)" = "its value labels, a categorical column",
        "as.numeric(unclass(x))" = "its codes as numbers")
    } else if (inherits(column, "integer64")) { # bit64's: 64-bit integers in doubles' bits
      c("as.numeric(x)" = "exact up to 2^53", "as.character(x)" = "labels, for a categorical column")
    } else if (is.complex(column)) {
      c("Re(x)" = "its real part, and Im(x) as another column")
    } else if (is.raw(column)) {
      c("as.integer(x)" = "its bytes as numbers")
    }
    if (is.null(fix)) next
    kind <- if (is.object(column)) class(column)[[1L]] else typeof(column)
    ways <- paste0("{.code ", names(fix), "} (", fix, ")", collapse = " or ")
    cli::cli_abort(
      c("Column {.val {name}} is {.cls {kind}}: pyhooks does not turn it into numbers on its own.",
        "i" = paste0("Convert it first, e.g. with ", ways, ".")),
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
  one_column <- is.matrix(column) && ncol(column) == 1L # numbers: [n, 1], as NumPy's (n, 1)
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
  if (is.factor(column)) { # its codes and its levels (matched by label, never by code)
    if (anyNA(levels(column))) { # addNA(), exclude = NULL: Python would see the text "NA"
      cli::cli_abort(
        c("Column {.val {name}} has a level that is {.code NA} (from {.fn addNA} or {.code exclude = NULL}).",
          "i" = "Name it first, e.g. {.code levels(x)[is.na(levels(x))] <- \"(missing)\"}, or remove those rows."),
        class = "pyhooks_error_argument", call = call
      )
    }
    kind <- "factor"
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
                    levels, one_column = one_column)
}
