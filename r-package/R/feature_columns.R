# Feature columns: thin wrappers of pyhooks.estimators' column functions.
# Functions taking `...` accept several column names and then return a list
# of columns (one per name), as tfestimators did.

columns_for <- function(keys, make, call) {
  keys <- unlist(keys, use.names = FALSE)
  if (!length(keys)) {
    cli::cli_abort("At least one column name must be given in {.arg ...}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (length(keys) == 1L) return(make(keys))
  lapply(keys, make)
}

#' Define the feature columns of a model
#'
#' @param ... Feature columns (from the `column_*()` functions) or lists of
#'   them.
#' @returns A list of feature columns, for the `feature_columns` argument of
#'   the estimators.
#' @family feature columns
#' @seealso [linear_regressor()], [column_numeric()]
#' @export
#' @examplesIf is_pyhooks_available()
#' feature_columns(column_numeric("drat", "wt"))
feature_columns <- function(...) {
  columns <- rlang::list2(...)
  structure(py_construct("feature_columns", unname(columns)), class = "pyhooks_feature_columns")
}

#' A numeric feature column
#'
#' @param ... One or more column names of the input data.
#' @param shape The number of values per example (1).
#' @param default_value Accepted for compatibility; missing values are an
#'   error.
#' @param dtype A numeric type name, e.g. `"float32"`.
#' @param normalizer_fn A Python function applied to the column's tensor,
#'   or `NULL`.
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
  columns_for(list(...), function(key) {
    py_construct("column_numeric", list(
      key = key, shape = shape, default_value = default_value, dtype = dtype,
      normalizer_fn = normalizer_fn
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
  rlang::check_required(vocabulary_list)
  call <- rlang::current_env()
  vocabulary_list <- as_py_list(vocabulary_list)
  default_value <- as_py_int(default_value)
  num_oov_buckets <- as_py_int(num_oov_buckets)
  columns_for(list(...), function(key) {
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
  rlang::check_required(num_buckets)
  call <- rlang::current_env()
  num_buckets <- as_py_int(num_buckets)
  default_value <- as_py_int(default_value)
  columns_for(list(...), function(key) {
    py_construct("column_categorical_with_identity", list(
      key = key, num_buckets = num_buckets, default_value = default_value
    ), call = call)
  }, call)
}

#' A categorical feature column of hashed values
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
  rlang::check_required(hash_bucket_size)
  call <- rlang::current_env()
  hash_bucket_size <- as_py_int(hash_bucket_size)
  columns_for(list(...), function(key) {
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
    source_column = source_column, boundaries = as_py_list(boundaries)
  ))
}

#' Hashed crosses of several columns
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
    keys = as_py_list(keys), hash_bucket_size = as_py_int(hash_bucket_size),
    hash_key = hash_key
  ))
}
