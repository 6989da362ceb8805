# Around the model: SavedModel export, train_and_evaluate() and the names of
# predictions and metrics.

#' Export an estimator as a SavedModel
#'
#' Writes a TensorFlow SavedModel of the estimator's predictions with its
#' latest (or the given) checkpoint. Its `serving_default` signature takes the
#' input columns the model reads (by name, one value per example) and returns
#' what [predict()] gives.
#'
#' `overwrite` and `versioned` have the meaning of the tensorflow R package's
#' `export_savedmodel()` (which tfestimators' method followed): by default
#' the SavedModel is written in `export_dir_base` itself, replacing the one
#' there; with `versioned = TRUE` (the default when `overwrite = FALSE`) it
#' goes to a new `export_dir_base/<timestamp>` directory, as `tf.estimator`
#' exported. A directory that exists but holds something other than a
#' SavedModel is never replaced: that is an error.
#'
#' @param object A trained estimator.
#' @param export_dir_base Where to write: the SavedModel's directory, or with
#'   `versioned = TRUE` the directory under which it is made.
#' @param checkpoint_path The checkpoint to export, or `NULL` for the latest.
#' @param as_text Write the graph as text.
#' @param overwrite When `export_dir_base` exists (and `versioned` is
#'   `FALSE`): `TRUE` replaces the SavedModel in it, `FALSE` is an error.
#' @param versioned `TRUE` to export into a new timestamped directory under
#'   `export_dir_base`.
#' @param serving_input_receiver_fn,assets_extra Must be `NULL`:
#'   tfestimators passed these to `tf.estimator`; pyhooks' SavedModel always
#'   serves the model's input columns and has no extra assets.
#' @param ... Not used; must be empty.
#' @returns The path of the SavedModel's directory, invisibly.
#' @family estimators
#' @seealso [model_dir()]
#' @export
#' @examplesIf is_pyhooks_available()
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train(model, input_fn(mtcars, mpg ~ drat), steps = 2)
#' path <- export_savedmodel(model, tempfile("export"))
#' list.files(path)
#' export_savedmodel(model, tempfile("exports"), versioned = TRUE)
export_savedmodel <- function(object, ...) {
  UseMethod("export_savedmodel")
}

#' @rdname export_savedmodel
#' @export
export_savedmodel.pyhooks_estimator <- function(object, export_dir_base,
                                                serving_input_receiver_fn = NULL,
                                                assets_extra = NULL, as_text = FALSE,
                                                checkpoint_path = NULL, overwrite = TRUE,
                                                versioned = !overwrite, ...) {
  rlang::check_dots_empty()
  rlang::check_required(export_dir_base)
  for (arg in c("serving_input_receiver_fn", "assets_extra")) {
    if (!is.null(get(arg))) {
      cli::cli_abort(
        c("{.arg {arg}} must be {.code NULL}.",
          "i" = "pyhooks' SavedModel serves the model's input columns by name (see {.fn export_savedmodel})."),
        class = "pyhooks_error_argument"
      )
    }
  }
  check_not_na(overwrite, "overwrite")
  check_not_na(versioned, "versioned")
  check_not_na(as_text, "as_text")
  path <- run_with_callbacks(
    py_r_support()$export_savedmodel_to(
      object, export_dir_base = path_arg(export_dir_base), overwrite = overwrite,
      versioned = versioned, checkpoint_path = path_arg(checkpoint_path), as_text = as_text
    ),
    states = callback_states(list(object)), what = "Export", call = rlang::current_env()
  )
  invisible(reticulate::py_to_r(path))
}

# The Python helpers that give R functions tfestimators' meanings.
py_r_support <- function() {
  py_pyhooks() # pyhooks' Python first
  reticulate::import("pyhooks.estimators.r_support", convert = FALSE)
}

#' Train, evaluating on the way
#'
#' `train_and_evaluate()` trains `object` as `train_spec` says (up to
#' `max_steps`, or until its input ends) and evaluates it as `eval_spec` says
#' after checkpoint saves and at the end, as `tf.estimator`'s function did
#' when run on one machine. Checkpoints are saved as the estimator's
#' [run_config()] says (`save_checkpoints_steps` or `save_checkpoints_secs`;
#' every 600 seconds by default). After a save, the model is evaluated when
#' `start_delay_secs` have passed since training started and
#' `throttle_secs` since the last evaluation began (the first save of the
#' call, before any step, is not evaluated); the final checkpoint is always
#' evaluated. Every evaluation writes its metrics for TensorBoard under
#' `model_dir/eval` (`eval_<name>`), as [evaluate()] does.
#'
#' @param object An estimator.
#' @param train_spec A [train_spec()].
#' @param eval_spec An [eval_spec()].
#' @param input_fn The input, from [input_fn()] (or for a custom [estimator()],
#'   a function of no arguments returning a TensorFlow dataset: see [train()]).
#' @param max_steps Train up to this global step, or `NULL` to train until
#'   the input ends.
#' @param steps Evaluate this many batches, or `NULL` for the whole input.
#' @param name The evaluation's name (its TensorBoard directory is
#'   `eval_<name>`), or `NULL`.
#' @param hooks A list of hooks for the training or for every evaluation.
#' @param start_delay_secs No evaluation before this many seconds of
#'   training (except the final one).
#' @param throttle_secs Evaluate after a checkpoint save only if this many
#'   seconds passed since the last evaluation began (`0`: after every save).
#' @param ... Not used; must be empty.
#' @returns `train_and_evaluate()`: the training history (invisibly, as
#'   [train()]) with one `eval_<metric>` column per metric of [evaluate()]:
#'   the metrics at the steps that were evaluated, `NA` at the others (a
#'   row is added for an evaluated step the history has no row for, its
#'   training columns `NA`; a metric that was not a number stays `NaN`). Its last
#'   row holds the final evaluation. `train_spec()`, `eval_spec()`: a
#'   specification.
#' @family training
#' @seealso [train()], [evaluate()], [run_config()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")),
#'                           config = run_config(save_checkpoints_steps = 5))
#' history <- train_and_evaluate(model,
#'   train_spec(input_fn(mtcars, mpg ~ drat, epochs = NULL), max_steps = 20),
#'   eval_spec(input_fn(mtcars, mpg ~ drat), throttle_secs = 0))
#' history[c("steps", "eval_average_loss")]
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
  call <- rlang::current_env()
  completed <- with_training_defaults(train_spec$hooks) # as train() completes them
  hooks <- completed$hooks
  history_hook <- completed$history_hook
  py <- py_pyhooks()
  specs <- with_py_errors(list(
    py$train_spec(train_spec$input_fn, max_steps = train_spec$max_steps, hooks = hooks),
    py$eval_spec(eval_spec$input_fn, steps = eval_spec$steps, name = eval_spec$name,
                 hooks = eval_spec$hooks, start_delay_secs = eval_spec$start_delay_secs,
                 throttle_secs = eval_spec$throttle_secs)
  ), call = call)
  result <- run_with_callbacks(
    py$train_and_evaluate(object, specs[[1]], specs[[2]]),
    states = callback_states(c(hooks, eval_spec$hooks,
                               list(object, train_spec$input_fn, eval_spec$input_fn))),
    what = "Training",
    partial = function() list(history = history_of(history_hook)),
    call = call
  )
  invisible(new_history(result[[2]]))
}

#' @rdname train_and_evaluate
#' @export
train_spec <- function(input_fn, max_steps = NULL, hooks = NULL) {
  rlang::check_required(input_fn)
  input_fn <- spec_input_fn(input_fn)
  spec <- structure(list(input_fn = input_fn, max_steps = as_py_int(max_steps),
                         hooks = as_hook_list(hooks)),
                    class = "pyhooks_train_spec")
  py_construct("train_spec", spec[names(spec) != "hooks"]) # checked now, by the Python spec
  spec
}

#' @rdname train_and_evaluate
#' @export
eval_spec <- function(input_fn, steps = 100L, name = NULL, hooks = NULL,
                      start_delay_secs = 120, throttle_secs = 600) {
  rlang::check_required(input_fn)
  input_fn <- spec_input_fn(input_fn)
  spec <- structure(list(input_fn = input_fn, steps = as_py_int(steps), name = name,
                         hooks = as_hook_list(hooks), start_delay_secs = start_delay_secs,
                         throttle_secs = throttle_secs),
                    class = "pyhooks_eval_spec")
  py_construct("eval_spec", spec[names(spec) != "hooks"]) # checked now, by the Python spec
  spec
}

#' Names of predictions and metrics
#'
#' The keys that canned estimators use in [predict()] results and
#' [evaluate()] metrics, as tfestimators listed them.
#'
#' The metrics: `loss` is the mean over the evaluated batches of each
#' batch's summed loss (tf.estimator's definition: it grows with the batch
#' size), `average_loss` the mean loss per example, `accuracy` the share of
#' examples whose predicted class is the label, `accuracy_baseline` the
#' accuracy of always predicting the more frequent class, `auc` and
#' `auc_precision_recall` the areas under the ROC and precision-recall
#' curves, `precision` and `recall` those of the positive class at the
#' threshold 0.5, `label/mean` and `prediction/mean` the means of the labels
#' and of the predictions (probabilities of the positive class for a binary
#' classifier).
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
