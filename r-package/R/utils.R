#' Pipe operator
#'
#' See \code{magrittr::\link[magrittr:pipe]{\%>\%}} for details.
#'
#' @name %>%
#' @rdname pipe
#' @keywords internal
#' @export
#' @importFrom magrittr %>%
#' @usage lhs \%>\% rhs
#' @param lhs A value or the magrittr placeholder.
#' @param rhs A function call using the magrittr semantics.
#' @return The result of calling `rhs(lhs)`.
NULL

# Whole doubles become integers where Python wants an integer (`2` -> `2L`);
# anything else is left for Python to validate, except what reticulate would
# turn into another value (`NA`, `TRUE` and `FALSE` become Python booleans,
# `NA` and `NaN` numbers NaN) and a fractional number: R errors naming the
# argument.
as_py_int <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (is.function(x) || is_bare_env(x) || is.data.frame(x) || inherits(x, "connection")) {
    cli::cli_abort("{.arg {arg}} must be a whole number, not {.obj_type_friendly {x}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (!length(x) || !(is.logical(x) || is.numeric(x))) return(x)
  bad <- if (is.logical(x)) rep(TRUE, length(x)) else is.na(x) | (is.finite(x) & x != trunc(x))
  if (any(bad)) {
    cli::cli_abort(
      "{.arg {arg}} must be a whole number, not {format(x[bad][[1L]], digits = 15)}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  if (!is.double(x)) return(x)
  if (!all(is.finite(x)) || any(abs(x) > .Machine$integer.max)) return(x)
  storage.mode(x) <- "integer"
  x
}

# An R error for an `input_fn` that is not a Python object (reticulate would
# try to convert it: a data frame needs pandas, and fails in C++ without it).
check_input_fn <- function(input_fn, call = rlang::caller_env()) {
  if (is_py_object(input_fn)) return(invisible())
  cli::cli_abort(
    c(
      "{.arg input_fn} must be made by {.fn input_fn}, not {.obj_type_friendly {input_fn}}.",
      "i" = if (is.data.frame(input_fn)) {
        "Wrap the data: {.code input_fn(data, features = ..., response = ...)}."
      } else if (is.function(input_fn)) {
        "A function of no arguments returning a TensorFlow dataset is the input of a custom {.fn estimator}; for other estimators give its data to {.fn input_fn} or {.fn numpy_input_fn}."
      }
    ),
    class = "pyhooks_error_argument", call = call
  )
}

# Whether `x` is an R input function of no arguments (see dataset_input_fn()).
is_dataset_function <- function(x) {
  is.function(x) && !is_py_object(x) && length(formals(x)) == 0L
}

# A spec's input: one made by input_fn(), or a function of no arguments returning a
# dataset (a custom estimator's; train_and_evaluate() refuses it for others).
spec_input_fn <- function(input_fn, call = rlang::caller_env()) {
  if (is_dataset_function(input_fn)) return(dataset_input_fn(input_fn))
  check_input_fn(input_fn, call)
  input_fn
}

# An input function of no arguments, as tfestimators passed it to TensorFlow: a
# custom estimator calls it (through Python) in each call's graph. It must return a
# TensorFlow dataset (`tf$data$Dataset`) of `tuple(features, labels)` or of features.
dataset_input_fn <- function(input_fn) {
  # the first error or interrupt of the function, for train() and the others to report
  state <- new_callback_state()
  wrapper <- recording(function() {
    dataset <- input_fn()
    if (!inherits(dataset, "tensorflow.python.data.ops.dataset_ops.DatasetV2")) {
      cli::cli_abort(
        c("{.arg input_fn}, a function of no arguments, must return a TensorFlow dataset ({.code tf$data$Dataset}), not {.obj_type_friendly {dataset}}.",
          "i" = "Tensors (tfestimators' custom input functions) are not taken: give their data to {.fn input_fn} or {.fn numpy_input_fn}."),
        class = "pyhooks_error_argument", call = NULL
      )
    }
    dataset
  }, state, "input_fn")
  py_pyhooks() # pyhooks' Python, before reticulate converts the function
  input <- reticulate::r_to_py(wrapper, convert = FALSE)
  attr(input, "pyhooks_state") <- state
  input
}

# A vector for a Python list argument: always a list, even of length one.
# `named = FALSE` for lists of values: names (e.g. the "20%" of quantile())
# would make a Python dict.
as_py_list <- function(x, int = FALSE, named = TRUE, arg = rlang::caller_arg(x),
                       call = rlang::caller_env()) {
  force(arg)
  if (is.null(x) || inherits(x, "python.builtin.object")) return(x)
  if (is.function(x) || is.data.frame(x)) { # a function's formals and body; a data frame's
    # columns (or, through reticulate, a pandas DataFrame): neither is a list of values
    cli::cli_abort("{.arg {arg}} must be a vector or a list, not {.obj_type_friendly {x}}.",
                   class = "pyhooks_error_argument", call = call)
  }
  if (int) x <- as_py_int(x, arg = arg, call = call)
  check_not_na(x, arg, call)
  if (is.factor(x)) x <- as.character(x)
  if (!named) x <- unname(x)
  if (is.list(x)) return(x)
  out <- as.list(x)
  names(out) <- names(x)
  out
}

# An R error for `NA` in a logical, integer, character or factor vector:
# reticulate would send `NA` as True, `NA_integer_` as -2147483648 and
# `NA_character_` as "NA". (A double NA is NaN, a value: it is left alone.)
# An environment (without a class: not a Python object) has no Python value: reticulate would
# fail with "Unable to convert R object to Python type", naming no argument.
check_not_na <- function(x, arg, call = rlang::caller_env()) {
  if (is.atomic(x) && !is.double(x) && anyNA(x)) {
    cli::cli_abort("{.arg {arg}} must not be {.code NA}.", class = "pyhooks_error_argument",
                   call = call)
  }
  if (inherits(x, "connection")) { # an integer to reticulate: the connection's number
    cli::cli_abort("{.arg {arg}} must not be a connection (give the file's path or its values).",
                   class = "pyhooks_error_argument", call = call)
  }
  if (is_bare_env(x) ||
      is.list(x) && !is.data.frame(x) && any(vapply(x, is_bare_env, logical(1)))) {
    cli::cli_abort("{.arg {arg}} must not be an environment.",
                   class = "pyhooks_error_argument", call = call)
  }
}

is_bare_env <- function(x) is.environment(x) && is.null(attr(x, "class"))

# Python error details of an R condition raised by a reticulate call, or NULL.
python_error_info <- function(cnd) {
  pe <- tryCatch(reticulate::py_last_error(), error = function(e) NULL)
  if (is.null(pe) || is.null(pe$type)) return(NULL)
  first_line <- strsplit(conditionMessage(cnd), "\n", fixed = TRUE)[[1L]][1L]
  type <- sub(".*\\.", "", pe$type)
  if (is.na(first_line) || !grepl(paste0("(^|\\.)", type, ":"), first_line)) return(NULL)
  notes <- tryCatch({
    exc <- attr(pe, "exception")
    n <- if (!is.null(exc) && reticulate::py_has_attr(exc, "__notes__")) {
      reticulate::py_to_r(reticulate::py_get_attr(exc, "__notes__"))
    }
    as.character(unlist(n))
  }, error = function(e) character())
  value <- pe$value %||% ""
  list(type = type, value = trimws(value), notes = notes)
}

# "`hooks[0]`" in a Python message is "`hooks[[1]]`" for an R user.
python_index_to_r <- function(message) {
  match <- regmatches(message, regexec("`([A-Za-z_.]+)\\[([0-9]+)\\]`", message))[[1L]]
  if (!length(match)) return(message)
  sub(match[[1L]], sprintf("`%s[[%d]]`", match[[2L]], as.integer(match[[3L]]) + 1L), message,
      fixed = TRUE)
}

# A Python message with the values it shows spelled as R prints them (`None`
# -> `NULL`, `True` -> `TRUE`, `[1.0, 2.0]` -> `c(1, 2)`, `{'a': 1}` ->
# `list(a = 1)`), by pyhooks._rspelling; text in backticks is left alone.
r_spelling <- function(message) {
  if (length(message) != 1L || is.na(message)) return(message)
  if (is.null(.py$rspelling)) {
    .py$rspelling <- reticulate::import("pyhooks._rspelling", convert = TRUE)
  }
  .py$rspelling$r_spelling(message)
}

cli_escape <- function(x) gsub("}", "}}", gsub("{", "{{", x, fixed = TRUE), fixed = TRUE)

`%||%` <- function(x, y) if (is.null(x)) y else x

# Re-signals an error from Python as an R error: the Python message (which
# names the argument and its value), its type, no Python traceback.
abort_from_python <- function(cnd, call, ...) {
  info <- python_error_info(cnd)
  if (is.null(info)) {
    rlang::cnd_signal(cnd)
  }
  message <- if (nzchar(info$value)) info$value else info$type
  message <- r_spelling(python_index_to_r(without_python_frames(message)))
  notes <- grep("^pyhooks: raised in", info$notes, value = TRUE, invert = TRUE)
  notes <- vapply(sub("^pyhooks: ", "", notes), python_index_to_r, "", USE.NAMES = FALSE)
  notes <- vapply(notes, r_spelling, "", USE.NAMES = FALSE)
  bullets <- c(
    "{message}",
    "i" = "Raised by Python ({info$type}).",
    stats::setNames(cli_escape(notes), rep("i", length(notes)))
  )
  where <- grep("^pyhooks: raised in", info$notes, value = TRUE)
  if (length(where)) {
    bullets <- c(bullets, "i" = cli_escape(sub("^pyhooks: r", "R", where[[1L]])))
  }
  cli::cli_abort(
    bullets,
    class = c(paste0("pyhooks_python_", info$type), "pyhooks_python_error"),
    python_type = info$type,
    python_message = info$value,
    call = call,
    ...,
    .envir = environment()
  )
}

# Evaluates `expr` (a call into Python), turning Python errors into R errors.
with_py_errors <- function(expr, call = rlang::caller_env()) {
  tryCatch(expr, error = function(cnd) abort_from_python(cnd, call))
}

# Calls the Python callable `name` of pyhooks with `args` (after check_not_na()).
# Python objects made so keep `args` (attribute "pyhooks_args") for printing.
py_construct <- function(name, args, call = rlang::caller_env()) {
  for (arg in names(args)) if (nzchar(arg)) check_not_na(args[[arg]], arg, call)
  object <- py_construct_unchecked(name, args, call)
  if (is_py_object(object)) attr(object, "pyhooks_args") <- args
  object
}

# py_construct() without its NA check (for arguments checked already).
py_construct_unchecked <- function(name, args, call = rlang::caller_env()) {
  fn <- .py$constructors[[name]]
  if (is.null(fn)) { # looked up once: an attribute read through reticulate costs ~180 us
    fn <- py_pyhooks()[[name]]
    .py$constructors[[name]] <- fn
  }
  with_py_errors(do.call(fn, args), call = call)
}

is_py_object <- function(x) inherits(x, "python.builtin.object")

py_class_is <- function(x, name) {
  is_py_object(x) && any(endsWith(class(x), paste0(".", name)))
}

# R values from a Python value converted by the bridge's to_r(): n-d arrays
# come as list(`__pyhooks_array__` = TRUE, data = , dim = ).
restore_arrays <- function(x) {
  if (is.list(x)) {
    if (isTRUE(x[["__pyhooks_array__"]])) {
      data <- x[["data"]]
      if (is.list(data)) data <- unlist(data, use.names = FALSE)
      return(array(data, dim = unlist(x[["dim"]])))
    }
    x[] <- lapply(x, restore_arrays)
  }
  x
}

# An R value from a Python object (NumPy arrays included).
py_value <- function(x) {
  restore_arrays(py_bridge()$to_r(x))
}

# On a worker of a cluster named by TF_CONFIG whose strategy is made (TensorFlow's
# coordination service runs), tells the other workers that this one fails `where`
# with `cnd` (an error of R's own checks, before or outside Python's train()):
# their next collective fails with TensorFlow's error naming this worker. Never
# in place of `cnd`: a failure to tell is a warning in Python's log.
tell_cluster <- function(where, cnd) {
  if (!nzchar(Sys.getenv("TF_CONFIG")) || !reticulate::py_available()) return(invisible(FALSE))
  message <- if (inherits(cnd, "rlang_error")) rlang::cnd_header(cnd) else conditionMessage(cnd)
  message <- paste(cli::ansi_strip(message), collapse = " ")
  message <- gsub("\\s*\n\\s*", " ", message)
  told <- tryCatch(py_pyhooks()$distribute$report_failure_of_task(where, message),
                   error = function(e) FALSE)
  invisible(isTRUE(told))
}

# A TensorFlow error's message without what names Python's code: the frames where a
# failing op was defined ("Detected at node ... defined at (most recent call last):"
# or "Original stack trace for ...:" and their indented lines), its "Graph execution
# error:" heading, its op lines ("Node: ...", "[[{{node ...}}]] [Op:...]") and a line
# repeated at once; with another worker's failure reported by pyhooks, what comes
# before that report. The whole message stays in `python_message` and
# reticulate::py_last_error().
without_python_frames <- function(message) {
  # another worker's failure that pyhooks reported: that report, without TensorFlow's
  # framing before it ("From /job:...: Collective ops is aborted by: ...")
  report <- regexpr("pyhooks: (chief|worker|ps|evaluator) [0-9]+ failed ", message)
  if (report > 0L) message <- substring(message, report + nchar("pyhooks: "))
  lines <- strsplit(message, "\n", fixed = TRUE)[[1L]]
  keep <- rep(TRUE, length(lines))
  in_frames <- FALSE
  frames_header <- paste0("^(Detected at node .* defined at \\(most recent call last\\)|",
                          "Original stack trace for .*):\\s*$")
  for (i in seq_along(lines)) {
    if (grepl(frames_header, lines[[i]])) {
      in_frames <- TRUE
      keep[[i]] <- FALSE
    } else if (in_frames && !grepl("^\\S", lines[[i]])) { # its frames, blank lines between
      keep[[i]] <- FALSE
    } else {
      in_frames <- FALSE
    }
  }
  lines <- lines[keep & !grepl("^(Graph execution error:|Node: .*)$", lines) &
                   !grepl("^\\s*\\[\\[\\{\\{node .*\\}\\}\\]\\]", lines)]
  lines <- sub("\\s*\\[\\[\\{\\{node [^]]*\\}\\}\\]\\]( \\[Op:[^]]*\\])?\\s*$", "", lines)
  lines <- lines[nzchar(trimws(lines))]
  lines <- lines[c(TRUE, lines[-1L] != lines[-length(lines)])] # a line said twice in a row
  if (!length(lines)) return(message)
  paste(lines, collapse = "\n")
}
