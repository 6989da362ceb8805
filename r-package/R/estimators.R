# Canned estimators: thin wrappers of pyhooks.estimators. The Python object
# gets the R class "pyhooks_estimator" so that train(), evaluate() and
# predict() dispatch on it.

new_estimator <- function(x) {
  class(x) <- unique(c("pyhooks_estimator", class(x)))
  x
}

estimator <- function(name, args, call) {
  new_estimator(py_construct(name, args, call = call))
}

#' Linear models
#'
#' `linear_regressor()` predicts a number, `linear_classifier()` a class,
#' from a weighted sum of the feature columns. Train them with [train()].
#'
#' @param feature_columns The model's inputs, from [feature_columns()].
#' @param model_dir Directory for checkpoints and summaries, or `NULL` for
#'   a temporary one.
#' @param label_dimension Number of values predicted per example.
#' @param weight_column Name of a column of example weights, or `NULL`.
#' @param optimizer An optimizer name (e.g. `"Ftrl"`, `"Adagrad"`, `"Adam"`,
#'   `"RMSProp"`, `"SGD"`) or a Python `tf$compat$v1$train$Optimizer`.
#' @param seed The graph-level random seed, or `NULL`.
#' @returns An estimator (class `pyhooks_estimator`).
#' @family estimators
#' @seealso [train()], [input_fn()], [feature_columns()]
#' @export
#' @examplesIf is_pyhooks_available()
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
linear_regressor <- function(feature_columns, model_dir = NULL, label_dimension = 1L,
                             weight_column = NULL, optimizer = "Ftrl", seed = NULL) {
  rlang::check_required(feature_columns)
  estimator("linear_regressor", list(
    feature_columns = as_py_list(feature_columns), model_dir = path_arg(model_dir),
    label_dimension = as_py_int(label_dimension), weight_column = weight_column,
    optimizer = optimizer, seed = as_py_int(seed)
  ), call = rlang::current_env())
}

#' @rdname linear_regressor
#' @param n_classes Number of classes (labels are `0` to `n_classes - 1`,
#'   or the strings of `label_vocabulary`).
#' @param label_vocabulary The class labels when they are strings, or `NULL`.
#' @export
linear_classifier <- function(feature_columns, model_dir = NULL, n_classes = 2L,
                              weight_column = NULL, label_vocabulary = NULL, optimizer = "Ftrl",
                              seed = NULL) {
  rlang::check_required(feature_columns)
  estimator("linear_classifier", list(
    feature_columns = as_py_list(feature_columns), model_dir = path_arg(model_dir),
    n_classes = as_py_int(n_classes), weight_column = weight_column,
    label_vocabulary = as_py_list(label_vocabulary), optimizer = optimizer,
    seed = as_py_int(seed)
  ), call = rlang::current_env())
}

#' Deep neural network models
#'
#' `dnn_regressor()` predicts a number, `dnn_classifier()` a class, through
#' fully connected hidden layers. Their feature columns must be dense (wrap
#' categorical columns in [column_indicator()] or [column_embedding()]).
#'
#' @inheritParams linear_regressor
#' @param hidden_units Sizes of the hidden layers, e.g. `c(10, 10)`.
#' @param activation_fn Activation of the hidden layers: a name (`"relu"`,
#'   `"tanh"`, `"sigmoid"`, `"elu"`, ...) or a Python function.
#' @param dropout Probability of dropping a unit during training, or `NULL`.
#' @returns An estimator (class `pyhooks_estimator`).
#' @family estimators
#' @seealso [train()], [input_fn()], [feature_columns()]
#' @export
#' @examplesIf is_pyhooks_available()
#' model <- dnn_regressor(hidden_units = c(4, 4),
#'                        feature_columns = feature_columns(column_numeric("drat")))
dnn_regressor <- function(hidden_units, feature_columns, model_dir = NULL, label_dimension = 1L,
                          weight_column = NULL, optimizer = "Adagrad", activation_fn = "relu",
                          dropout = NULL, seed = NULL) {
  rlang::check_required(hidden_units)
  rlang::check_required(feature_columns)
  estimator("dnn_regressor", list(
    hidden_units = as_py_list(hidden_units, int = TRUE),
    feature_columns = as_py_list(feature_columns), model_dir = path_arg(model_dir),
    label_dimension = as_py_int(label_dimension), weight_column = weight_column,
    optimizer = optimizer, activation_fn = activation_fn, dropout = dropout,
    seed = as_py_int(seed)
  ), call = rlang::current_env())
}

#' @rdname dnn_regressor
#' @inheritParams linear_classifier
#' @export
dnn_classifier <- function(hidden_units, feature_columns, model_dir = NULL, n_classes = 2L,
                           weight_column = NULL, label_vocabulary = NULL, optimizer = "Adagrad",
                           activation_fn = "relu", dropout = NULL, seed = NULL) {
  rlang::check_required(hidden_units)
  rlang::check_required(feature_columns)
  estimator("dnn_classifier", list(
    hidden_units = as_py_list(hidden_units, int = TRUE),
    feature_columns = as_py_list(feature_columns), model_dir = path_arg(model_dir),
    n_classes = as_py_int(n_classes), weight_column = weight_column,
    label_vocabulary = as_py_list(label_vocabulary), optimizer = optimizer,
    activation_fn = activation_fn, dropout = dropout, seed = as_py_int(seed)
  ), call = rlang::current_env())
}
