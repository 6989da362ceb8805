# Custom hooks written in R. A session_run_hook() is an R object (an
# environment) holding the callbacks given, the error one of them raised and
# the `context` view (run_context.R); the bridge's Python RHook calls one R
# function per method given, without arguments: the callback's arguments are
# promises that fetch the method's arguments from Python only if the callback
# uses them (reticulate converts each argument of a call at ~15 us).

callback_args <- list(
  begin = character(),
  after_create_session = c("session", "coord"),
  before_run = "context",
  after_run = c("context", "values"),
  end = "session",
  after_error = c("session", "error"),
  state_dict = character(),
  load_state_dict = "state"
)

#' Create a custom session run hook from R functions
#'
#' Each argument is an R function called by the training loop at one point of
#' its life cycle; all are optional, and Python calls only the ones given.
#'
#' * `begin()`: once, before the session is used; the graph can still be
#'   changed.
#' * `after_create_session(session, coord)`: after the session is created
#'   (again after a re-creation on recovery).
#' * `before_run(context)`: before every step. Return `session_run_args()` to
#'   ask for extra values to be computed in the same step, or `NULL`.
#' * `after_run(context, values)`: after every successful step.
#'   `values$results` has what `before_run()` asked for, as R values
#'   (`values$results$losses` for `session_run_args(losses = ...)`);
#'   `context$request_stop()` ends training after this step.
#' * `end(session)`: when training ends normally.
#' * `after_error(session, error)`: when training ends with an error or an
#'   interrupt, before it propagates.
#'
#' `context` is an R view of the step's Python `SessionRunContext`:
#' `context$session` is the raw TensorFlow session
#' (`context$session$graph$get_collection("losses")` gives the per-example
#' loss tensors of pyhooks' estimators), `context$original_args` the step's
#' own fetches, `context$request_stop()` asks training to stop; any other
#' name is read from the Python object too, which
#' `reticulate::r_to_py(context)` gives. The view keeps `context$session`,
#' its graph and a finalized graph's collections for the session (reticulate
#' would make them anew at every step, at ~0.1 ms a `$`); it is valid while
#' its callback runs. Arguments a callback does not use are never converted,
#' and a callback may take fewer arguments than listed (e.g.
#' `after_run = function() ...`).
#'
#' An error in a callback stops training: [train()] signals an R error naming
#' the callback, with the callback's error as its parent.
#'
#' **State that resumes with the model.** Give `state_dict()` (returns the
#' hook's state: a list of numbers, strings, logicals and lists, which is
#' saved as JSON) and `load_state_dict(state)` (gets it back, as a named list:
#' vectors saved come back as lists, `unlist()` them) together. [train()]
#' saves the state beside each checkpoint it writes (`hooks-<step>.json` in
#' the model directory, whatever the checkpoints' base name, e.g. a
#' [hook_checkpoint_saver()] with `checkpoint_basename`) and, when a call
#' resumes from the checkpoint of an
#' interrupted one (a killed process, an interrupt, an error), calls
#' `load_state_dict()` after every hook's `begin()`, before the first step.
#' After a call that ended normally the next one starts afresh (no
#' `load_state_dict()`). A state is matched to its hook by `state_key`, else
#' by the hook's rank among the `session_run_hook()`s that keep state
#' (`"session_run_hook()-1"`, `"-2"`, ... in the order of `hooks`); two hooks
#' of one key are an error. [hook_history_saver()], [hook_progress_bar()] and
#' [hook_logging_tensor()] keep their rows and counts so, [hook_step_counter()]
#' the rates it measured and its schedule of steps (not its clock: a rate
#' never spans two processes).
#'
#' @param begin,after_create_session,before_run,after_run,end,after_error R
#'   functions, or `NULL`.
#' @param state_dict,load_state_dict R functions of no argument and of one
#'   (`state`), given together, or `NULL`: the hook's state, saved with the
#'   model and given back when training resumes (see above).
#' @param state_key A string: the name its state is saved under, or `NULL`
#'   (its rank among the `session_run_hook()`s with state).
#' @returns A hook (of R class `pyhooks_session_run_hook`, a Python object
#'   whose methods call these functions) for the `hooks` argument of [train()].
#' @family custom hooks
#' @seealso [session_run_args()], [train()], the `hook_*()` functions for
#'   built-in hooks.
#' @export
#' @examplesIf is_pyhooks_available()
#' steps <- 0
#' counter <- session_run_hook(after_run = function(context, values) {
#'   steps <<- steps + 1
#'   if (steps >= 3) context$request_stop()
#' })
#' input <- input_fn(mtcars, response = "mpg", features = "drat", batch_size = 8L,
#'                   num_epochs = NULL)
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' history <- train(model, input, steps = 10, hooks = list(counter))
#' steps
session_run_hook <- function(begin = NULL, after_create_session = NULL, before_run = NULL,
                             after_run = NULL, end = NULL, after_error = NULL,
                             state_dict = NULL, load_state_dict = NULL, state_key = NULL) {
  given <- list(
    begin = begin, after_create_session = after_create_session, before_run = before_run,
    after_run = after_run, end = end, after_error = after_error, state_dict = state_dict,
    load_state_dict = load_state_dict
  )
  given <- given[!vapply(given, is.null, logical(1))]
  if (xor(is.null(state_dict), is.null(load_state_dict))) {
    cli::cli_abort(
      "{.arg state_dict} and {.arg load_state_dict} go together: give both or neither.",
      class = "pyhooks_error_argument"
    )
  }
  if (!is.null(state_key) && !(rlang::is_string(state_key) && !is.na(state_key) &&
                               nzchar(state_key))) {
    cli::cli_abort(
      "{.arg state_key} must be a non-empty string or {.code NULL}, not {.obj_type_friendly {state_key}}.",
      class = "pyhooks_error_argument"
    )
  }
  if (!is.null(state_key) && is.null(state_dict)) {
    cli::cli_abort(
      "{.arg state_key} names the state of {.arg state_dict}, which is not given.",
      class = "pyhooks_error_argument"
    )
  }
  for (name in names(given)) {
    if (!is.function(given[[name]])) {
      cli::cli_abort(
        "{.arg {name}} must be a function or {.code NULL}, not {.obj_type_friendly {given[[name]]}}.",
        class = "pyhooks_error_argument"
      )
    }
  }
  hook <- new_callback_state() # the first error or interrupt of a callback, and its name
  hook$context <- NULL # the view of the step's context, for the callbacks that take it
  hook$py <- NULL # the Python RHook
  hook$last <- NULL # before_run's last value, which RHook holds
  callbacks <- given
  if (any(vapply(intersect(c("before_run", "after_run"), names(given)),
                 function(name) n_args(given[[name]], name) > 0L, logical(1)))) {
    hook$context <- new_run_context() # dropped by after_create_session: one R call a session
    if (is.null(callbacks$after_create_session)) callbacks$after_create_session <- function() NULL
  }
  py <- py_bridge()$RHook(Map(function(fn, name) r_method(hook, fn, name), callbacks,
                              names(callbacks)),
                          forget = function() hook$last <- NULL, state_key = state_key)
  hook$py <- py
  hook$arg <- py$arg # R functions calling Python, made once
  hook$values <- py$values
  attr(py, "pyhooks_state") <- hook
  attr(py, "pyhooks_args") <- given
  class(py) <- c("pyhooks_session_run_hook", class(py))
  py
}

# How many of the method's arguments (callback_args) `fn` takes.
n_args <- function(fn, name) {
  formal_names <- names(formals(fn))
  wanted <- callback_args[[name]]
  if ("..." %in% formal_names) length(wanted) else min(length(formal_names), length(wanted))
}

# The R function the Python RHook calls for the method `name`: `fn` called by
# the method's name (errors say "in `after_run()`") with promises for the
# arguments it takes. Errors are recorded in `hook` (for train() to report with
# the callback's name) by a calling handler and go on to reticulate, which
# raises them in Python; no tryCatch() on the way. after_create_session first
# drops the context view (a new session).
r_method <- function(hook, fn, name) {
  frame <- new.env(parent = baseenv())
  assign(name, fn, envir = frame)
  frame$.arg <- function(i) hook$arg(i)
  frame$.context <- function() open_run_context(hook$context, hook$arg)
  frame$.values <- function() new_run_values(hook$values())
  wanted <- callback_args[[name]]
  args <- lapply(seq_len(n_args(fn, name)), function(i) {
    switch(wanted[[i]], context = quote(.context()), values = quote(.values()),
           call(".arg", i - 1L))
  })
  user_call <- as.call(c(as.name(name), args))
  record_first <- record_condition(hook, name)
  record <- function(cnd) {
    record_first(cnd)
    if (inherits(cnd, "interrupt")) reticulate::py_set_attr(hook$py, "interrupted", TRUE)
  }
  switch(name,
    before_run = function() {
      value <- withCallingHandlers(eval(user_call, frame), error = record, interrupt = record)
      if (!inherits(value, "pyhooks_session_run_args")) {
        hook$last <- NULL
        return(withCallingHandlers(check_before_run_value(value), error = record))
      }
      # identical() to the step before's: TRUE, and RHook uses what it got then (a Python
      # object handed back from R costs ~35 us, one per tensor among the fetches)
      if (identical(value, hook$last)) return(TRUE)
      hook$last <- value
      unclass(value)
    },
    state_dict = function() {
      withCallingHandlers(eval(user_call, frame), error = record, interrupt = record)
    },
    after_create_session = function() {
      if (!is.null(hook$context)) reset_run_context(hook$context)
      withCallingHandlers(eval(user_call, frame), error = record, interrupt = record)
      NULL
    },
    function() {
      withCallingHandlers(eval(user_call, frame), error = record, interrupt = record)
      NULL
    }
  )
}

check_before_run_value <- function(value) {
  if (!is.null(value) && !py_class_is(value, "SessionRunArgs")) {
    cli::cli_abort(
      "{.fn before_run} must return {.fn session_run_args} or {.code NULL}, not {.obj_type_friendly {value}}.",
      call = NULL
    )
  }
  value
}

# after_run's `values`: `results` as R values (numbers, vectors, arrays, named
# lists), `options` and `run_metadata` as Python objects.
new_run_values <- function(x) {
  x$results <- restore_arrays(x$results)
  structure(x, class = "pyhooks_run_values")
}

#' @export
print.pyhooks_run_values <- function(x, ...) {
  cat("<session run values>\n$results\n")
  utils::str(x$results, give.attr = FALSE)
  invisible(x)
}

#' Ask for values to be computed in the same step
#'
#' Returned by the `before_run` callback of a [session_run_hook()]: the
#' fetches are computed in the same `session.run()` call as the training
#' step, and handed to `after_run` as `values$results`.
#'
#' @param ... Tensors, tensor or operation names (`"global_step"` and
#'   `"global_step:0"` both give the global step), or lists of them, to fetch.
#'   A variable gives its value, and so does its handle tensor
#'   (`context$session$graph$get_tensor_by_name("global_step:0")`).
#'   Name them to get a named list in `values$results`
#'   (`session_run_args(loss = x)` gives `values$results$loss`). A name the
#'   graph has no value for is an error naming it.
#' @param feed_dict A named list (tensor name = value) of extra feeds, or
#'   `NULL`.
#' @param options A `RunOptions` protocol buffer, or `NULL`.
#' @returns An object of class `pyhooks_session_run_args` (`$fetches`,
#'   `$feed_dict`, `$options`; `reticulate::r_to_py()` makes it a Python
#'   `SessionRunArgs`).
#' @family custom hooks
#' @seealso [session_run_hook()]
#' @export
#' @examplesIf is_pyhooks_available()
#' session_run_hook(
#'   before_run = function(context) {
#'     session_run_args(losses = context$session$graph$get_collection("losses"))
#'   },
#'   after_run = function(context, values) print(mean(values$results$losses[[1]]))
#' )
session_run_args <- function(..., feed_dict = NULL, options = NULL) {
  fetches <- list(...)
  nms <- names(fetches)
  if (!length(fetches)) {
    fetches <- NULL
  } else if (!is.null(nms) && !all(nzchar(nms))) {
    cli::cli_abort(
      "The fetches in {.arg ...} must be all named or all unnamed.",
      class = "pyhooks_error_argument"
    )
  }
  check_fetches(fetches)
  if (!is.null(feed_dict)) {
    feed_dict <- as_py_list(feed_dict)
    if (!is_py_object(feed_dict) &&
      (!length(feed_dict) || is.null(names(feed_dict)) || !all(nzchar(names(feed_dict))))) {
      cli::cli_abort(
        "{.arg feed_dict} must be a named list (tensor name = value) or {.code NULL}.",
        class = "pyhooks_error_argument"
      )
    }
  }
  if (!is.null(options) && !is_py_object(options)) {
    cli::cli_abort(
      "{.arg options} must be a {.code RunOptions} (from Python) or {.code NULL}, not {.obj_type_friendly {options}}.",
      class = "pyhooks_error_argument"
    )
  }
  args <- list(fetches = fetches, feed_dict = feed_dict, options = options)
  class(args) <- "pyhooks_session_run_args"
  args
}

# Every leaf of `fetches` (nested lists) is something Python can take as a fetch: an R
# error naming the fetch, not reticulate's "Unable to convert R object" at the step.
check_fetches <- function(fetches, path = character()) {
  for (i in seq_along(fetches)) {
    fetch <- fetches[[i]]
    name <- names(fetches)[i]
    where <- c(path, if (is.null(name) || !nzchar(name)) paste0("[[", i, "]]") else name)
    if (is.list(fetch) && !is.data.frame(fetch) && !is_py_object(fetch)) {
      check_fetches(fetch, where)
    } else if (!is_py_object(fetch) &&
               !(is.atomic(fetch) && !is.null(fetch) && is.null(dim(fetch)) &&
                 (is.character(fetch) || length(fetch) == 1L))) {
      cli::cli_abort(
        c("Fetch {.val {paste(where, collapse = '$')}} must be a tensor, an operation or their name, or a list of them, not {.obj_type_friendly {fetch}}."),
        class = "pyhooks_error_argument"
      )
    }
  }
  invisible()
}

#' @export
print.pyhooks_session_run_args <- function(x, ...) {
  cat("<session run args>\n$fetches\n")
  utils::str(unclass(x)$fetches, give.attr = FALSE)
  if (!is.null(x$feed_dict)) cat("$feed_dict: ", paste(names(x$feed_dict), collapse = ", "), "\n")
  invisible(x)
}

#' @exportS3Method reticulate::r_to_py
r_to_py.pyhooks_session_run_args <- function(x, convert = FALSE) {
  args <- unclass(x)
  py_construct_unchecked("SessionRunArgs", args[!vapply(args, is.null, logical(1))])
}
