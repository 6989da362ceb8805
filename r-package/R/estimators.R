# Canned estimators: thin wrappers of pyhooks.estimators. The Python object
# gets the R class "pyhooks_estimator" so that train(), evaluate() and
# predict() dispatch on it.

new_estimator <- function(x) {
  class(x) <- unique(c("pyhooks_estimator", class(x)))
  x
}

canned_estimator <- function(name, args, call) {
  for (arg in intersect(names(args), c("activation_fn", "dnn_activation_fn"))) {
    args[arg] <- list(tensor_function(args[[arg]], arg, paste0(name, "()")))
  }
  new_estimator(py_construct(name, args, call = call))
}

#' Linear models
#'
#' `linear_regressor()` predicts a number, `linear_classifier()` a class,
#' from a weighted sum of the feature columns. Train them with [train()].
#'
#' @param feature_columns The model's inputs, from [feature_columns()].
#' @param model_dir Directory for checkpoints and summaries, or `NULL` for
#'   a temporary one, removed when the R session ends (give a directory to
#'   keep the model).
#' @param label_dimension Number of values predicted per example.
#' @param weight_column Name of a column of example weights, or `NULL`.
#' @param optimizer An optimizer name (e.g. `"Ftrl"`, `"Adagrad"`, `"Adam"`,
#'   `"RMSProp"`, `"SGD"`) or a Python `tf$compat$v1$train$Optimizer`.
#' @param seed The graph-level random seed, or `NULL`.
#' @param config A [run_config()] (its `model_dir`, `tf_random_seed` and
#'   `session_config` are used where the arguments are `NULL`), or `NULL`.
#' @returns An estimator (class `pyhooks_estimator`).
#' @family estimators
#' @seealso [train()], [input_fn()], [feature_columns()]
#' @export
#' @examplesIf is_pyhooks_available()
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
linear_regressor <- function(feature_columns, model_dir = NULL, label_dimension = 1L,
                             weight_column = NULL, optimizer = "Ftrl", seed = NULL, config = NULL) {
  rlang::check_required(feature_columns)
  canned_estimator("linear_regressor", c(list(
    feature_columns = as_py_list(feature_columns),
    label_dimension = as_py_int(label_dimension), weight_column = weight_column,
    optimizer = optimizer
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
}

#' @rdname linear_regressor
#' @param n_classes Number of classes (labels are `0` to `n_classes - 1`,
#'   or the strings of `label_vocabulary`).
#' @param label_vocabulary The class labels when they are strings, or `NULL`.
#' @export
linear_classifier <- function(feature_columns, model_dir = NULL, n_classes = 2L,
                              weight_column = NULL, label_vocabulary = NULL, optimizer = "Ftrl",
                              seed = NULL, config = NULL) {
  rlang::check_required(feature_columns)
  canned_estimator("linear_classifier", c(list(
    feature_columns = as_py_list(feature_columns),
    n_classes = as_py_int(n_classes), weight_column = weight_column,
    label_vocabulary = as_py_list(label_vocabulary, named = FALSE), optimizer = optimizer
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
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
#'   `"tanh"`, `"sigmoid"`, `"elu"`, ...), `tf$nn$relu` and the like, or an R
#'   function of a tensor (see [tensor_ops]); an error in it stops training
#'   with a `pyhooks_callback_error` naming this argument (see [train()]).
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
                          dropout = NULL, seed = NULL, config = NULL) {
  rlang::check_required(hidden_units)
  rlang::check_required(feature_columns)
  canned_estimator("dnn_regressor", c(list(
    hidden_units = as_py_list(hidden_units, int = TRUE, named = FALSE),
    feature_columns = as_py_list(feature_columns),
    label_dimension = as_py_int(label_dimension), weight_column = weight_column,
    optimizer = optimizer, activation_fn = activation_fn, dropout = dropout
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
}

#' @rdname dnn_regressor
#' @inheritParams linear_classifier
#' @export
dnn_classifier <- function(hidden_units, feature_columns, model_dir = NULL, n_classes = 2L,
                           weight_column = NULL, label_vocabulary = NULL, optimizer = "Adagrad",
                           activation_fn = "relu", dropout = NULL, seed = NULL, config = NULL) {
  rlang::check_required(hidden_units)
  rlang::check_required(feature_columns)
  canned_estimator("dnn_classifier", c(list(
    hidden_units = as_py_list(hidden_units, int = TRUE, named = FALSE),
    feature_columns = as_py_list(feature_columns),
    n_classes = as_py_int(n_classes), weight_column = weight_column,
    label_vocabulary = as_py_list(label_vocabulary, named = FALSE), optimizer = optimizer,
    activation_fn = activation_fn, dropout = dropout
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
}

#' Wide and deep models
#'
#' `dnn_linear_combined_regressor()` and `dnn_linear_combined_classifier()`
#' add the outputs of a linear model (the "wide" part, which takes
#' categorical columns as they are) and of a deep neural network (the "deep"
#' part, dense columns only). Each part trains with its own optimizer.
#'
#' @inheritParams dnn_regressor
#' @inheritParams linear_classifier
#' @param linear_feature_columns Feature columns of the linear part, or
#'   `NULL`.
#' @param dnn_feature_columns Dense feature columns of the network, or
#'   `NULL`.
#' @param dnn_hidden_units Sizes of the network's hidden layers, e.g.
#'   `c(10, 10)`.
#' @param linear_optimizer,dnn_optimizer The optimizers of each part (names
#'   or Python optimizers): `"Ftrl"` and `"Adagrad"` by default.
#' @param dnn_activation_fn Activation of the hidden layers, as
#'   `activation_fn` of [dnn_regressor()].
#' @param dnn_dropout Probability of dropping a hidden unit during training,
#'   or `NULL`.
#' @returns An estimator (class `pyhooks_estimator`).
#' @family estimators
#' @seealso [train()], [input_fn()], [feature_columns()]
#' @export
#' @examples
#' \dontrun{
#' model <- dnn_linear_combined_classifier(
#'   linear_feature_columns = feature_columns(
#'     column_categorical_with_vocabulary_list("cyl", vocabulary_list = c(4, 6, 8))),
#'   dnn_feature_columns = feature_columns(column_numeric("drat", "wt")),
#'   dnn_hidden_units = c(4, 3)
#' )
#' train(model, input_fn(mtcars, am ~ cyl + drat + wt), steps = 10)
#' }
dnn_linear_combined_regressor <- function(linear_feature_columns = NULL,
                                          dnn_feature_columns = NULL,
                                          dnn_hidden_units = NULL, model_dir = NULL,
                                          label_dimension = 1L, weight_column = NULL,
                                          linear_optimizer = "Ftrl", dnn_optimizer = "Adagrad",
                                          dnn_activation_fn = "relu", dnn_dropout = NULL,
                                          seed = NULL, config = NULL) {
  canned_estimator("dnn_linear_combined_regressor", c(list(
    linear_feature_columns = as_py_list(linear_feature_columns),
    dnn_feature_columns = as_py_list(dnn_feature_columns),
    dnn_hidden_units = as_py_list(dnn_hidden_units, int = TRUE, named = FALSE),
    label_dimension = as_py_int(label_dimension), weight_column = weight_column,
    linear_optimizer = linear_optimizer, dnn_optimizer = dnn_optimizer,
    dnn_activation_fn = dnn_activation_fn, dnn_dropout = dnn_dropout
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
}

#' @rdname dnn_linear_combined_regressor
#' @export
dnn_linear_combined_classifier <- function(linear_feature_columns = NULL,
                                           dnn_feature_columns = NULL,
                                           dnn_hidden_units = NULL, model_dir = NULL,
                                           n_classes = 2L, weight_column = NULL,
                                           label_vocabulary = NULL, linear_optimizer = "Ftrl",
                                           dnn_optimizer = "Adagrad", dnn_activation_fn = "relu",
                                           dnn_dropout = NULL, seed = NULL, config = NULL) {
  canned_estimator("dnn_linear_combined_classifier", c(list(
    linear_feature_columns = as_py_list(linear_feature_columns),
    dnn_feature_columns = as_py_list(dnn_feature_columns),
    dnn_hidden_units = as_py_list(dnn_hidden_units, int = TRUE, named = FALSE),
    n_classes = as_py_int(n_classes), weight_column = weight_column,
    label_vocabulary = as_py_list(label_vocabulary, named = FALSE),
    linear_optimizer = linear_optimizer, dnn_optimizer = dnn_optimizer,
    dnn_activation_fn = dnn_activation_fn, dnn_dropout = dnn_dropout
  ), config_args(model_dir, seed, config)), call = rlang::current_env())
}

# model_dir, seed and config of a canned estimator (Python takes what the
# arguments leave NULL from the run_config()).
config_args <- function(model_dir, seed, config) {
  if (!is.null(config)) {
    if (!py_class_is(config, "RunConfig")) {
      cli::cli_abort("{.arg config} must be made by {.fn run_config}, not {.obj_type_friendly {config}}.",
                     class = "pyhooks_error_argument", call = rlang::caller_env())
    }
  }
  list(model_dir = path_arg(model_dir), seed = as_py_int(seed), config = config)
}

#' Boosted trees estimators (not available)
#'
#' tfestimators' `boosted_trees_regressor()` and `boosted_trees_classifier()`
#' wrapped `tf.estimator`'s boosted trees, which were removed from
#' TensorFlow with `tf.estimator` itself: they cannot be supported on
#' TensorFlow 2.21. These functions signal an error saying so.
#'
#' @param ... Ignored.
#' @returns Nothing: always an error of class `pyhooks_unsupported`.
#' @family estimators
#' @export
boosted_trees_regressor <- function(...) {
  abort_boosted_trees("boosted_trees_regressor")
}

#' @rdname boosted_trees_regressor
#' @export
boosted_trees_classifier <- function(...) {
  abort_boosted_trees("boosted_trees_classifier")
}

abort_boosted_trees <- function(name) {
  cli::cli_abort(
    c("{.fn {name}} is not available: TensorFlow's boosted trees went with {.code tf.estimator}, which TensorFlow 2.21 no longer has.",
      "i" = "Use {.fn dnn_classifier}/{.fn dnn_regressor} or {.fn dnn_linear_combined_classifier}/{.fn dnn_linear_combined_regressor} here, or gradient boosting from the {.pkg xgboost} or {.pkg lightgbm} packages."),
    class = "pyhooks_unsupported", call = rlang::caller_env()
  )
}

#' The model directory and checkpoints of an estimator
#'
#' `model_dir()` is where the estimator keeps its checkpoints and TensorBoard
#' event files; `latest_checkpoint()` the path of its newest checkpoint (or
#' `NULL` before training); `variable_names()` the names of the variables in
#' that checkpoint and `variable_value()` their values. `coef()` gives every
#' variable's value, as tfestimators' `coef()` did.
#'
#' @param object An estimator.
#' @param name Names of variables, or `NULL` for all of them.
#' @param ... Not used; must be empty.
#' @returns `model_dir()`, `latest_checkpoint()`: a path. `variable_names()`:
#'   a character vector. `variable_value()` and `coef()`: a named list of
#'   values, one per variable (`variable_value(model, "global_step")` is
#'   `list(global_step = 2)` after 2 steps, as in tfestimators): numbers,
#'   vectors or arrays; 64-bit integers (such as the global step) are doubles,
#'   as reticulate converts them. Before training, and for a name the
#'   checkpoint does not hold, these are errors.
#' @family estimators
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train(model, input_fn(mtcars, mpg ~ drat), steps = 2)
#' variable_value(model, "linear/linear_model/drat/weights")
#' }
model_dir <- function(object, ...) {
  rlang::check_dots_empty()
  check_estimator(object)
  object$model_dir
}

#' @rdname model_dir
#' @export
latest_checkpoint <- function(object, ...) {
  rlang::check_dots_empty()
  check_estimator(object)
  object$latest_checkpoint()
}

#' @rdname model_dir
#' @export
variable_names <- function(object, ...) {
  rlang::check_dots_empty()
  check_estimator(object)
  check_trained(object, "variable_names()")
  names <- with_py_errors(py_r_support()$variable_names(object))
  as.character(unlist(reticulate::py_to_r(names)))
}

#' @rdname model_dir
#' @export
variable_value <- function(object, name = NULL, ...) {
  rlang::check_dots_empty()
  check_estimator(object)
  check_not_na(name, "name")
  if (!is.null(name) && !is.character(name)) {
    cli::cli_abort("{.arg name} must be variable names (a character vector) or {.code NULL}, not {.obj_type_friendly {name}}.",
                   class = "pyhooks_error_argument")
  }
  check_trained(object, "variable_value()")
  values <- with_py_errors(py_r_support()$variable_values(
    object, names = if (!is.null(name)) as.list(name)
  ))
  py_value(values)
}

#' @rdname model_dir
#' @importFrom stats coef
#' @export
coef.pyhooks_estimator <- function(object, ...) {
  rlang::check_dots_empty()
  variable_value(object)
}

# tfestimators' error for a model without a checkpoint, then where pyhooks looked.
check_trained <- function(object, fn, call = rlang::caller_env()) {
  if (is.null(latest_checkpoint(object))) {
    cli::cli_abort(
      c("'{fn}' must be called on a trained model.",
        "i" = "There is no checkpoint in {.path {model_dir(object)}} yet: {.fn train} it first."),
      class = "pyhooks_error_untrained", call = call
    )
  }
}

check_estimator <- function(object, call = rlang::caller_env()) {
  if (inherits(object, "pyhooks_estimator")) return(invisible())
  if (inherits(object, "pyhooks_history")) { # `model <- estimator %>% train(...)`
    cli::cli_abort(
      c("{.arg object} must be an estimator, not the training history that {.fn train} returns.",
        "i" = "{.fn train} trains the estimator in place and returns its history: keep the estimator, e.g. {.code model <- linear_regressor(...)}, then {.code history <- train(model, ...)}, and use {.code model}."),
      class = "pyhooks_error_argument", call = call)
  }
  cli::cli_abort("{.arg object} must be an estimator, not {.obj_type_friendly {object}}.",
                 class = "pyhooks_error_argument", call = call)
}

# train(), evaluate(), predict() and export_savedmodel() of anything else: an error
# naming `object` (and, for a training history, what to do), not "no applicable method".
#' @export
train.default <- function(object, ...) check_estimator(object)
#' @export
evaluate.default <- function(object, ...) check_estimator(object)
#' @export
predict.pyhooks_history <- function(object, ...) check_estimator(object)
#' @export
export_savedmodel.default <- function(object, ...) check_estimator(object)
