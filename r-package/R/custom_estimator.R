# Custom estimators: an R model_fn builds the model with TensorFlow ops
# (through `tf`, TensorFlow 1.x's API), as tfestimators' estimator() did.

#' A custom estimator
#'
#' `estimator()` makes an estimator whose model is built by `model_fn`, an R
#' function using TensorFlow operations (through [tf]). It is trained,
#' evaluated and used for predictions like the canned estimators, with the
#' same hooks, input pipeline and checkpoints.
#'
#' `model_fn` is called once per mode (and kind of input); the graph it
#' builds is kept for later calls. Its arguments (`params` and `config` are
#' optional):
#' * `features`: the input's feature columns, a named list of tensors
#'   (`features$drat`). Where a tensor is expected
#'   (`tf$layers$dense(features, 10L)`) it stands for the `float64` matrix of
#'   all the numeric features, as in tfestimators. [input_layer()] turns it
#'   into the input of feature columns.
#' * `labels`: the response tensor (a factor response holds its level
#'   numbers minus one), or `NULL` without a response.
#' * `mode`: `"train"`, `"eval"` or `"infer"` (see [mode_keys()]).
#' * `params`: `params` as given here (an R list; `list()` when `NULL`, as
#'   TensorFlow gives `{}`); `config`: the [run_config()].
#'
#' It returns an [estimator_spec()]. Training needs `loss` and a `train_op`
#' that increments the global step
#' (`optimizer$minimize(loss, global_step = tf$train$get_global_step())`);
#' evaluation needs `loss` (its mean over batches is the metric `loss`) and
#' may add `eval_metric_ops`; prediction needs `predictions`.
#'
#' @param model_fn The model function, see Details.
#' @param model_dir Directory for checkpoints and summaries, or `NULL` for
#'   the one of `config`, else a temporary one, removed when the R session
#'   ends (give a directory to keep the model).
#' @param config A [run_config()], or `NULL`.
#' @param params A named list of hyperparameters for `model_fn`, or `NULL`.
#' @returns An estimator (class `pyhooks_estimator`).
#' @family custom estimators
#' @seealso [estimator_spec()], [mode_keys()], [input_layer()], [tf]
#' @export
#' @examples
#' \dontrun{
#' model_fn <- function(features, labels, mode, params) {
#'   predictions <- tf$reshape(tf$layers$dense(features, 1L), list(-1L))
#'   if (mode == "infer") {
#'     return(estimator_spec(mode, predictions = list(mpg = predictions)))
#'   }
#'   loss <- tf$losses$mean_squared_error(labels, predictions)
#'   optimizer <- tf$train$GradientDescentOptimizer(params$learning_rate)
#'   train_op <- optimizer$minimize(loss, global_step = tf$train$get_global_step())
#'   estimator_spec(mode, loss = loss, train_op = train_op)
#' }
#' model <- estimator(model_fn, params = list(learning_rate = 0.01))
#' train(model, input_fn(mtcars, mpg ~ drat + wt), steps = 10)
#' }
estimator <- function(model_fn, model_dir = NULL, config = NULL, params = NULL) {
  rlang::check_required(model_fn)
  call <- rlang::current_env()
  if (!is.function(model_fn)) {
    cli::cli_abort("{.arg model_fn} must be an R function, not {.obj_type_friendly {model_fn}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (!is.null(params) && (!is.list(params) || (length(params) && is.null(names(params))))) {
    cli::cli_abort("{.arg params} must be a named list or {.code NULL}, not {.obj_type_friendly {params}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  formal_names <- names(formals(model_fn))
  takes <- function(name) name %in% formal_names || "..." %in% formal_names
  # the first error or interrupt of the model_fn, for train() and the others to report
  state <- new_callback_state()
  record <- record_condition(state, "model_fn")
  # Python calls `wrapper` (through the bridge's RModelFn) with no arguments, and it reads
  # them from `py_fn`; it calls `model_fn` by name with symbols for its arguments. No tensor
  # is then an argument of a call on R's stack, which an R error records (see RModelFn).
  frame <- new.env(parent = baseenv())
  frame$model_fn <- model_fn
  user_call <- as.call(c(quote(model_fn), sapply(
    c("features", "labels", "mode", if (takes("params")) "params", if (takes("config")) "config"),
    as.name, simplify = FALSE)))
  wrapper <- function() {
    arg <- function(name) reticulate::py_get_attr(py_fn, name)
    frame$features <- r_features(arg("features"))
    frame$labels <- reticulate::py_to_r(arg("labels"))
    frame$mode <- reticulate::py_to_r(arg("mode"))
    frame$params <- r_params # NULL: list(), as TensorFlow's {}
    frame$config <- arg("config")
    state$mode <- frame$mode
    tryCatch(
      withCallingHandlers(eval(user_call, frame), error = record, interrupt = record),
      error = function(e) {
        # to Python, a plain condition of the message (reticulate formats it there)
        stop(structure(class = c("pyhooks_model_fn_error", "error", "condition"), list(
          message = sprintf("The model function failed (mode \"%s\"): %s", frame$mode,
                            conditionMessage(e)),
          call = NULL
        )))
      }
    )
  }
  r_params <- if (is.null(params)) list() else params
  py_fn <- py_bridge()$RModelFn(reticulate::r_to_py(wrapper, convert = FALSE))
  model <- new_estimator(py_construct("estimator", list(
    model_fn = py_fn,
    model_dir = path_arg(model_dir), config = config
  ), call = call))
  attr(model, "pyhooks_state") <- state
  model
}

# A model_fn's features: a named list of tensors that goes back to Python as
# the features' dict (which TensorFlow reads as their matrix).
r_features <- function(features) {
  out <- py_bridge()$features_as_dict(features)
  structure(out, class = "pyhooks_features", py = features)
}

#' @exportS3Method reticulate::r_to_py
r_to_py.pyhooks_features <- function(x, convert = FALSE) {
  attr(x, "py")
}

#' @export
print.pyhooks_features <- function(x, ...) {
  cat("<features of a model_fn: ", paste(names(x), collapse = ", "), ">\n", sep = "")
  invisible(x)
}

#' The result of a model function
#'
#' What the `model_fn` of an [estimator()] returns: the tensors and
#' operations of its `mode`.
#'
#' @param mode The `mode` the model function was called with.
#' @param predictions A tensor or a named list of tensors (first dimension:
#'   the batch); needed for `"infer"`.
#' @param loss A scalar loss tensor; needed for `"train"` and `"eval"`.
#' @param train_op The training operation, which must increment the global
#'   step; needed for `"train"`.
#' @param eval_metric_ops A named list of metrics, each as returned by the
#'   `tf$metrics$...()` functions, or `NULL`.
#' @param training_hooks,evaluation_hooks,prediction_hooks Lists of hooks
#'   added to [train()], [evaluate()] and [predict()], or `NULL`.
#' @param ... Not used; must be empty.
#' @returns An estimator specification (a Python object).
#' @family custom estimators
#' @seealso [estimator()]
#' @export
estimator_spec <- function(mode, predictions = NULL, loss = NULL, train_op = NULL,
                           eval_metric_ops = NULL, training_hooks = NULL,
                           evaluation_hooks = NULL, prediction_hooks = NULL, ...) {
  rlang::check_dots_empty()
  rlang::check_required(mode)
  call <- rlang::current_env()
  if (is.list(predictions) && !is_py_object(predictions) && is.null(names(predictions))) {
    cli::cli_abort("{.arg predictions} must be a tensor or a named list of tensors.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (!is.null(eval_metric_ops) &&
      (!is.list(eval_metric_ops) || is.null(names(eval_metric_ops)))) {
    cli::cli_abort("{.arg eval_metric_ops} must be a named list of metrics (from {.code tf$metrics}).",
                   class = "pyhooks_error_argument", call = call)
  }
  py_construct("estimator_spec", list(
    mode = mode, predictions = predictions, loss = loss, train_op = train_op,
    eval_metric_ops = if (!is.null(eval_metric_ops)) {
      lapply(eval_metric_ops, function(m) reticulate::tuple(m[[1L]], m[[2L]]))
    },
    training_hooks = as_hook_list(training_hooks, "training_hooks", call),
    evaluation_hooks = as_hook_list(evaluation_hooks, "evaluation_hooks", call),
    prediction_hooks = as_hook_list(prediction_hooks, "prediction_hooks", call)
  ), call = call)
}

#' The modes of a model function
#'
#' @returns A list: `TRAIN` (`"train"`), `EVAL` (`"eval"`) and `PREDICT`
#'   (`"infer"`), the values of the `mode` argument of a `model_fn`.
#' @family custom estimators
#' @seealso [estimator()]
#' @export
#' @examples
#' mode_keys()$PREDICT
mode_keys <- function() {
  list(TRAIN = "train", EVAL = "eval", PREDICT = "infer")
}

#' The input of feature columns in a model function
#'
#' @param features The `features` argument of a `model_fn`.
#' @param feature_columns Dense feature columns (numeric, bucketized,
#'   indicator, embedding), e.g. from [feature_columns()].
#' @returns A `float32` tensor, one row per example: the columns' values side
#'   by side.
#' @family custom estimators
#' @seealso [estimator()], [feature_columns()]
#' @export
input_layer <- function(features, feature_columns) {
  rlang::check_required(features)
  rlang::check_required(feature_columns)
  if (!inherits(features, "pyhooks_features")) {
    cli::cli_abort("{.arg features} must be the {.arg features} argument of a model function.",
                   class = "pyhooks_error_argument")
  }
  py_construct("input_layer", list(
    features = attr(features, "py"), feature_columns = as_py_list(feature_columns)
  ))
}

#' Run configuration of an estimator
#'
#' @param model_dir Directory for checkpoints and summaries, or `NULL`.
#' @param tf_random_seed The graph-level random seed, or `NULL`.
#' @param session_config A Python `ConfigProto`, or `NULL`.
#' @param save_summary_steps Write the training loss (and a model function's
#'   own summaries) to TensorBoard event files in the model directory every
#'   this many steps (`0` for none).
#' @param log_step_count_steps Write `global_step/sec` (steps per second
#'   since the last measurement) to the same event files every this many
#'   steps (`0` for none).
#' @param keep_checkpoint_max Number of checkpoints kept.
#' @param save_checkpoints_steps Save a checkpoint every this many steps
#'   while training, or `NULL`.
#' @param save_checkpoints_secs Save a checkpoint every this many seconds
#'   while training, or `NULL` (at most one of the two). With neither, every
#'   600 seconds (tf.estimator's default). Besides these, [train()] saves when
#'   it ends however it ends (its steps, the input exhausted, a hook's stop, an
#'   error, an interrupt), and the next [train()] resumes from there.
#' @param train_distribute A TensorFlow distribution strategy [train()] runs
#'   under, or `NULL`, from `tensorflow <- reticulate::import("tensorflow")`:
#'   `tensorflow$distribute$MirroredStrategy()` (several devices of this
#'   machine) or `tensorflow$distribute$MultiWorkerMirroredStrategy()` (several
#'   processes, each running the same script, their cluster in the `TF_CONFIG`
#'   environment variable). Each batch is split among
#'   the replicas; the hooks see the loss over all replicas; on workers other
#'   than the chief, files go below `model_dir/tmp_worker_<i>` and no
#'   checkpoint is written. See `vignette("distributed")`.
#' @param steps_per_execution Training steps run inside one TensorFlow call
#'   (a loop in the graph, as Keras' `steps_per_execution`): less time per step
#'   outside TensorFlow. Hooks run once per call and see its last step's
#'   values; the built-in hooks count the steps a call runs, so checkpoints,
#'   step rates and history rows come at the first call that reaches their
#'   step, and `train(steps =)` stops at its exact step (the last call runs
#'   fewer). A [hook_stop_at_step()] of your own stops after the call that
#'   reaches its step. Not with `train_distribute`.
#' @param agree_every_n_steps With `train_distribute` over several workers,
#'   how often they agree on stopping: a stop requested on one worker (a
#'   hook's, e.g. [hook_stop_at_step()] or a `request_stop()` of your own)
#'   ends every worker's [train()] after the same step, at the next agreement.
#'   A whole number, or `"auto"` (the default): the steps between two
#'   agreements chosen from measured times, for about 2% of a step spent
#'   agreeing, at most 1 second apart, and [train()]'s own last step agreed at
#'   that step. `NULL`: no agreement, each worker stops on its own (only when
#'   every stop comes at the same step on every worker, as `train(steps =)`'s
#'   own; a stop on one worker alone leaves the others waiting for it).
#' @param keep_checkpoint_every_n_hours Also keep one checkpoint every this
#'   many hours of training, beyond `keep_checkpoint_max` (the default, 10000,
#'   keeps none).
#' @returns A run configuration, for the `config` argument of [estimator()].
#' @family custom estimators
#' @export
run_config <- function(model_dir = NULL, tf_random_seed = NULL, session_config = NULL,
                       save_summary_steps = 100L, log_step_count_steps = 100L,
                       keep_checkpoint_max = 5L, save_checkpoints_steps = NULL,
                       save_checkpoints_secs = NULL,
                       train_distribute = NULL, steps_per_execution = 1L,
                       agree_every_n_steps = "auto", keep_checkpoint_every_n_hours = 10000) {
  py_construct("run_config", list(
    model_dir = path_arg(model_dir), tf_random_seed = as_py_int(tf_random_seed),
    session_config = session_config, save_summary_steps = as_py_int(save_summary_steps),
    log_step_count_steps = as_py_int(log_step_count_steps),
    keep_checkpoint_max = as_py_int(keep_checkpoint_max),
    save_checkpoints_steps = as_py_int(save_checkpoints_steps),
    save_checkpoints_secs = save_checkpoints_secs,
    train_distribute = train_distribute,
    steps_per_execution = as_py_int(steps_per_execution),
    agree_every_n_steps = if (is.character(agree_every_n_steps)) agree_every_n_steps else
      as_py_int(agree_every_n_steps),
    keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
  ))
}

#' TensorFlow 1.x's API for model functions
#'
#' `tf` gives R code TensorFlow's `tf.compat.v1` API, as tfestimators' users
#' had it from the tensorflow package: `tf$losses$mean_squared_error()`,
#' `tf$train$GradientDescentOptimizer()`, `tf$metrics$accuracy()`,
#' `tf$nn$relu`, `tf$reshape()`... `tf$layers` holds pyhooks' versions of
#' TensorFlow 1.x's layers (`dense()`, `dropout()`, `flatten()`, `conv2d()`,
#' `max_pooling2d()`, `average_pooling2d()`), with TensorFlow 1.x's
#' arguments. `tf$contrib` holds what tfestimators' model functions took
#' from TensorFlow 1.x's `tf.contrib`: `tf$contrib$layers$fully_connected()`,
#' `stack()`, `dropout()`, `optimize_loss()`,
#' `tf$contrib$framework$get_global_step()`, and what its articles read MNIST
#' with: `tf$contrib$learn$datasets$load_dataset("mnist")` and
#' `tf$contrib$learn$datasets$mnist$read_data_sets(train_dir)` (TensorFlow
#' 1.x's `Datasets` of `train`, `validation`, `test`, each with `images`,
#' `labels`, `next_batch()`; the four MNIST files are downloaded into
#' `train_dir`, `"MNIST_data"` of the working directory for `load_dataset()`,
#' unless they are there already). Other names are an error naming
#' the replacement. `tf$feature_column` is TensorFlow's, whose
#' `input_layer()` also takes pyhooks' columns (as [input_layer()] does), as
#' tfestimators' `input_layer()` passed its columns on to it.
#' `tf$estimator` holds tf.estimator's names
#' (`tf$estimator$inputs$numpy_input_fn()`, `tf$estimator$ModeKeys`...);
#' `tf$python` TensorFlow's `tensorflow.python` package, as TensorFlow 1.x
#' exposed it. Python and TensorFlow load on first use.
#'
#' @format A Python module (a reticulate object).
#' @family custom estimators
#' @seealso [estimator()]
#' @export
tf <- NULL
