#' Train, evaluate or predict with an estimator
#'
#' `train()` runs the training loop of `object` for `steps` steps (or until
#' the input is exhausted, or a hook requests a stop) with the given hooks,
#' and returns the training history invisibly. Unless `hooks` has one of
#' their kind, a [hook_progress_bar()] (writing to the R console) and a
#' [hook_history_saver()] are added; the loss is watched for NaN (by
#' the caller's [hook_nan_tensor()] if `hooks` has one, else by one that
#' fails the run).
#'
#' One `train()` at a time may write to a `model_dir`: another process (or
#' another model in this session) training into it gets an error until the
#' first one ends or dies. At its start `train()` removes the temporary
#' files of a save that a crash interrupted; a damaged or missing checkpoint
#' that `model_dir`'s `checkpoint` file names is an error naming the file,
#' never a silent restart from step 0.
#'
#' Nothing trained is lost: a checkpoint is saved every 600 seconds (as
#' [run_config()] says) and when `train()` ends, however it ends: its steps
#' done, the input exhausted, a hook's stop, an error in a hook, an interrupt
#' (Ctrl-C). The next `train()` resumes from that step. A batch whose loss is
#' not finite (`NaN`, `Inf`) updates nothing in a canned model, so what is
#' saved after it is the last good step; a model function's own training op
#' cannot be held back, so after such a loss its weights are not saved and the
#' model is what the latest checkpoint holds.
#'
#' When training fails (an error in a hook, a NaN loss) or is interrupted,
#' the condition signalled carries what was recorded up to then in its
#' `history` field (`tryCatch(train(...), error = function(e) e$history)`).
#' An error in R code that pyhooks calls (a [session_run_hook()]'s callback, a
#' custom [estimator()]'s `model_fn`, an input function of no arguments, the
#' `formatter` of [hook_logging_tensor()], the `feed_fn` of [hook_feed_fn()], a
#' column's `normalizer_fn`, an estimator's `activation_fn`) is
#' signalled as an error of class `pyhooks_callback_error` naming it (its
#' `callback` field: `"after_run"`, `"model_fn"`, `"input_fn"`, `"formatter"`,
#' `"feed_fn"`, `"normalizer_fn"`, `"activation_fn"`...), whose
#' `parent` is the R condition raised there, of its own class
#' (`rlang::cnd_inherits(e, "my_error")`); the same holds in `evaluate()`,
#' `predict()`, [train_and_evaluate()] and [export_savedmodel()];
#' an interrupt is signalled as an `interrupt` condition of class
#' `pyhooks_interrupt` with the same field before R's own interrupt.
#'
#' Why training stopped is `attr(history, "stop")` (see [pyhooks_history]):
#' `reason` (`"steps"`, `"end_of_input"`, `"hook"`, `"nan"`, `"interrupt"`,
#' `"error"`), `step`, and where they apply `hook`, `method`, `value` and
#' `message`. The conditions `train()` signals carry the same list as
#' their `stop` field (`cnd$stop$reason`, `cnd$stop$step`).
#'
#' Hooks' state resumes with the model: beside each checkpoint, `train()`
#' saves the state of the hooks that keep one (`hooks-<step>.json`: the rows
#' of [hook_history_saver()], the counts of [hook_progress_bar()] and
#' [hook_logging_tensor()], the rates and schedule of [hook_step_counter()],
#' a [session_run_hook()]'s `state_dict()`). A
#' `train()` that resumes from the checkpoint of an interrupted call (a
#' killed process, an interrupt, an error) gives it back to them, so its
#' history holds the rows of both calls in step order, no step twice (the
#' killed call's rows after its last checkpoint are dropped, as those steps
#' are run again), with `attr(history, "run")` telling the calls apart.
#' After a call that ended normally, the next starts its hooks afresh.
#'
#' @param object An estimator, e.g. from [linear_regressor()].
#' @param input_fn The input, from [input_fn()] or [numpy_input_fn()]; or,
#'   as tfestimators accepted, a function of one argument that returns one
#'   when called with the estimator
#'   (`function(features_as_named_list) numpy_input_fn(...)`). A custom
#'   [estimator()] also takes a function of no arguments that returns a
#'   TensorFlow dataset of `reticulate::tuple(features, labels)` or of
#'   features (a named list of tensors, batched), as tfestimators passed it
#'   to TensorFlow: it is called in each call's new graph, its features and
#'   labels are checked against what the model was trained on (a labels
#'   tensor is the response `"y"`, as in [numpy_input_fn()]), and a dataset
#'   that repeats forever needs `steps`.
#' @param steps Number of steps to train, or `NULL` to train until the input
#'   is exhausted.
#' @param hooks A list of hooks: the `hook_*()` functions and
#'   [session_run_hook()].
#' @param max_steps The global step to stop at (instead of `steps`), or
#'   `NULL`.
#' @param saving_listeners A list of Python `CheckpointSaverListener`
#'   objects, or `NULL`.
#' @param chief_only_hooks A list of hooks run only on the chief worker when
#'   the estimator trains on several workers (`run_config(train_distribute =)`,
#'   see `vignette("distributed")`), after `hooks`; on one process they always
#'   run.
#' @param ... Not used; must be empty.
#' @returns `train()`: the training history (a `pyhooks_history` data frame,
#'   see [pyhooks_history]), invisibly.
#' @family training
#' @seealso [hook_progress_bar()], [hook_history_saver()],
#'   [session_run_hook()], [input_fn()]
#' @export
#' @examplesIf is_pyhooks_available()
#' fcs <- feature_columns(column_numeric("drat"))
#' input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"),
#'                   batch_size = 8L)
#' history <- linear_regressor(feature_columns = fcs) %>%
#'   train(input_fn = input, steps = 4)
#' history
train <- function(object, ...) {
  UseMethod("train")
}

#' @rdname train
#' @export
train.pyhooks_estimator <- function(object, input_fn, steps = NULL, hooks = NULL,
                                    max_steps = NULL, saving_listeners = NULL,
                                    chief_only_hooks = NULL, ...) {
  rlang::check_dots_empty()
  rlang::check_required(input_fn)
  call <- rlang::current_env()
  withCallingHandlers({ # R's checks; on a worker of a cluster told to the others
    input_fn <- resolve_input_fn(input_fn, object, call)
    steps <- as_py_int(steps)
    max_steps <- as_py_int(max_steps)
    completed <- with_training_defaults(as_hook_list(hooks, call = call))
    chief_only_hooks <- as_hook_list(chief_only_hooks, "chief_only_hooks", call = call)
  }, error = function(cnd) tell_cluster("in train() before its first step (its arguments)", cnd))
  hooks <- completed$hooks
  history_hook <- completed$history_hook
  states <- callback_states(c(hooks, chief_only_hooks, list(object, input_fn)))

  result <- run_with_callbacks(
    object$train(
      input_fn = input_fn, steps = steps, hooks = hooks, max_steps = max_steps,
      saving_listeners = as_py_list(saving_listeners), chief_only_hooks = chief_only_hooks
    ),
    states = states,
    what = "Training",
    partial = function() {
      stop <- stop_of(object$last_stop)
      history <- history_of(history_hook)
      attr(history, "stop") <- stop
      list(history = history, stop = stop)
    },
    call = call
  )
  invisible(new_history(history_hook$history))
}

#' @rdname train
#' @param name Name of the evaluation (a suffix of its output directory), or
#'   `NULL`.
#' @param checkpoint_path Evaluate or predict with this checkpoint (e.g. from
#'   [latest_checkpoint()]) instead of the latest one, or `NULL`.
#' @returns `evaluate()`: a one-row data frame of the metrics, or a named
#'   list of them if `simplify` is `FALSE` (their names: [metric_keys()]):
#'   * `loss`: the mean over the evaluated batches of each batch's *summed*
#'     loss, as tf.estimator reported it (so it grows with the batch size:
#'     for a regressor, about `batch_size` times `average_loss`; the last,
#'     smaller batch counts as one batch);
#'   * `average_loss`: the mean loss per example (for a regressor, the mean
#'     squared error);
#'   * `global_step`: the step of the checkpoint evaluated;
#'   * regressors: `label/mean` and `prediction/mean`;
#'   * binary classifiers: `accuracy`, `accuracy_baseline`, `auc`,
#'     `auc_precision_recall`, `precision`, `recall`, `label/mean` and
#'     `prediction/mean`; classifiers of more classes: `accuracy`;
#'   * a custom [estimator()]: `loss` (the mean over batches of its
#'     `model_fn`'s loss) and its `eval_metric_ops`.
#' @export
evaluate <- function(object, ...) {
  UseMethod("evaluate")
}

#' @rdname train
#' @export
evaluate.pyhooks_estimator <- function(object, input_fn, steps = NULL, hooks = NULL,
                                       name = NULL, checkpoint_path = NULL, simplify = TRUE,
                                       ...) {
  rlang::check_dots_empty()
  rlang::check_required(input_fn)
  call <- rlang::current_env()
  input_fn <- resolve_input_fn(input_fn, object, call)
  check_not_na(name, "name", call)
  check_not_na(checkpoint_path, "checkpoint_path", call)
  if (!is.null(name) && !(rlang::is_string(name) && nzchar(name))) {
    cli::cli_abort("{.arg name} must be a non-empty string or {.code NULL}, not {.obj_type_friendly {name}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (!rlang::is_bool(simplify)) {
    cli::cli_abort("{.arg simplify} must be {.code TRUE} or {.code FALSE}, not {.obj_type_friendly {simplify}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  hooks <- as_hook_list(hooks, call = call)
  states <- callback_states(c(hooks, list(object, input_fn)))
  result <- run_with_callbacks(
    py_bridge()$call_to_r(reticulate::py_get_attr(object, "evaluate"), list(
      input_fn = input_fn, steps = as_py_int(steps), hooks = hooks, name = name,
      checkpoint_path = path_arg(checkpoint_path)
    )),
    states = states, what = "Evaluation", call = call
  )
  metrics <- lapply(restore_arrays(result), function(v) if (is.list(v)) unlist(v) else v)
  if (!isTRUE(simplify)) return(metrics)
  as.data.frame(metrics, optional = TRUE, stringsAsFactors = FALSE)
}

#' @importFrom stats predict
#' @export
stats::predict

#' @rdname train
#' @param predict_keys Names of the predictions to return (e.g.
#'   `"predictions"`, `"probabilities"`), or `NULL` for all.
#' @param simplify `predict()`: `TRUE` to return the predictions as R values: a vector
#'   with one value per example when there is one output (a regressor's
#'   `predictions`, or one of `predict_keys`), else a data frame with one row
#'   per example and one column per output (a vector, or a matrix for
#'   vector-valued outputs such as `probabilities`). `FALSE` for a list with
#'   one named list per example.
#'   `evaluate()`: `TRUE` for a data frame, `FALSE` for a named list.
#' @returns `predict()`: the predictions, see `simplify`, one per row of the
#'   input in its order. An input made with `shuffle = TRUE` is refused (its
#'   predictions would not follow the rows); `"auto"` does not shuffle here.
#'   A canned classifier's `probabilities` (and `logits`, when there is one
#'   per class) are matrices whose columns are named by class, in the order of
#'   the classes the model was trained on.
#' @export
predict.pyhooks_estimator <- function(object, input_fn, predict_keys = NULL, hooks = NULL,
                                      simplify = TRUE, checkpoint_path = NULL, ...) {
  rlang::check_dots_empty()
  rlang::check_required(input_fn)
  call <- rlang::current_env()
  if (!rlang::is_bool(simplify)) {
    cli::cli_abort("{.arg simplify} must be {.code TRUE} or {.code FALSE}, not {.obj_type_friendly {simplify}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  check_not_na(checkpoint_path, "checkpoint_path", call)
  input_fn <- resolve_input_fn(input_fn, object, call)
  hooks <- as_hook_list(hooks, call = call)
  states <- callback_states(c(hooks, list(object, input_fn)))
  result <- run_with_callbacks(
    py_bridge()$call_to_r(reticulate::py_get_attr(object, "predict"), list(
      input_fn = input_fn, hooks = hooks, predict_keys = as_py_list(predict_keys, named = FALSE),
      as_dict = isTRUE(simplify), checkpoint_path = path_arg(checkpoint_path)
    )),
    states = states, what = "Prediction", call = call
  )
  result <- name_class_columns(restore_arrays(result), object)
  if (!isTRUE(simplify)) return(result)
  columns <- lapply(result, function(column) {
    if (is.array(column) && length(dim(column)) <= 2L && prod(dim(column)[-1L]) == 1L) {
      return(as.vector(column)) # one value per example
    }
    if (is.array(column)) I(column) else column
  })
  if (length(columns) == 1L && !inherits(columns[[1L]], "AsIs")) return(columns[[1L]])
  as.data.frame(columns, optional = TRUE, stringsAsFactors = FALSE)
}

# A classifier's `probabilities` (and `logits`, one per class) as matrices whose columns
# are named by class, as R's predict() methods name them: the columns follow the classes
# the model was trained on, which need not be the order of a later input's factor levels.
# A logical response's classes are "FALSE" and "TRUE" here (Python's "0" and "1"), in
# `classes` too (see r_support.class_names()).
name_class_columns <- function(result, object) {
  classes <- reticulate::py_to_r(py_r_support()$class_names(object)) # NULL: not canned
  if (!length(classes)) return(result)
  python <- as.character(unlist(object$class_names()))
  if (!identical(as.character(unlist(classes)), python)) {
    rename <- function(x) if (is.null(x)) x else unlist(classes)[match(x, python)]
    if (is.null(names(result))) { # simplify = FALSE: one list per example
      result <- lapply(result, function(example) {
        example["classes"] <- list(rename(example$classes))
        example
      })
    } else {
      result["classes"] <- list(rename(result$classes))
    }
  }
  for (key in intersect(c("probabilities", "logits"), names(result))) {
    value <- result[[key]]
    if (is.matrix(value) && ncol(value) == length(classes)) {
      colnames(result[[key]]) <- as.character(unlist(classes))
    }
  }
  result
}

# The input of a call: an input from input_fn() or numpy_input_fn(), or, as
# tfestimators accepted, an R function of one argument that returns one when
# called with the estimator (`function(features_as_named_list) numpy_input_fn(...)`),
# or (a custom estimator's) an R function of no arguments returning a dataset.
resolve_input_fn <- function(input_fn, object, call = rlang::caller_env()) {
  if (is_dataset_function(input_fn)) {
    if (!py_class_is(object, "CustomEstimator")) {
      cli::cli_abort(
        c("{.arg input_fn}, a function of no arguments, is an input of custom estimators ({.fn estimator}) only.",
          "i" = "Give its data to {.fn input_fn} or {.fn numpy_input_fn}."),
        class = "pyhooks_error_argument", call = call
      )
    }
    return(dataset_input_fn(input_fn))
  }
  if (is.function(input_fn) && !is_py_object(input_fn) && length(formals(input_fn)) == 1L) {
    made <- input_fn(object)
    if (!is_py_object(made)) {
      cli::cli_abort(
        c("{.arg input_fn}, a function of one argument, must return an input made by {.fn input_fn} or {.fn numpy_input_fn} when called with the estimator, not {.obj_type_friendly {made}}.",
          "i" = "tfestimators called such functions with the estimator (its `features_as_named_list`)."),
        class = "pyhooks_error_argument", call = call
      )
    }
    return(made)
  }
  check_input_fn(input_fn, call)
  input_fn
}

# A training call's hooks (`hooks`), with a progress bar and a history saver
# added unless there is one, and that history saver (`history_hook`).
with_training_defaults <- function(hooks) {
  if (!any(vapply(hooks, py_class_is, logical(1), "ProgressBarHook"))) {
    hooks <- c(hooks, list(hook_progress_bar()))
  }
  history_hook <- Find(function(h) py_class_is(h, "HistorySaverHook"), hooks)
  if (is.null(history_hook)) {
    history_hook <- hook_history_saver()
    hooks <- c(hooks, list(history_hook))
  }
  list(hooks = hooks, history_hook = history_hook)
}

# hooks: NULL, one hook, or a list of hooks. R values that are not Python
# objects are rejected here (with R's 1-based position); Python checks the rest.
as_hook_list <- function(hooks, arg = "hooks", call = rlang::caller_env()) {
  if (is.null(hooks)) return(list())
  if (is_py_object(hooks)) return(list(hooks))
  if (!is.list(hooks)) {
    cli::cli_abort(
      "{.arg {arg}} must be a list of hooks (from the {.code hook_*()} functions or {.fn session_run_hook}), not {.obj_type_friendly {hooks}}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  for (i in seq_along(hooks)) {
    if (!is_py_object(hooks[[i]])) {
      cli::cli_abort(
        c(
          "{.arg {arg}[[{i}]]} must be a hook, not {.obj_type_friendly {hooks[[i]]}}.",
          "i" = "Create hooks with the {.code hook_*()} functions or {.fn session_run_hook}."
        ),
        class = "pyhooks_error_argument", call = call
      )
    }
  }
  unname(hooks)
}

# The R functions pyhooks' Python calls (a session_run_hook()'s methods, a custom
# estimator's `model_fn`, an input function of no arguments, hook_logging_tensor()'s
# `formatter`, hook_feed_fn()'s `feed_fn`) record their first error or interrupt in a state:
# `condition`, and `callback`, the function's name ("after_run", "model_fn", "formatter"...).
# A training, evaluation, prediction or export call reports it as an R error
# (run_with_callbacks()).
# A session_run_hook()'s state is the hook's environment.
new_callback_state <- function() {
  state <- new.env(parent = emptyenv())
  state$condition <- NULL
  state$callback <- NULL
  state
}

# A calling handler recording `cnd` in `state` unless something was recorded already.
record_condition <- function(state, callback) {
  function(cnd) {
    if (is.null(state$condition)) {
      state$condition <- cnd
      state$callback <- callback
    }
  }
}

# `fn`, recording its first error or interrupt in `state` as `callback`'s.
recording <- function(fn, state, callback) {
  record <- record_condition(state, callback)
  function(...) withCallingHandlers(fn(...), error = record, interrupt = record)
}

# The states of the R functions among `objects` (hooks, an estimator, inputs), cleared for
# a new call.
callback_states <- function(objects) {
  states <- Filter(Negate(is.null), lapply(objects, attr, "pyhooks_state"))
  for (state in states) {
    state$condition <- NULL
    state$callback <- NULL
  }
  states
}

# What failed, for the message: "`after_run` of a session_run_hook()", ...
callback_words <- function(state) {
  switch(state$callback,
    model_fn = cli::format_inline("the model function ({.arg model_fn}, mode {.val {state$mode}})"),
    input_fn = cli::format_inline("the input function ({.arg input_fn})"),
    formatter = cli::format_inline("the {.arg formatter} of {.fn hook_logging_tensor}"),
    feed_fn = cli::format_inline("the {.arg feed_fn} of {.fn hook_feed_fn}"),
    normalizer_fn = ,
    activation_fn = ,
    dnn_activation_fn = cli::format_inline("the {.arg {state$callback}} of {.code {state$of}}"),
    cli::format_inline("{.code {state$callback}} of a session_run_hook()")
  )
}

# Evaluates `expr` (a training, evaluation, prediction or export call into Python) and
# turns its failure into an R condition: an error in an R function it called (`states`:
# callback_states()) names that function and keeps the R error as parent; an interrupt
# stays an interrupt; any other Python error keeps its message. `partial()` gives fields
# (e.g. the history so far) added to the condition. pyhooks' Python warnings raised
# meanwhile become R warnings (first, so a failure loses none of them).
run_with_callbacks <- function(expr, states, what, partial = function() list(), call) {
  # R functions that TensorFlow calls with tensors (tensor_function()) record in this one:
  # they reach Python inside columns and estimators, and find it through dynGet()
  pyhooks_tensor_function_state <- new_callback_state()
  states <- c(list(pyhooks_tensor_function_state), states) # first: it is the innermost
  failure <- NULL
  capture <- py_bridge()$WarningCapture()$start()
  result <- tryCatch(expr, error = function(cnd) {
    failure <<- cnd
    NULL
  }, interrupt = function(cnd) {
    failure <<- cnd
    NULL
  })
  warn_from_python(capture$stop(), call)
  if (is.null(failure)) return(result)

  fields <- partial()
  states <- Filter(function(s) !is.null(s$condition), states)
  # the error that stopped training, not one raised while cleaning up after it
  failed <- Find(function(s) !identical(s$callback, "after_error"), states)
  cleanup <- Filter(function(s) identical(s$callback, "after_error"), states)
  py_info <- if (!inherits(failure, "interrupt")) python_error_info(failure)
  interrupted <- inherits(failure, "interrupt") ||
    identical(py_info$type, "KeyboardInterrupt") ||
    any(vapply(states, function(s) inherits(s$condition, "interrupt"), logical(1)))
  if (interrupted) {
    signal_interrupt(what, fields)
  }
  # an after_error callback that failed while cleaning up: said, never in place of the error
  # (on a Python error the Python notes say it)
  also <- vapply(cleanup, function(s) cli_escape(paste0(
    "`after_error` of a session_run_hook() also failed: ", conditionMessage(s$condition))),
    character(1))
  also <- stats::setNames(also, rep("!", length(also)))
  if (!is.null(failed) && inherits(failed$condition, "pyhooks_error_argument")) {
    cnd <- failed$condition # pyhooks' check of what an R function returned
    own <- setdiff(class(cnd), c("rlang_error", "error", "condition"))
    rlang::abort(conditionMessage(cnd), class = own, call = call)
  }
  if (!is.null(failed)) {
    callback <- failed$callback
    words <- callback_words(failed)
    rlang::exec(
      cli::cli_abort,
      c("{what} stopped by an error in {words}.", also),
      parent = failed$condition,
      class = "pyhooks_callback_error",
      callback = callback,
      call = call,
      !!!fields
    )
  }
  rlang::exec(abort_from_python, failure, call = call, !!!fields)  # its notes say `also`
}

# pyhooks' Python warnings of a call (e.g. NanLossWarning), as R warnings of
# classes `pyhooks_python_<Category>` and `pyhooks_python_warning`.
warn_from_python <- function(recorded, call) {
  for (warning in recorded) {
    category <- warning[[1L]]
    rlang::warn(warning[[2L]], class = c(paste0("pyhooks_python_", category),
                                         "pyhooks_python_warning"), call = call)
  }
}

signal_interrupt <- function(what, fields) {
  cnd <- structure(
    c(list(message = paste0(what, " interrupted."), call = NULL), fields),
    class = c("pyhooks_interrupt", "interrupt", "condition")
  )
  signalCondition(cnd)
  rlang::interrupt()
}

