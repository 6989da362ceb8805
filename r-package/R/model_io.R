# Around the model: SavedModel export, train_and_evaluate() and the names of
# predictions and metrics.

#' Export an estimator as a SavedModel
#'
#' Writes `export_dir_base/<timestamp>`: a TensorFlow SavedModel of the
#' estimator's predictions with its latest (or the given) checkpoint. Its
#' `serving_default` signature takes the input columns the model reads (by
#' name, one value per example) and returns what [predict()] gives.
#'
#' @param object A trained estimator.
#' @param export_dir_base The directory under which the export is made.
#' @param checkpoint_path The checkpoint to export, or `NULL` for the latest.
#' @param as_text Write the graph as text.
#' @param ... Not used; must be empty.
#' @returns The path of the export, invisibly.
#' @family estimators
#' @seealso [model_dir()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train(model, input_fn(mtcars, mpg ~ drat), steps = 2)
#' path <- export_savedmodel(model, tempfile("export"))
#' }
export_savedmodel <- function(object, ...) {
  UseMethod("export_savedmodel")
}

#' @rdname export_savedmodel
#' @export
export_savedmodel.pyhooks_estimator <- function(object, export_dir_base, checkpoint_path = NULL,
                                                as_text = FALSE, ...) {
  rlang::check_dots_empty()
  rlang::check_required(export_dir_base)
  path <- with_py_errors(object$export_savedmodel(
    export_dir_base = path_arg(export_dir_base), checkpoint_path = path_arg(checkpoint_path),
    as_text = isTRUE(as_text)
  ))
  invisible(path)
}

#' Train, then evaluate
#'
#' `train_and_evaluate()` trains `object` as `train_spec` says (up to
#' `max_steps`, or until its input ends), then evaluates the final model as
#' `eval_spec` says, as `tf.estimator`'s function did when run locally.
#'
#' @param object An estimator.
#' @param train_spec A [train_spec()].
#' @param eval_spec An [eval_spec()].
#' @param input_fn The input, from [input_fn()].
#' @param max_steps Train up to this global step, or `NULL` to train until
#'   the input ends.
#' @param steps Evaluate this many batches, or `NULL` for the whole input.
#' @param name The evaluation's name (its TensorBoard directory is
#'   `eval_<name>`), or `NULL`.
#' @param hooks A list of hooks for the training or the evaluation.
#' @param ... Not used; must be empty.
#' @returns `train_and_evaluate()`: the evaluation's metrics, as
#'   [evaluate()]. `train_spec()`, `eval_spec()`: a specification.
#' @family training
#' @seealso [train()], [evaluate()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train_and_evaluate(model,
#'   train_spec(input_fn(mtcars, mpg ~ drat, epochs = NULL), max_steps = 10),
#'   eval_spec(input_fn(mtcars, mpg ~ drat)))
#' }
train_and_evaluate <- function(object, train_spec, eval_spec, ...) {
  rlang::check_dots_empty()
  check_estimator(object)
  if (!inherits(train_spec, "pyhooks_train_spec")) {
    cli::cli_abort("{.arg train_spec} must be made by {.fn train_spec}.",
                   class = "pyhooks_error_argument")
  }
  if (!inherits(eval_spec, "pyhooks_eval_spec")) {
    cli::cli_abort("{.arg eval_spec} must be made by {.fn eval_spec}.",
                   class = "pyhooks_error_argument")
  }
  train(object, input_fn = train_spec$input_fn, max_steps = train_spec$max_steps,
        hooks = train_spec$hooks)
  evaluate(object, input_fn = eval_spec$input_fn, steps = eval_spec$steps,
           name = eval_spec$name, hooks = eval_spec$hooks)
}

#' @rdname train_and_evaluate
#' @export
train_spec <- function(input_fn, max_steps = NULL, hooks = NULL) {
  rlang::check_required(input_fn)
  check_input_fn(input_fn)
  structure(list(input_fn = input_fn, max_steps = as_py_int(max_steps),
                 hooks = as_hook_list(hooks)),
            class = "pyhooks_train_spec")
}

#' @rdname train_and_evaluate
#' @export
eval_spec <- function(input_fn, steps = 100L, name = NULL, hooks = NULL) {
  rlang::check_required(input_fn)
  check_input_fn(input_fn)
  structure(list(input_fn = input_fn, steps = as_py_int(steps), name = name,
                 hooks = as_hook_list(hooks)),
            class = "pyhooks_eval_spec")
}

#' Names of predictions and metrics
#'
#' The keys that canned estimators use in [predict()] results and
#' [evaluate()] metrics, as tfestimators listed them.
#'
#' @returns A named list of strings.
#' @family estimators
#' @export
#' @examples
#' prediction_keys()$PROBABILITIES
#' metric_keys()$AUC
prediction_keys <- function() {
  list(CLASSES = "classes", CLASS_IDS = "class_ids", LOGISTIC = "logistic", LOGITS = "logits",
       PREDICTIONS = "predictions", PROBABILITIES = "probabilities")
}

#' @rdname prediction_keys
#' @export
metric_keys <- function() {
  list(LOSS = "loss", LOSS_MEAN = "average_loss", ACCURACY = "accuracy",
       ACCURACY_BASELINE = "accuracy_baseline", AUC = "auc",
       AUC_PR = "auc_precision_recall", LABEL_MEAN = "label/mean",
       PREDICTION_MEAN = "prediction/mean", PRECISION = "precision", RECALL = "recall")
}
