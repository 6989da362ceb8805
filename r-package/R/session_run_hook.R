# Custom hooks written in R. Each callback given becomes a Python callable of
# pyhooks.LambdaHook; callbacks not given are not passed, so Python never
# calls into R for them. A call costs one R call: the R function is called
# without arguments and fetches the hook method's arguments (context, values,
# session, ...) from Python only if the callback uses them (lazy evaluation).

callback_args <- list(
  begin = character(),
  after_create_session = c("session", "coord"),
  before_run = "context",
  after_run = c("context", "values"),
  end = "session",
  after_error = c("session", "error")
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
#' its graph and a finalized graph's collections from step to step (reticulate
#' would make them anew at every step, at ~0.1 ms a `$`); it is valid while
#' its callback runs. Arguments a callback does not use are never converted,
#' and a callback may take fewer arguments than listed (e.g.
#' `after_run = function() ...`).
#'
#' An error in a callback stops training: [train()] signals an R error naming
#' the callback, with the callback's error as its parent.
#'
#' @param begin,after_create_session,before_run,after_run,end,after_error R
#'   functions, or `NULL`.
#' @returns A hook (a Python `LambdaHook` with the R class
#'   `pyhooks_session_run_hook`) for the `hooks` argument of [train()].
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
                             after_run = NULL, end = NULL, after_error = NULL) {
  given <- list(
    begin = begin, after_create_session = after_create_session, before_run = before_run,
    after_run = after_run, end = end, after_error = after_error
  )
  given <- given[!vapply(given, is.null, logical(1))]
  for (name in names(given)) {
    if (!is.function(given[[name]])) {
      cli::cli_abort(
        "{.arg {name}} must be a function or {.code NULL}, not {.obj_type_friendly {given[[name]]}}.",
        class = "pyhooks_error_argument"
      )
    }
  }
  state <- new.env(parent = emptyenv())
  state$condition <- NULL
  state$callback <- NULL
  context <- views <- NULL
  takes_context <- function(name) !is.null(given[[name]]) && n_args(given[[name]], name) > 0L
  if (takes_context("before_run") || takes_context("after_run")) {
    context <- new_run_context() # see run_context.R
    views <- py_bridge()$RViews()
  }
  callbacks <- Map(function(fn, name) r_callback(fn, name, state, context, views),
                   given, names(given))
  for (name in c("begin", "after_create_session")) { # the views' epochs, in Python
    if (!is.null(views) && is.null(callbacks[[name]])) {
      callbacks[[name]] <- reticulate::py_get_attr(views, "new_epoch")
    }
  }
  hook <- py_construct("LambdaHook", c(callbacks, list(name = "session_run_hook()")))
  attr(hook, "pyhooks_state") <- state
  attr(hook, "pyhooks_args") <- given
  class(hook) <- c("pyhooks_session_run_hook", class(hook))
  hook
}

# How many of the method's arguments (callback_args) `fn` takes.
n_args <- function(fn, name) {
  formal_names <- names(formals(fn))
  wanted <- callback_args[[name]]
  if ("..." %in% formal_names) length(wanted) else min(length(formal_names), length(wanted))
}

# The Python callable running `fn` for the hook method `name`.
#
# Python calls `run()` without arguments (but see RViews: one that says the
# context's views are stale); `run()` calls `fn` with promises for the
# method's arguments, which fetch them from Python only if `fn` uses them
# (`context` is the hook's kept R view, see run_context.R). Errors are
# recorded (for train() to report with the callback's name) by a calling
# handler and then go on to reticulate, which raises them in Python; no
# tryCatch() on the way, which costs more than the call itself.
r_callback <- function(fn, name, state, context = NULL, views = NULL) {
  wanted <- callback_args[[name]]
  n <- n_args(fn, name)
  adapter <- NULL # the Python RCallback, and its methods, set below
  arg_method <- values_method <- NULL
  .arg <- function(i) arg_method(i)
  .values <- function() new_run_values(values_method())
  .context <- function() open_run_context(context, arg_method)
  args <- lapply(seq_len(n) - 1L, function(i) {
    if (identical(wanted[[i + 1L]], "context")) {
      quote(.context())
    } else if (identical(wanted[[i + 1L]], "values")) {
      quote(.values())
    } else {
      call(".arg", i)
    }
  })
  assign(name, fn) # so that errors say "in `after_run()`"
  user_call <- as.call(c(as.name(name), args))

  record <- function(cnd) {
    if (is.null(state$condition)) {
      state$condition <- cnd
      state$callback <- name
    }
    if (inherits(cnd, "interrupt")) reticulate::py_set_attr(adapter, "interrupted", TRUE)
  }
  run <- function() NULL
  body(run) <- if (identical(name, "before_run")) {
    bquote(withCallingHandlers(
      to_python(check_before_run_value(.(user_call))),
      error = record, interrupt = record
    ))
  } else {
    bquote({
      withCallingHandlers(.(user_call), error = record, interrupt = record)
      NULL
    })
  }
  if (name %in% c("before_run", "after_run") && n == 0L) {
    views <- NULL # no context: nothing to keep fresh
  } else if (!is.null(context) && name %in% c("before_run", "after_run")) {
    # Python passes an argument (True, unconverted) at the first call of a run
    # or a session (see RViews)
    formals(run) <- alist(stale = FALSE)
    body(run) <- bquote({
      if (!isFALSE(stale)) reset_run_context(context)
      .(body(run))
    })
  }
  adapter <- py_bridge()$RCallback(reticulate::r_to_py(run, convert = FALSE), name, views)
  arg_method <- adapter$arg # R functions converting what they return
  values_method <- adapter$values
  if (identical(name, "before_run")) {
    to_python <- kept_values(adapter, state)
  }
  adapter
}

# before_run's value on its way back to Python: a Python object costs ~50 us
# for reticulate to hand back, an integer ~2. One returned twice in a row is
# kept by the RCallback too (its keep(), in one of 4 slots) and sent as its
# slot from then on; forgotten when train() & co. return (state$forget).
kept_values <- function(adapter, state) {
  keep <- adapter$keep
  kept <- list()
  last <- NULL
  next_slot <- 1L
  state$forget <- function() {
    if (length(kept)) reticulate::py_set_attr(adapter, "kept", list())
    kept <<- list()
    last <<- NULL
    next_slot <<- 1L
  }
  function(value) {
    if (is.null(value)) return(NULL)
    for (i in seq_along(kept)) if (identical(kept[[i]], value)) return(i)
    if (!identical(value, last)) {
      last <<- value
      return(value)
    }
    slot <- next_slot
    next_slot <<- next_slot %% 4L + 1L
    keep(slot, value)
    kept[[slot]] <<- value
    slot
  }
}

check_before_run_value <- function(value) {
  if (!is.null(value) && !is_py_object(value)) {
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
#' @param ... Tensors (or lists of tensors) to fetch. Name them to get a
#'   named list in `values$results` (`session_run_args(loss = x)` gives
#'   `values$results$loss`).
#' @param feed_dict A named list (tensor name = value) of extra feeds, or
#'   `NULL`.
#' @param options A `RunOptions` protocol buffer, or `NULL`.
#' @returns A Python `SessionRunArgs`.
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
  # A before_run asks for the same fetches at every step: the same R values
  # give the same Python object (identical() compares Python objects by
  # identity, R values by value), made once instead of at every step (~200 us
  # of conversions). The last few are kept until train() & co. return.
  key <- list(fetches, feed_dict, options)
  for (made in .py$run_args) if (identical(made[[1L]], key)) return(made[[2L]])
  nms <- names(fetches)
  if (!length(fetches)) {
    fetches <- NULL
  } else if (!is.null(nms) && !all(nzchar(nms))) {
    cli::cli_abort(
      "The fetches in {.arg ...} must be all named or all unnamed.",
      class = "pyhooks_error_argument"
    )
  }
  if (!is.null(options) && !inherits(options, "python.builtin.object")) {
    cli::cli_abort(
      "{.arg options} must be a {.code RunOptions} (from Python) or {.code NULL}, not {.obj_type_friendly {options}}.",
      class = "pyhooks_error_argument"
    )
  }
  args <- py_construct_unchecked("SessionRunArgs", list(
    fetches = fetches,
    feed_dict = as_py_list(feed_dict),
    options = options
  ))
  kept <- .py$run_args
  .py$run_args <- c(list(list(key, args)), kept[seq_len(min(length(kept), 7L))])
  args
}
