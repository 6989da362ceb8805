# The `context` of a session_run_hook()'s before_run and after_run: an R view
# of the step's Python SessionRunContext, kept from step to step.
#
# reticulate makes a new R object at every `$` of a Python object (100-150 us
# each here), so SPEC's `context$session$graph$get_collection("losses")` cost
# ~650 us at every step, four times the step itself. The view keeps
# `context$session`, and through it the graph and the collections of a
# finalized graph (which cannot change), for as long as the session lasts:
# the hook's after_create_session drops them (reset_run_context()). Any other
# name is read from the step's Python context, fetched only if asked for.

new_run_context <- function() {
  context <- new.env(parent = emptyenv())
  context$.arg <- NULL # the running callback's `arg` method (Python): its argument 0
  context$.py <- NULL # the step's Python SessionRunContext, once read
  context$.session <- NULL # the view of `context$session`
  class(context) <- "pyhooks_run_context"
  context
}

# Called (lazily) for the `context` argument of each call.
open_run_context <- function(context, arg) {
  assign(".arg", arg, envir = context)
  assign(".py", NULL, envir = context)
  context
}

reset_run_context <- function(context) {
  assign(".session", NULL, envir = context)
  NULL
}

run_context_py <- function(context) {
  py <- .subset2(context, ".py")
  if (is.null(py)) {
    py <- .subset2(context, ".arg")(0L)
    assign(".py", py, envir = context)
  }
  py
}

# `x$name` as reticulate gives it.
py_dollar <- function(x, name) eval(call("$", x, name))

# A Python object reticulate made, with an R class in front whose `$` keeps
# what it reads in the "pyhooks_views" environment.
new_view <- function(x, class) {
  if (!is_py_object(x)) return(x)
  attr(x, "pyhooks_views") <- new.env(parent = emptyenv())
  class(x) <- c(class, class(x))
  x
}

#' @export
`$.pyhooks_run_context` <- function(x, name) {
  if (!identical(name, "session")) return(py_dollar(run_context_py(x), name))
  session <- .subset2(x, ".session")
  if (is.null(session)) {
    session <- new_view(py_dollar(run_context_py(x), "session"), "pyhooks_session")
    assign(".session", session, envir = x)
  }
  session
}

#' @export
`[[.pyhooks_run_context` <- function(x, i, ...) {
  `$.pyhooks_run_context`(x, i)
}

#' @export
`$<-.pyhooks_run_context` <- function(x, name, value) {
  reticulate::py_set_attr(run_context_py(x), name, value)
  x
}

#' @export
print.pyhooks_run_context <- function(x, ...) {
  cat("<session run context> (an R view of:)\n")
  print(run_context_py(x))
  invisible(x)
}

#' @exportS3Method reticulate::r_to_py
r_to_py.pyhooks_run_context <- function(x, convert = FALSE) {
  run_context_py(x)
}

#' @export
`$.pyhooks_session` <- function(x, name) {
  if (!identical(name, "graph")) return(NextMethod())
  views <- attr(x, "pyhooks_views")
  if (is.null(views$graph)) views$graph <- new_view(NextMethod(), "pyhooks_graph")
  views$graph
}

#' @export
`$.pyhooks_graph` <- function(x, name) {
  if (!identical(name, "get_collection")) return(NextMethod())
  views <- attr(x, "pyhooks_views")
  if (is.null(views$get_collection)) {
    method <- NextMethod()
    views$get_collection <- if (isTRUE(x$finalized)) kept_collections(method) else method
  }
  views$get_collection
}

# get_collection() of a finalized graph, each collection converted once.
kept_collections <- function(get_collection) {
  kept <- new.env(parent = emptyenv())
  function(name, scope = NULL) {
    if (!is.null(scope) || !is.character(name) || length(name) != 1L || is.na(name) ||
      !nzchar(name)) {
      return(get_collection(name, scope))
    }
    value <- kept[[name]]
    if (is.null(value)) {
      value <- get_collection(name)
      assign(name, value, envir = kept)
    }
    value
  }
}
