# Feature columns: thin wrappers of pyhooks.estimators' column functions.
# Functions taking `...` accept several column names and then return a list
# of columns (one per name), as tfestimators did.

columns_for <- function(quos, make, call) {
  keys <- unlist(lapply(quos, column_keys, call = call), use.names = FALSE)
  if (!length(keys)) {
    given <- vapply(quos, rlang::as_label, "")
    selected <- if (length(given)) c(x = "{.code {given}} gave no column names.")
    cli::cli_abort(c("At least one column name must be given in {.arg ...}.", selected),
                   class = "pyhooks_error_argument", call = call)
  }
  if (length(keys) == 1L) return(make(keys))
  lapply(keys, make)
}

# The required argument after `...` (tfestimators' order: the column names first) must be
# named; when it is missing and `...` holds more than one value, the last one was probably it.
check_required_after_columns <- function(x, columns, arg = rlang::caller_arg(x),
                                         call = rlang::caller_env()) {
  if (!missing(x)) return(invisible())
  hint <- if (length(columns) > 1L) {
    c(i = "Arguments after the column names must be named: {.code {arg} = {rlang::as_label(columns[[length(columns)]])}}.")
  }
  cli::cli_abort(c("{.arg {arg}} is absent but must be supplied.", hint),
                 class = "pyhooks_error_argument", call = call)
}

# Column names from one argument of a column_*() function: strings, or inside
# feature_columns(names = ) and with_columns() also bare names and tidyselect
# helpers (ends_with("time")) over those names.
column_keys <- function(quo, call) {
  vars <- tryCatch(tidyselect::peek_vars(), error = function(e) NULL)
  if (is.null(vars)) return(rlang::eval_tidy(quo))
  value <- tryCatch(rlang::eval_tidy(quo), error = function(e) NULL)
  if (is.character(value)) return(value)
  data <- stats::setNames(as.list(seq_along(vars)), vars)
  names(tidyselect::eval_select(quo, data, allow_rename = FALSE))
}

# The column names of `x`: a character vector, or an object with names() or
# colnames().
object_column_names <- function(x, call = rlang::caller_env()) {
  names <- if (is.character(x)) x else colnames(x) %||% names(x)
  if (!is.character(names) || !length(names) || anyNA(names) || !all(nzchar(names))) {
    cli::cli_abort("{.arg names} must be column names or data with column names, not {.obj_type_friendly {x}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  names
}

#' Define the feature columns of a model
#'
#' @param ... Feature columns (from the `column_*()` functions) or lists of
#'   them; also `selection ~ column_*()` (e.g. `ends_with("time") ~
#'   column_numeric()`) when `names` is given. The same column given twice
#'   is kept once.
#' @param names Column names (or data with column names) over which the
#'   `column_*()` functions take bare names and tidyselect helpers, or
#'   `NULL`.
#' @returns A list of feature columns, for the `feature_columns` argument of
#'   the estimators.
#' @family feature columns
#' @seealso [linear_regressor()], [column_numeric()]
#' @export
#' @examplesIf is_pyhooks_available()
#' feature_columns(column_numeric("drat", "wt"))
feature_columns <- function(..., names = NULL) {
  quos <- lapply(rlang::enquos(...), function(quo) {
    # `starts_with("d") ~ column_numeric()` is `column_numeric(starts_with("d"))`
    expr <- rlang::quo_get_expr(quo)
    if (rlang::is_call(expr, "~", n = 2L) && rlang::is_call(expr[[3L]])) {
      rhs <- expr[[3L]]
      quo <- rlang::quo_set_expr(quo, rlang::call2(rhs[[1L]], expr[[2L]], !!!as.list(rhs[-1L])))
    }
    quo
  })
  evaluate <- function() lapply(quos, rlang::eval_tidy)
  columns <- if (is.null(names)) evaluate() else {
    tidyselect::with_vars(object_column_names(names), evaluate())
  }
  structure(py_construct("feature_columns", unname(columns)), class = "pyhooks_feature_columns")
}

#' Feature columns named by selection helpers
#'
#' Evaluates `expr` (usually a [feature_columns()] call) where the
#' `column_*()` functions take bare column names and tidyselect helpers
#' (`starts_with()`, `ends_with()`, `contains()`, `one_of()`...) over the
#' columns of `columns`.
#'
#' @param columns A data frame (or other object with column names), or a
#'   character vector of names.
#' @param expr The code to evaluate.
#' @returns The value of `expr`.
#' @family feature columns
#' @seealso [feature_columns()]
#' @export
#' @examples
#' \dontrun{
#' with_columns(mtcars, feature_columns(column_numeric(starts_with("d"))))
#' }
with_columns <- function(columns, expr) {
  tidyselect::with_vars(object_column_names(columns), expr)
}

#' A numeric feature column
#'
#' @param ... One or more column names of the input data.
#' @param shape The number of values per example: 1, or e.g. `784` (or
#'   `c(28, 28)`) for an input column that is a matrix with a row of 784
#'   numbers per example. [shape()]`(784L)`, as tfestimators' code wrote it,
#'   works too.
#' @param default_value Accepted for compatibility; missing values are an
#'   error.
#' @param dtype A numeric type name, e.g. `"float32"`.
#' @param normalizer_fn A function applied to the column's tensor, or
#'   `NULL`: an R function such as `function(x) (x - 3) / 4.2` (R's
#'   operators work on tensors: [tensor_ops]), or a Python function. An
#'   error in it stops training with a `pyhooks_callback_error` naming this
#'   argument (see [train()]).
#' @returns A feature column, or a list of them for several names.
#' @family feature columns
#' @seealso [feature_columns()], [column_bucketized()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_numeric("drat")
column_numeric <- function(..., shape = 1L, default_value = NULL, dtype = "float32",
                           normalizer_fn = NULL) {
  call <- rlang::current_env()
  shape <- as_py_int(shape)
  columns_for(rlang::enquos(...), function(key) {
    py_construct("column_numeric", list(
      key = key, shape = shape, default_value = default_value, dtype = dtype,
      normalizer_fn = tensor_function(
        normalizer_fn, "normalizer_fn", sprintf("column_numeric(\"%s\")", key))
    ), call = call)
  }, call)
}

#' A categorical feature column with a vocabulary
#'
#' @param ... One or more column names of the input data.
#' @param vocabulary_list The known values: all strings or all whole
#'   numbers.
#' @param dtype The type of the values, or `NULL` to infer it.
#' @param default_value The id of values not in the vocabulary (`-1`: they
#'   contribute nothing).
#' @param num_oov_buckets Number of extra buckets for values not in the
#'   vocabulary.
#' @returns A feature column, or a list of them for several names.
#' @family feature columns
#' @seealso [feature_columns()], [column_indicator()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 6, 8))
column_categorical_with_vocabulary_list <- function(..., vocabulary_list, dtype = NULL,
                                                    default_value = -1L, num_oov_buckets = 0L) {
  check_required_after_columns(vocabulary_list, rlang::enquos(...))
  call <- rlang::current_env()
  if (is.list(vocabulary_list) && !is.data.frame(vocabulary_list) && !is.null(names(vocabulary_list))) { # names would be dropped
    cli::cli_abort(
      "{.arg vocabulary_list} must be a vector of values, e.g. {.code c(\"a\", \"b\")}, not {.obj_type_friendly {vocabulary_list}} with names.",
      class = "pyhooks_error_argument", call = call
    )
  }
  vocabulary_list <- as_py_list(vocabulary_list, named = FALSE)
  default_value <- as_py_int(default_value)
  num_oov_buckets <- as_py_int(num_oov_buckets)
  columns_for(rlang::enquos(...), function(key) {
    py_construct("column_categorical_with_vocabulary_list", list(
      key = key, vocabulary_list = vocabulary_list, dtype = dtype,
      default_value = default_value, num_oov_buckets = num_oov_buckets
    ), call = call)
  }, call)
}

#' A categorical feature column of whole numbers
#'
#' @param ... One or more column names of the input data.
#' @param num_buckets The ids are in `[0, num_buckets)`.
#' @param default_value The id of values out of range, or `NULL` to make
#'   them an error.
#' @returns A feature column, or a list of them for several names.
#' @family feature columns
#' @seealso [feature_columns()], [column_indicator()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_categorical_with_identity("cyl", num_buckets = 9)
column_categorical_with_identity <- function(..., num_buckets, default_value = NULL) {
  check_required_after_columns(num_buckets, rlang::enquos(...))
  call <- rlang::current_env()
  num_buckets <- as_py_int(num_buckets)
  default_value <- as_py_int(default_value)
  columns_for(rlang::enquos(...), function(key) {
    py_construct("column_categorical_with_identity", list(
      key = key, num_buckets = num_buckets, default_value = default_value
    ), call = call)
  }, call)
}

#' A categorical feature column of hashed values
#'
#' The input column holds strings, factors or whole numbers (a whole number
#' is hashed as its digits, `4` as `"4"`). Numbers with a fraction are
#' refused, never rounded: round them first, or cut them into ranges with
#' [column_bucketized()].
#'
#' @param ... One or more column names of the input data.
#' @param hash_bucket_size Number of buckets.
#' @param dtype The type of the values (`"string"`).
#' @returns A feature column, or a list of them for several names.
#' @family feature columns
#' @seealso [feature_columns()], [column_embedding()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_categorical_with_hash_bucket("name", hash_bucket_size = 100)
column_categorical_with_hash_bucket <- function(..., hash_bucket_size, dtype = "string") {
  check_required_after_columns(hash_bucket_size, rlang::enquos(...))
  call <- rlang::current_env()
  hash_bucket_size <- as_py_int(hash_bucket_size)
  columns_for(rlang::enquos(...), function(key) {
    py_construct("column_categorical_with_hash_bucket", list(
      key = key, hash_bucket_size = hash_bucket_size, dtype = dtype
    ), call = call)
  }, call)
}

#' A one-hot (dense) form of a categorical column
#'
#' @param categorical_column A categorical column.
#' @returns A feature column.
#' @family feature columns
#' @seealso [feature_columns()], [column_embedding()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_indicator(column_categorical_with_identity("cyl", num_buckets = 9))
column_indicator <- function(categorical_column) {
  rlang::check_required(categorical_column)
  py_construct("column_indicator", list(categorical_column = categorical_column))
}

#' A trainable embedding of a categorical column
#'
#' @param categorical_column A categorical column.
#' @param dimension The width of the embedding.
#' @param combiner `"mean"`, `"sqrtn"` or `"sum"`.
#' @param initializer A Python initializer, or `NULL`.
#' @param max_norm Clip embeddings to this norm, or `NULL`.
#' @param trainable Whether the embedding is trained.
#' @returns A feature column.
#' @family feature columns
#' @seealso [feature_columns()], [column_indicator()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_embedding(column_categorical_with_hash_bucket("name", hash_bucket_size = 100),
#'                  dimension = 4)
column_embedding <- function(categorical_column, dimension, combiner = "mean",
                             initializer = NULL, max_norm = NULL, trainable = TRUE) {
  rlang::check_required(categorical_column)
  rlang::check_required(dimension)
  py_construct("column_embedding", list(
    categorical_column = categorical_column, dimension = as_py_int(dimension),
    combiner = combiner, initializer = initializer, max_norm = max_norm,
    trainable = trainable
  ))
}

#' Buckets of a numeric column
#'
#' @param source_column A [column_numeric()].
#' @param boundaries Increasing numbers: `c(0, 10)` gives the buckets
#'   (-Inf, 0), \[0, 10), \[10, Inf).
#' @returns A feature column.
#' @family feature columns
#' @seealso [feature_columns()], [column_numeric()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_bucketized(column_numeric("mpg"), boundaries = c(15, 20, 25))
column_bucketized <- function(source_column, boundaries) {
  rlang::check_required(source_column)
  rlang::check_required(boundaries)
  py_construct("column_bucketized", list(
    source_column = source_column, boundaries = as_py_list(boundaries, named = FALSE)
  ))
}

#' Hashed crosses of several columns
#'
#' A column named in `keys` is read as by
#' [column_categorical_with_hash_bucket()]: strings, factors or whole
#' numbers; numbers with a fraction are refused.
#'
#' @param keys Column names and/or categorical columns (at least two).
#' @param hash_bucket_size Number of buckets.
#' @param hash_key Accepted for compatibility, or `NULL`.
#' @returns A feature column.
#' @family feature columns
#' @seealso [feature_columns()], [column_indicator()]
#' @export
#' @examplesIf is_pyhooks_available()
#' column_crossed(c("cyl", "gear"), hash_bucket_size = 20)
column_crossed <- function(keys, hash_bucket_size, hash_key = NULL) {
  rlang::check_required(keys)
  rlang::check_required(hash_bucket_size)
  py_construct("column_crossed", list(
    keys = as_py_list(keys, named = FALSE), hash_bucket_size = as_py_int(hash_bucket_size),
    hash_key = hash_key
  ))
}

#' A categorical feature column with a vocabulary file
#'
#' @param ... One or more column names of the input data.
#' @param vocabulary_file A text file holding one value per line (read now).
#' @param vocabulary_size Use only the first this many lines, or `NULL` for
#'   all.
#' @param num_oov_buckets Number of extra buckets for values not in the
#'   vocabulary.
#' @param default_value The id of values not in the vocabulary (`NULL`: they
#'   contribute nothing).
#' @param dtype `"string"`, or `"int64"` for whole numbers.
#' @returns A feature column, or a list of them for several names.
#' @family feature columns
#' @seealso [column_categorical_with_vocabulary_list()]
#' @export
#' @examples
#' \dontrun{
#' vocabulary <- tempfile()
#' writeLines(c("4", "6", "8"), vocabulary)
#' column_categorical_with_vocabulary_file("cyl", vocabulary_file = vocabulary,
#'                                         dtype = "int64")
#' }
column_categorical_with_vocabulary_file <- function(..., vocabulary_file, vocabulary_size = NULL,
                                                    num_oov_buckets = 0L, default_value = NULL,
                                                    dtype = "string") {
  check_required_after_columns(vocabulary_file, rlang::enquos(...))
  call <- rlang::current_env()
  vocabulary_file <- path_arg(vocabulary_file)
  vocabulary_size <- as_py_int(vocabulary_size)
  num_oov_buckets <- as_py_int(num_oov_buckets)
  default_value <- as_py_int(default_value)
  columns_for(rlang::enquos(...), function(key) {
    py_construct("column_categorical_with_vocabulary_file", list(
      key = key, vocabulary_file = vocabulary_file, vocabulary_size = vocabulary_size,
      num_oov_buckets = num_oov_buckets, default_value = default_value, dtype = dtype
    ), call = call)
  }, call)
}

#' A weighted categorical feature column
#'
#' Each example's id counts the value of column `weight_feature_key` times
#' (instead of once): a linear model multiplies the id's weight by it, an
#' indicator column gives it instead of 1.
#'
#' @param categorical_column A categorical column.
#' @param weight_feature_key The name of the numeric input column of weights.
#' @param dtype A float type name.
#' @returns A feature column.
#' @family feature columns
#' @seealso [column_indicator()]
#' @export
#' @examples
#' \dontrun{
#' column_categorical_weighted(column_categorical_with_identity("gear", num_buckets = 6),
#'                             weight_feature_key = "wt")
#' }
column_categorical_weighted <- function(categorical_column, weight_feature_key,
                                        dtype = "float32") {
  rlang::check_required(categorical_column)
  rlang::check_required(weight_feature_key)
  py_construct("column_categorical_weighted", list(
    categorical_column = categorical_column, weight_feature_key = weight_feature_key,
    dtype = dtype
  ))
}

#' @rdname column_categorical_weighted
#' @description `column_weighted_categorical()` is the same, under
#'   tfestimators' name.
#' @export
column_weighted_categorical <- column_categorical_weighted
