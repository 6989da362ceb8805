# Built-in hooks: thin wrappers of pyhooks' Python hook classes. Validation
# lives in Python; R only turns whole doubles into integers.

#' Save checkpoints every N steps or seconds
#'
#' Saves the model variables to `checkpoint_dir` when the session is created,
#' every `save_steps` steps or `save_secs` seconds, and at the end.
#'
#' @param checkpoint_dir Directory where checkpoints are written.
#' @param save_secs,save_steps Save every this many seconds, or every this
#'   many steps (exactly one of the two).
#' @param saver A `tf$compat$v1$train$Saver`, or `NULL` for the default one.
#' @param checkpoint_basename File name prefix of the checkpoints.
#' @param scaffold A `Scaffold` to get the saver from, or `NULL`.
#' @param listeners A list of Python `CheckpointSaverListener` objects.
#' @param save_graph_def Write the graph (`graph.pbtxt`) and meta graph too.
#' @param save_on_error Also save a checkpoint when training fails.
#' @returns A hook (a Python `CheckpointSaverHook`) for the `hooks` argument
#'   of [train()].
#' @family hooks
#' @seealso [train()], [hook_summary_saver()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_checkpoint_saver(tempfile("ckpt"), save_steps = 10)
hook_checkpoint_saver <- function(checkpoint_dir, save_secs = NULL, save_steps = NULL,
                                  saver = NULL, checkpoint_basename = "model.ckpt",
                                  scaffold = NULL, listeners = NULL, save_graph_def = TRUE,
                                  save_on_error = TRUE) {
  rlang::check_required(checkpoint_dir)
  py_construct("CheckpointSaverHook", list(
    checkpoint_dir = path_arg(checkpoint_dir),
    save_secs = save_secs,
    save_steps = as_py_int(save_steps),
    saver = saver,
    checkpoint_basename = checkpoint_basename,
    scaffold = scaffold,
    listeners = as_py_list(listeners),
    save_graph_def = save_graph_def,
    save_on_error = save_on_error
  ))
}

#' Delay training until the global step reaches a value
#'
#' Useful for workers that should start only after the chief has trained for
#' a while. Gives up after `timeout_secs` seconds (instead of waiting
#' forever).
#'
#' @param wait_until_step The global step to wait for.
#' @param timeout_secs Seconds to wait at most, or `NULL` for no limit.
#' @returns A hook (a Python `GlobalStepWaiterHook`) for [train()].
#' @family hooks
#' @seealso [train()], [hook_stop_at_step()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_global_step_waiter(wait_until_step = 0, timeout_secs = 60)
hook_global_step_waiter <- function(wait_until_step, timeout_secs = NULL) {
  rlang::check_required(wait_until_step)
  py_construct("GlobalStepWaiterHook", list(
    wait_until_step = as_py_int(wait_until_step),
    timeout_secs = timeout_secs
  ))
}

#' Save the history of the loss during training
#'
#' Records the mean and total loss of the batch every `every_n_step` steps
#' (and at the last step). [train()] returns the recorded history; give this
#' hook to choose how often it records, or to write it to a CSV file as it
#' goes.
#'
#' @param every_n_step Record every this many steps.
#' @param path A CSV file to which each row is appended (and flushed) as it
#'   is recorded, or `NULL`. The file has one more column, `run`: 1 for the
#'   rows of the first run written to it, 2 for the next, and so on, so that
#'   the rows of a run resumed from a checkpoint (which repeats steps) are
#'   told apart.
#' @param metrics A named list of extra tensors (or tensor names) to record,
#'   one column each.
#' @param loss The per-example loss tensor, or `NULL` for the first tensor of
#'   the graph collection `"losses"`.
#' @returns A hook (a Python `HistorySaverHook`) for [train()].
#' @family hooks
#' @seealso [train()], which returns the history, and
#'   [print.pyhooks_history()].
#' @export
#' @examplesIf is_pyhooks_available()
#' input <- input_fn(mtcars, response = "mpg", features = "drat", batch_size = 8L)
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' history <- train(model, input, steps = 4,
#'                  hooks = list(hook_history_saver(every_n_step = 2)))
#' history
hook_history_saver <- function(every_n_step = 10, path = NULL, metrics = NULL, loss = NULL) {
  py_construct("HistorySaverHook", list(
    every_n_step = as_py_int(every_n_step),
    path = path_arg(path),
    metrics = as_py_list(metrics),
    loss = loss
  ))
}

#' Print tensors every N steps or seconds
#'
#' Logs the values of the given tensors through Python's `pyhooks` logger;
#' the package forwards those records to the R console as messages.
#'
#' @param tensors A character vector or list of tensor names, or a named
#'   list (tag = tensor or name).
#' @param every_n_iter,every_n_secs Log every this many steps, or every this
#'   many seconds (one of the two, unless `at_end`).
#' @param at_end Log the last values at the end of training.
#' @param formatter A function taking the named list of values (as R
#'   values; and the seconds elapsed since the last line, if it takes two
#'   arguments) and returning the string to log, or `NULL` for
#'   `"tag = value, ..."`.
#' @returns A hook (a Python `LoggingTensorHook`) for [train()].
#' @family hooks
#' @seealso [train()], [hook_step_counter()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_logging_tensor(list(step = "global_step"), every_n_iter = 10)
hook_logging_tensor <- function(tensors, every_n_iter = NULL, every_n_secs = NULL,
                                at_end = FALSE, formatter = NULL) {
  rlang::check_required(tensors)
  state <- new_callback_state() # an error of an R formatter, for train() to report
  hook <- py_construct("LoggingTensorHook", list(
    tensors = as_py_list(tensors),
    every_n_iter = as_py_int(every_n_iter),
    every_n_secs = every_n_secs,
    at_end = at_end,
    formatter = r_formatter(formatter, state)
  ))
  if (is.function(formatter)) attr(hook, "pyhooks_state") <- state
  hook
}

#' Stop or fail when the loss becomes NaN
#'
#' @param loss_tensor The loss tensor to watch.
#' @param fail_on_nan_loss `TRUE` to stop training with an error, `FALSE` to
#'   log a warning and request a stop (the warning is also an R warning of
#'   class `pyhooks_python_NanLossWarning`).
#' @param fail_on_inf Treat an infinite loss as NaN.
#' @returns A hook (a Python `NanTensorHook`) for [train()]. (Training with
#'   [train()] always watches the loss.)
#' @family hooks
#' @seealso [train()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_nan_tensor("per_example_loss:0", fail_on_nan_loss = FALSE)
hook_nan_tensor <- function(loss_tensor, fail_on_nan_loss = TRUE, fail_on_inf = TRUE) {
  rlang::check_required(loss_tensor)
  py_construct("NanTensorHook", list(
    loss_tensor = loss_tensor, fail_on_nan_loss = fail_on_nan_loss, fail_on_inf = fail_on_inf
  ))
}

#' Show a progress bar during training
#'
#' Shows `Training 2/2 [=====...] - ETA: 0s - loss: 392.01`, written as R
#' messages (as the progress and cli packages write their bars): to standard
#' error, shown by knitr and testthat, and kept out of [capture.output()],
#' which holds only what your own code prints. The loss is the step's mean loss (the mean of the per-example loss, as
#' Keras shows it); the ETA comes from the steps of the last ~30 seconds, and
#' shows `?` until a second line is due (the first step also pays for building
#' the model). On a dynamic console (a terminal, RStudio) the line is redrawn in place;
#' under `Rscript` to a file, knitr, testthat or CI whole lines are written
#' (at each 10% of the steps). Set `options(pyhooks.progress = "plain")` or
#' `"dynamic"` to choose.
#'
#' @param label The text before the bar.
#' @param total The number of steps expected, or `NULL` ([train()] sets it
#'   from `steps`).
#' @param loss The loss tensor to show, or `NULL` for the training loss.
#' @param writer A function taking a string, or `NULL` to write R messages
#'   (standard error).
#' @param mode `"dynamic"`, `"plain"` or `NULL` (decided as described above).
#' @param min_interval Least seconds between two redraws.
#' @returns A hook (a Python `ProgressBarHook`) for [train()].
#' @family hooks
#' @seealso [train()]
#' @export
#' @examplesIf is_pyhooks_available()
#' input <- input_fn(mtcars, response = "mpg", features = "drat", batch_size = 8L)
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' history <- train(model, input, steps = 2, hooks = list(hook_progress_bar()))
#' hook_progress_bar(label = "Fitting", min_interval = 1)
hook_progress_bar <- function(label = "Training", total = NULL, loss = NULL, writer = NULL,
                              mode = NULL, min_interval = 0.1) {
  py_construct("ProgressBarHook", list(
    label = label,
    total = as_py_int(total),
    loss = loss,
    writer = writer %||% progress_writer,
    mode = mode %||% progress_mode(),
    min_interval = min_interval
  ))
}

#' Count steps per second
#'
#' Logs (and, with `output_dir`, writes the summary `global_step/sec`) the
#' number of training steps per second.
#'
#' @param every_n_steps,every_n_secs Measure every this many steps, or
#'   seconds (exactly one of the two).
#' @param output_dir Directory for the summary, or `NULL`.
#' @param summary_writer A summary writer, or `NULL`.
#' @returns A hook (a Python `StepCounterHook`) for [train()].
#' @family hooks
#' @seealso [train()], [hook_logging_tensor()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_step_counter(every_n_steps = 10)
hook_step_counter <- function(every_n_steps = 100, every_n_secs = NULL, output_dir = NULL,
                              summary_writer = NULL) {
  py_construct("StepCounterHook", list(
    every_n_steps = as_py_int(every_n_steps),
    every_n_secs = every_n_secs,
    output_dir = path_arg(output_dir),
    summary_writer = summary_writer
  ))
}

#' Stop training at a given step
#'
#' @param num_steps Number of steps to run from the step training starts at.
#' @param last_step The global step to stop at (give one of the two).
#' @returns A hook (a Python `StopAtStepHook`) for [train()].
#' @family hooks
#' @seealso [train()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_stop_at_step(num_steps = 5)
hook_stop_at_step <- function(num_steps = NULL, last_step = NULL) {
  py_construct("StopAtStepHook", list(
    num_steps = as_py_int(num_steps),
    last_step = as_py_int(last_step)
  ))
}

#' Save summaries every N steps or seconds
#'
#' @param save_steps,save_secs Save every this many steps, or seconds
#'   (exactly one of the two).
#' @param output_dir Directory for the event files, or `NULL` (then give
#'   `summary_writer`).
#' @param summary_writer A summary writer, or `NULL`.
#' @param scaffold A `Scaffold` to get the summary op from, or `NULL`.
#' @param summary_op The summary op (or a list of them), or `NULL`. With
#'   neither `scaffold` nor `summary_op`, the estimator's summaries are
#'   saved: the training `loss`, and the `tf$summary$...()` ops of a custom
#'   estimator's model function.
#' @returns A hook (a Python `SummarySaverHook`) for [train()].
#' @family hooks
#' @seealso [train()], [hook_checkpoint_saver()]
#' @export
#' @examples
#' \dontrun{
#' # `summary_op`: a summary tensor of the graph being trained
#' hook_summary_saver(save_steps = 10, output_dir = tempfile("summaries"),
#'                    summary_op = summary_op)
#' }
hook_summary_saver <- function(save_steps = NULL, save_secs = NULL, output_dir = NULL,
                               summary_writer = NULL, scaffold = NULL, summary_op = NULL) {
  if (is.null(scaffold) && is.null(summary_op)) { # the estimator's loss and model summaries
    py_pyhooks()
    scaffold <- reticulate::import("pyhooks.estimators.tensorboard")$GraphSummaries()
  }
  py_construct("SummarySaverHook", list(
    save_steps = as_py_int(save_steps),
    save_secs = save_secs,
    output_dir = path_arg(output_dir),
    summary_writer = summary_writer,
    scaffold = scaffold,
    summary_op = summary_op
  ))
}

#' Profile training steps
#'
#' Writes `timeline-<step>.json` (Chrome trace format) to `output_dir` every
#' `save_steps` steps or `save_secs` seconds.
#'
#' @param save_steps,save_secs Profile every this many steps, or seconds
#'   (exactly one of the two).
#' @param output_dir Directory for the timeline files.
#' @param show_dataflow Include the data flow in the timeline.
#' @param show_memory Include memory usage in the timeline.
#' @returns A hook (a Python `ProfilerHook`) for [train()].
#' @family hooks
#' @seealso [train()], [hook_step_counter()]
#' @export
#' @examplesIf is_pyhooks_available()
#' hook_profiler(save_steps = 2, output_dir = tempfile("profile"))
hook_profiler <- function(save_steps = NULL, save_secs = NULL, output_dir = "",
                          show_dataflow = TRUE, show_memory = FALSE) {
  py_construct("ProfilerHook", list(
    save_steps = as_py_int(save_steps),
    save_secs = save_secs,
    output_dir = path_arg(output_dir),
    show_dataflow = show_dataflow,
    show_memory = show_memory
  ))
}

#' Configure Google Cloud Storage access for the session
#'
#' @param credentials Credentials (a JSON string or a named list), or `NULL`.
#'   They are secrets: the hook never prints them.
#' @param block_cache The read cache: a named list with any of `block_size`,
#'   `max_bytes` (bytes) and `max_staleness` (seconds), a Python
#'   `BlockCacheParams`, or `NULL`.
#' @returns A hook (a Python `ConfigureGcsHook`) for [train()].
#' @family hooks
#' @seealso [train()]
#' @export
#' @examples
#' \dontrun{
#' hook_configure_gcs()
#' }
hook_configure_gcs <- function(credentials = NULL, block_cache = NULL) {
  if (is.list(block_cache) && !is_py_object(block_cache)) {
    known <- c("block_size", "max_bytes", "max_staleness")
    given <- names(block_cache) %||% rep("", length(block_cache))
    if (is.data.frame(block_cache) || !all(given %in% known)) {
      cli::cli_abort(
        "{.arg block_cache} must be a named list of {.or {.field {known}}}, not {.obj_type_friendly {block_cache}} named {.val {given}}.",
        class = "pyhooks_error_argument"
      )
    }
    block_cache <- py_construct("BlockCacheParams", lapply(block_cache, as_py_int))
  }
  py_construct("ConfigureGcsHook", list(credentials = credentials, block_cache = block_cache))
}

#' Evaluate tensors at the end of the session
#'
#' @param final_ops A tensor or tensor name, or a (named) list of them, to
#'   evaluate when the session ends.
#' @param final_ops_feed_dict A feed dictionary for them, or `NULL`.
#' @returns A hook (a Python `FinalOpsHook`) for [train()] or
#'   [evaluate()]; after the run its `final_ops_values` field holds the
#'   values (as Python objects).
#' @family hooks
#' @seealso [train()], [evaluate()]
#' @export
#' @examples
#' \dontrun{
#' hook <- hook_final_ops(list(loss = loss))
#' }
hook_final_ops <- function(final_ops, final_ops_feed_dict = NULL) {
  rlang::check_required(final_ops)
  py_construct("FinalOpsHook", list(final_ops = final_ops, final_ops_feed_dict = final_ops_feed_dict))
}

#' Feed values into every step
#'
#' @param feed_fn A function of no argument returning a feed dictionary (a
#'   named list of tensor name = value), called before every step.
#' @returns A hook (a Python `FeedFnHook`) for [train()].
#' @family hooks
#' @seealso [train()], [session_run_hook()]
#' @export
#' @examples
#' \dontrun{
#' hook_feed_fn(function() list("dropout:0" = 0.5))
#' }
hook_feed_fn <- function(feed_fn) {
  rlang::check_required(feed_fn)
  in_r <- is.function(feed_fn) && !is_py_object(feed_fn) # else Python checks it
  state <- new_callback_state() # an error of the R function, for train() to report
  hook <- py_construct("FeedFnHook", list(
    feed_fn = if (in_r) recording(feed_fn, state, "feed_fn") else feed_fn
  ))
  if (in_r) attr(hook, "pyhooks_state") <- state
  hook
}

#' Stop training when the evaluations say so (early stopping)
#'
#' Early stopping as `tf.estimator`'s hooks of the same names: while
#' [train_and_evaluate()] trains, the hook reads the evaluations it writes
#' to `model_dir/eval` (see [evaluate()]) every `run_every_secs` seconds or
#' every `run_every_steps` steps, and stops training once its rule holds;
#' the final checkpoint is then evaluated as usual. [train_and_evaluate()]
#' evaluates after checkpoint saves, every 600 seconds by default: give the
#' estimator `run_config(save_checkpoints_steps = )` for evaluations to read
#' while it trains.
#'
#' * `hook_stop_if_no_decrease()`: `metric_name` has not decreased (below its
#'   lowest value so far) for `max_steps_without_decrease` steps, counted
#'   from the step of the best evaluation to a later one;
#' * `hook_stop_if_no_increase()`: likewise, not increased;
#' * `hook_stop_if_lower()`: an evaluation's `metric_name` is lower than
#'   `threshold`;
#' * `hook_stop_if_higher()`: it is higher than `threshold`.
#'
#' Evaluations at steps before `min_steps` are not looked at. Under a
#' multi-worker `train_distribute` strategy (see [run_config()]) the chief
#' decides and every worker stops after the same step. The reasons for a
#' stop are logged (`INFO:pyhooks:` lines). A hook that found no evaluation
#' to read ([train()] alone, or no checkpoint saved before the end) says so
#' at the end of training in an R warning (class
#' `pyhooks_python_PyhooksWarning`).
#'
#' @param estimator The estimator being trained.
#' @param metric_name The metric to watch, a name among those [evaluate()]
#'   returns (`"loss"`, `"average_loss"`, `"accuracy"`, ...).
#' @param max_steps_without_decrease,max_steps_without_increase The most
#'   training steps allowed without an improvement.
#' @param threshold The value to go below (`hook_stop_if_lower()`) or above.
#' @param eval_dir The directory of the evaluations, or `NULL` for
#'   `model_dir/eval` (give `file.path(model_dir, "eval_<name>")` for an
#'   [eval_spec()] with a `name`).
#' @param min_steps Evaluations at global steps below this are not looked at.
#' @param run_every_secs,run_every_steps Read the evaluations every this many
#'   seconds, or steps (one of the two; giving `run_every_steps` alone reads
#'   by steps).
#' @returns A hook (a Python `EarlyStoppingHook`) for the `hooks` of
#'   [train_spec()] (or [train()]).
#' @family hooks
#' @seealso [train_and_evaluate()], [evaluate()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")),
#'                           config = run_config(save_checkpoints_steps = 10))
#' stop <- hook_stop_if_no_decrease(model, "average_loss", 100, run_every_steps = 10)
#' history <- train_and_evaluate(model,
#'   train_spec(input_fn(mtcars, mpg ~ drat, epochs = NULL), max_steps = 5000,
#'              hooks = list(stop)),
#'   eval_spec(input_fn(mtcars, mpg ~ drat), throttle_secs = 0))
#' }
hook_stop_if_no_decrease <- function(estimator, metric_name, max_steps_without_decrease,
                                     eval_dir = NULL, min_steps = 0L, run_every_secs = 60,
                                     run_every_steps = NULL) {
  rlang::check_required(max_steps_without_decrease)
  early_stopping_hook("stop_if_no_decrease_hook", estimator, metric_name,
                      list(max_steps_without_decrease = as_py_int(max_steps_without_decrease)),
                      eval_dir, min_steps, if (missing(run_every_secs)) NA else run_every_secs,
                      run_every_steps)
}

#' @rdname hook_stop_if_no_decrease
#' @export
hook_stop_if_no_increase <- function(estimator, metric_name, max_steps_without_increase,
                                     eval_dir = NULL, min_steps = 0L, run_every_secs = 60,
                                     run_every_steps = NULL) {
  rlang::check_required(max_steps_without_increase)
  early_stopping_hook("stop_if_no_increase_hook", estimator, metric_name,
                      list(max_steps_without_increase = as_py_int(max_steps_without_increase)),
                      eval_dir, min_steps, if (missing(run_every_secs)) NA else run_every_secs,
                      run_every_steps)
}

#' @rdname hook_stop_if_no_decrease
#' @export
hook_stop_if_lower <- function(estimator, metric_name, threshold, eval_dir = NULL,
                               min_steps = 0L, run_every_secs = 60, run_every_steps = NULL) {
  rlang::check_required(threshold)
  early_stopping_hook("stop_if_lower_hook", estimator, metric_name,
                      list(threshold = threshold), eval_dir, min_steps,
                      if (missing(run_every_secs)) NA else run_every_secs, run_every_steps)
}

#' @rdname hook_stop_if_no_decrease
#' @export
hook_stop_if_higher <- function(estimator, metric_name, threshold, eval_dir = NULL,
                                min_steps = 0L, run_every_secs = 60, run_every_steps = NULL) {
  rlang::check_required(threshold)
  early_stopping_hook("stop_if_higher_hook", estimator, metric_name,
                      list(threshold = threshold), eval_dir, min_steps,
                      if (missing(run_every_secs)) NA else run_every_secs, run_every_steps)
}

# `run_every_secs` is NA when the caller left it out: its default (60) unless
# `run_every_steps` was given, which then decides alone.
early_stopping_hook <- function(name, estimator, metric_name, args, eval_dir, min_steps,
                                run_every_secs, run_every_steps, call = rlang::caller_env()) {
  rlang::check_required(estimator, call = call)
  rlang::check_required(metric_name, call = call)
  if (!inherits(estimator, "pyhooks_estimator")) {
    cli::cli_abort("{.arg estimator} must be an estimator, not {.obj_type_friendly {estimator}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (identical(run_every_secs, NA)) run_every_secs <- if (is.null(run_every_steps)) 60 else NULL
  hook <- py_construct(name, c(list(estimator = estimator, metric_name = metric_name), args, list(
    eval_dir = path_arg(eval_dir),
    min_steps = as_py_int(min_steps),
    run_every_secs = run_every_secs,
    run_every_steps = as_py_int(run_every_steps)
  )), call = call)
  # printed as the R function that made it: stop_if_no_decrease_hook -> hook_stop_if_no_decrease,
  # and so named in the rule's messages (a metric the evaluations lack, no evaluation to read)
  r_name <- paste0("hook_", sub("_hook$", "", name))
  attr(hook, "pyhooks_function") <- r_name
  reticulate::py_set_attr(reticulate::py_get_attr(hook, "should_stop_fn"), "hook_name", r_name)
  hook
}

# An R formatter as the Python hook calls it, recording its first error in `state`.
r_formatter <- function(formatter, state) {
  if (!is.function(formatter)) return(formatter)
  with_elapsed <- length(formals(formatter)) >= 2L || "..." %in% names(formals(formatter))
  py_bridge()$r_formatter(recording(function(values, ...) {
    formatter(restore_arrays(values), ...)
  }, state, "formatter"), with_elapsed)
}

path_arg <- function(x) {
  if (is.character(x) && length(x) == 1L && !is.na(x) && nzchar(x)) path.expand(x) else x
}
