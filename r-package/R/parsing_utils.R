#' Parsing specs for TensorFlow Example records
#'
#' For data kept as `tf.Example` records: the spec that
#' `tf$io$parse_example(records, spec)` needs to read the features of
#' `feature_columns`, the label and the example weights, as tfestimators'
#' functions of these names (and `tf.estimator`'s) made it. Numeric columns
#' are `FixedLenFeature`s of their shape, categorical ones `VarLenFeature`s,
#' the label a `FixedLenFeature` of `label_dtype`, a weight column one float.
#'
#' pyhooks trains from data in memory: parse the records with the spec,
#' turn the parsed tensors into R vectors (a `VarLenFeature` gives a sparse
#' tensor: `tf$sparse$to_dense()` first) and give them to [input_fn()].
#'
#' @param feature_columns The model's feature columns (or one).
#' @param label_key The label's name in the records.
#' @param label_dtype The label's type: a name (`"int64"`, `"string"`,
#'   `"float32"`) or a TensorFlow type (`tf$int64`).
#' @param label_default The label's value where a record has none, or `NULL`
#'   (then every record must have one).
#' @param weight_column The name (or a [column_numeric()]) of the example
#'   weights, or `NULL`.
#' @param label_dimension The number of values of a regressor's label.
#' @returns A named list of Python `FixedLenFeature` / `VarLenFeature`
#'   objects, one per feature, the label and the weight.
#' @family feature columns
#' @seealso [input_fn()]
#' @export
#' @examplesIf is_pyhooks_available()
#' spec <- classifier_parse_example_spec(column_numeric("a"), label_key = "b",
#'                                       weight_column = "c")
#' names(spec)
classifier_parse_example_spec <- function(feature_columns, label_key, label_dtype = "int64",
                                          label_default = NULL, weight_column = NULL) {
  rlang::check_required(feature_columns)
  rlang::check_required(label_key)
  parse_example_spec_of("classifier_parse_example_spec", list(
    feature_columns = as_py_list(feature_columns), label_key = label_key,
    label_dtype = label_dtype, label_default = whole_as_integer(label_default),
    weight_column = weight_column
  ))
}

#' @rdname classifier_parse_example_spec
#' @export
regressor_parse_example_spec <- function(feature_columns, label_key, label_dtype = "float32",
                                         label_default = NULL, label_dimension = 1L,
                                         weight_column = NULL) {
  rlang::check_required(feature_columns)
  rlang::check_required(label_key)
  parse_example_spec_of("regressor_parse_example_spec", list(
    feature_columns = as_py_list(feature_columns), label_key = label_key,
    label_dtype = label_dtype, label_default = label_default,
    label_dimension = as_py_int(label_dimension), weight_column = weight_column
  ))
}

# Whole numbers as integers: an int64 label's default must not be a Python float.
whole_as_integer <- function(x) {
  if (is.double(x) && length(x) && all(is.finite(x) & x == trunc(x))) storage.mode(x) <- "integer"
  x
}

# The spec as an R list of the Python feature objects (kept as they are, so that
# tf$io$parse_example() gets them back unchanged).
parse_example_spec_of <- function(name, args, call = rlang::caller_env()) {
  for (arg in names(args)) check_not_na(args[[arg]], arg, call)
  py_pyhooks() # Python and pyhooks loaded, or an error saying how
  parsing <- reticulate::import("pyhooks.estimators.parsing", convert = FALSE)
  spec <- with_py_errors(do.call(parsing[[name]], args), call = call)
  keys <- reticulate::py_to_r(reticulate::import_builtins(convert = FALSE)$list(spec))
  stats::setNames(lapply(keys, function(key) spec$`__getitem__`(key)), keys)
}
