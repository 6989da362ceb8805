# The training history returned by train(): a data frame of class
# "pyhooks_history" built from the Python History of the call's
# HistorySaverHook. Nothing is kept in package globals.

new_history <- function(py_history) {
  columns <- if (is.null(py_history)) {
    list(mean_losses = numeric(), total_losses = numeric(), steps = integer())
  } else {
    py_history$to_dict()
  }
  columns <- lapply(columns, function(column) {
    # Python's None (a step train_and_evaluate() did not evaluate): NA, not NaN
    column[vapply(column, is.null, logical(1))] <- list(NA_real_)
    values <- unlist(column, use.names = FALSE)
    if (is.null(values)) numeric() else values
  })
  if (!is.null(columns$steps)) columns$steps <- as.integer(columns$steps)
  df <- as.data.frame(columns, stringsAsFactors = FALSE, optional = TRUE)
  attr(df, "run") <- if (is.null(py_history)) integer() else as.integer(unlist(py_history$runs))
  attr(df, "stop") <- if (!is.null(py_history)) stop_of(py_history$stop)
  class(df) <- c("pyhooks_history", "data.frame")
  df
}

# A Python StopReason as an R list (reason, step, hook, method, value, message), or NULL.
stop_of <- function(py_stop) {
  if (is.null(py_stop)) return(NULL)
  fields <- py_stop$as_dict()
  if (is_py_object(fields)) fields <- reticulate::py_to_r(fields)
  fields$step <- as.integer(fields$step)
  structure(fields, class = "pyhooks_stop")
}

stop_reasons <- c(steps = "steps reached", end_of_input = "input exhausted",
                  hook = "stopped by a hook", nan = "loss not finite",
                  interrupt = "interrupted", error = "error")

#' @export
format.pyhooks_stop <- function(x, ...) {
  text <- sprintf("%s at step %d", stop_reasons[[x$reason]], x$step)
  if (identical(x$reason, "nan") && !is.null(x$value)) {
    text <- paste0(text, " (loss = ", format(x$value), ")")
  }
  if (!is.null(x$hook)) {
    text <- paste0(text, if (is.null(x$method)) paste0(": ", x$hook)
                   else paste0(" in ", x$method, "() of ", x$hook))
  }
  text
}

#' @export
print.pyhooks_stop <- function(x, ...) {
  cat("<pyhooks_stop: ", format(x), ">\n", sep = "")
  invisible(x)
}

# The history recorded so far by a HistorySaverHook (also after a failure).
history_of <- function(hook) {
  tryCatch(new_history(hook$history), error = function(e) new_history(NULL))
}

#' Training history
#'
#' [train()] returns (invisibly) the history recorded during the call by a
#' [hook_history_saver()]: one row per recording, with the columns
#' `mean_losses` (mean of the per-example loss of the batch), `total_losses`
#' (its sum) and `steps` (the global step reached), plus one column per
#' extra metric.
#'
#' For a custom [estimator()], the per-example loss is the first tensor its
#' `model_fn` put in the `"losses"` graph collection: TensorFlow's
#' `tf$losses$...()` functions put their loss there (a scalar, unless given
#' `reduction = tf$losses$Reduction$NONE`), and if nothing is there pyhooks
#' puts the `loss` of [estimator_spec()]. A scalar makes both columns that
#' loss.
#'
#' `attr(history, "stop")` says why the call stopped: a list with `reason`
#' (`"steps"`: its `steps` or `max_steps` reached; `"end_of_input"`; `"hook"`:
#' a hook's `request_stop()`; `"nan"`: a loss that was not finite; and, on the
#' conditions [train()] signals, `"interrupt"` and `"error"`), `step` (the
#' global step reached; for `"nan"` the step of that loss), `hook` (the hook
#' that asked or failed), `method` (the hook's method that failed), `value`
#' (the loss, for `"nan"`) and `message`. `print()` shows it when the call did
#' not simply reach its steps; `summary()` always.
#'
#' `attr(history, "run")` gives each row's run: a call that resumed an
#' interrupted one (see [train()]) keeps the rows of that one (run 1) up to
#' its checkpoint and adds its own (run 2).
#'
#' A history saver records at every `every_n_step`-th step of a call and at
#' its last step, so `train(steps = 1)` gives one row (step 1) and
#' `train(steps = 25)` from step 0 rows for steps 10, 20 and 25.
#' tfestimators' history differed in two ways: its `as.data.frame()` was
#' long, one row per metric and step (a `train(steps = 1)` gave 2 rows:
#' `mean_losses` and `total_losses` of step 1), where pyhooks' history is
#' the data frame itself, one row per step; and its saver also recorded the
#' first step of every call. pyhooks does not add that row: a
#' `hook_history_saver(every_n_step = 2)` over 4 steps records steps 2 and 4,
#' and the saver [train()] adds records as that one does.
#'
#' @param x A `pyhooks_history`, as returned by [train()].
#' @param ... Passed on to [print.data.frame()] (for `print()`), ignored
#'   otherwise.
#' @param row.names,optional See [as.data.frame()].
#' @param y Not used.
#' @param metrics The metrics to plot (e.g. `"mean_losses"`), or `NULL` for
#'   all: one panel each, against `steps`. Columns named `val_<metric>` or
#'   `eval_<metric>` are drawn in the panel of `<metric>` as its evaluation
#'   series.
#' @param method `"ggplot2"`, `"base"` (base graphics) or `"auto"` (ggplot2
#'   when it is installed).
#' @returns `print()` returns `x` invisibly; `as.data.frame()` a plain data
#'   frame; `plot()` a ggplot object with ggplot2 (otherwise it draws with
#'   base graphics and returns `x` invisibly).
#' @family training
#' @seealso [train()], [hook_history_saver()]
#' @name pyhooks_history
#' @examplesIf is_pyhooks_available()
#' input <- input_fn(mtcars, response = "mpg", features = "drat", batch_size = 8L)
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' history <- train(model, input, steps = 4,
#'                  hooks = list(hook_history_saver(every_n_step = 2)))
#' history
#' as.data.frame(history)
#' plot(history)
NULL

#' @rdname pyhooks_history
#' @export
format.pyhooks_history <- function(x, ...) {
  df <- as.data.frame(x)
  if (!nrow(df)) {
    return(c("<pyhooks_history: no rows recorded>",
             paste0("Columns: ", paste(names(df), collapse = ", "))))
  }
  utils::capture.output(print(df, ...))
}

#' @rdname pyhooks_history
#' @export
print.pyhooks_history <- function(x, ...) {
  df <- as.data.frame(x)
  if (!nrow(df)) {
    cat("<pyhooks_history: no rows recorded>", sep = "\n")
    cat("Columns: ", paste(names(df), collapse = ", "), "\n", sep = "")
  } else {
    print(df, ...)
  }
  stop <- attr(x, "stop")
  if (!is.null(stop) && !identical(stop$reason, "steps")) {
    cat("Stopped: ", format(stop), "\n", sep = "")
  }
  invisible(x)
}

#' @rdname pyhooks_history
#' @param object A `pyhooks_history`.
#' @details `str()` shows the columns as R vectors; `summary()` the range of
#'   steps, the last row and a summary of each column.
#' @export
str.pyhooks_history <- function(object, ...) {
  df <- as.data.frame(object)
  cat(sprintf("pyhooks_history: %s of %d column%s\n", history_rows(df), ncol(df),
              if (ncol(df) == 1L) "" else "s"))
  utils::str(as.list(df), no.list = TRUE, give.attr = FALSE, ...)
  invisible()
}

#' @rdname pyhooks_history
#' @export
summary.pyhooks_history <- function(object, ...) {
  df <- as.data.frame(object)
  structure(list(rows = nrow(df), steps = if (nrow(df)) range(df$steps) else integer(),
                 last = if (nrow(df)) df[nrow(df), , drop = FALSE],
                 columns = summary(df[setdiff(names(df), "steps")], ...),
                 text = history_rows(df), stop = attr(object, "stop"),
                 runs = length(unique(attr(object, "run")))),
            class = "summary.pyhooks_history")
}

#' @export
print.summary.pyhooks_history <- function(x, ...) {
  cat(sprintf("<pyhooks_history: %s>\n", x$text))
  if (!is.null(x$stop)) cat("Stopped: ", format(x$stop), "\n", sep = "")
  if (isTRUE(x$runs > 1L)) cat(sprintf("Runs: %d (resumed after an interruption)\n", x$runs))
  if (!x$rows) return(invisible(x))
  values <- x$last[setdiff(names(x$last), "steps")]
  cat(sprintf("Last row (step %d): %s\n", x$last$steps,
              paste(names(values), "=", vapply(values, function(v) format(v, digits = 6), ""),
                    collapse = ", ")))
  print(x$columns, ...)
  invisible(x)
}

# "2 rows (steps 2 to 4)", "1 row (step 2)", "no rows".
history_rows <- function(df) {
  n <- nrow(df)
  if (!n) return("no rows")
  steps <- range(df$steps)
  sprintf("%d row%s (%s)", n, if (n == 1L) "" else "s",
          if (steps[[1]] == steps[[2]]) sprintf("step %d", steps[[1]])
          else sprintf("steps %d to %d", steps[[1]], steps[[2]]))
}

# Rows taken from a history keep their runs (data frames keep other attributes as they are).
#' @export
`[.pyhooks_history` <- function(x, ...) {
  out <- NextMethod()
  if (!is.data.frame(out)) return(out)
  run <- attr(x, "run")
  attr(out, "run") <- if (length(run) == nrow(x)) run[match(row.names(out), row.names(x))]
  out
}

#' @rdname pyhooks_history
#' @export
as.data.frame.pyhooks_history <- function(x, row.names = NULL, optional = FALSE, ...) {
  class(x) <- "data.frame"
  attr(x, "run") <- attr(x, "stop") <- NULL
  if (!is.null(row.names)) row.names(x) <- row.names
  x
}

#' @rdname pyhooks_history
#' @export
plot.pyhooks_history <- function(x, y, metrics = NULL, method = c("auto", "ggplot2", "base"),
                                 ...) {
  method <- match.arg(method)
  long <- history_long(as.data.frame(x), metrics)
  if (method == "auto") {
    method <- if (requireNamespace("ggplot2", quietly = TRUE)) "ggplot2" else "base"
  }
  if (method == "ggplot2") return(plot_history_ggplot(long))
  plot_history_base(long)
  invisible(x)
}

# The history as rows of (steps, metric, data, value): one metric per loss or
# metric column; columns named "val_<metric>" or "eval_<metric>" are the
# evaluation series of <metric>, the others the training series.
history_long <- function(df, metrics = NULL, call = rlang::caller_env()) {
  columns <- setdiff(names(df), "steps")
  metric_of <- sub("^(val|eval)_", "", columns)
  if (!is.null(metrics)) {
    known <- unique(metric_of)
    if (!is.character(metrics) || anyNA(metrics) || !all(metrics %in% known)) {
      cli::cli_abort(
        "{.arg metrics} must be {.code NULL} or some of {.val {known}}, not {.val {format(metrics)}}.",
        class = "pyhooks_error_argument", call = call
      )
    }
  }
  keep <- if (is.null(metrics)) rep(TRUE, length(columns)) else metric_of %in% metrics
  parts <- lapply(which(keep), function(i) {
    data.frame(
      steps = df$steps,
      metric = metric_of[[i]],
      data = if (grepl("^(val|eval)_", columns[[i]])) "evaluation" else "training",
      value = as.numeric(df[[columns[[i]]]]),
      stringsAsFactors = FALSE
    )
  })
  long <- do.call(rbind, c(parts, list(make.row.names = FALSE)))
  if (is.null(long)) {
    long <- data.frame(steps = integer(), metric = character(), data = character(),
                       value = numeric())
  }
  long <- long[!is.na(long$value), , drop = FALSE]
  long$metric <- factor(long$metric, levels = unique(metric_of[keep]))
  long
}

# One facet per metric, a colour per series (training, evaluation) when there
# are both; lines only where a series has two points or more, points for short
# runs (as keras3's plot of a training history).
plot_history_ggplot <- function(long) {
  counts <- table(interaction(long$metric, long$data, drop = TRUE))
  n_max <- if (length(counts)) max(counts) else 0L
  two_series <- length(unique(long$data)) > 1L
  mapping <- if (two_series) {
    ggplot2::aes(x = steps, y = value, colour = data)
  } else {
    ggplot2::aes(x = steps, y = value)
  }
  p <- ggplot2::ggplot(long, mapping)
  lines <- long[interaction(long$metric, long$data) %in% names(counts)[counts >= 2L], ,
                drop = FALSE]
  if (nrow(lines)) p <- p + ggplot2::geom_line(data = lines)
  if (n_max < 20L) p <- p + ggplot2::geom_point()
  p + ggplot2::facet_wrap(~metric, ncol = 1L, scales = "free_y", strip.position = "left") +
    ggplot2::labs(x = "steps", y = NULL, colour = NULL) +
    ggplot2::theme(strip.placement = "outside")
}

plot_history_base <- function(long) {
  metrics <- levels(long$metric)
  if (!length(metrics)) {
    graphics::plot.new()
    return(invisible(long))
  }
  old <- graphics::par(mfrow = c(length(metrics), 1L), mar = c(4, 4, 1, 1))
  on.exit(graphics::par(old))
  series <- c(training = 1L, evaluation = 2L)
  for (metric in metrics) {
    rows <- long[long$metric == metric, , drop = FALSE]
    graphics::plot(rows$steps, rows$value, type = "n", xlab = "steps", ylab = metric)
    for (data in intersect(names(series), rows$data)) {
      part <- rows[rows$data == data, , drop = FALSE]
      graphics::lines(part$steps, part$value, type = if (nrow(part) < 20L) "b" else "l",
                      col = series[[data]], pch = 19)
    }
  }
  invisible(long)
}
