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
    values <- unlist(column, use.names = FALSE)
    if (is.null(values)) numeric() else values
  })
  if (!is.null(columns$steps)) columns$steps <- as.integer(columns$steps)
  df <- as.data.frame(columns, stringsAsFactors = FALSE, optional = TRUE)
  class(df) <- c("pyhooks_history", "data.frame")
  df
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
#' @param x A `pyhooks_history`, as returned by [train()].
#' @param ... Passed on to [print.data.frame()] (for `print()`), ignored
#'   otherwise.
#' @param row.names,optional See [as.data.frame()].
#' @param y Which column to plot against `steps`: `"mean_losses"` (default)
#'   or `"total_losses"`.
#' @returns `print()` returns `x` invisibly; `as.data.frame()` a plain data
#'   frame; `plot()` a ggplot object when ggplot2 is installed (otherwise it
#'   draws with base graphics and returns `x` invisibly).
#' @family training
#' @seealso [train()], [hook_history_saver()]
#' @name pyhooks_history
#' @examples
#' \dontrun{
#' history <- train(model, input, steps = 4,
#'                  hooks = list(hook_history_saver(every_n_step = 2)))
#' history
#' as.data.frame(history)
#' plot(history)
#' }
NULL

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
  invisible(x)
}

#' @rdname pyhooks_history
#' @export
as.data.frame.pyhooks_history <- function(x, row.names = NULL, optional = FALSE, ...) {
  class(x) <- "data.frame"
  if (!is.null(row.names)) row.names(x) <- row.names
  x
}

#' @rdname pyhooks_history
#' @export
plot.pyhooks_history <- function(x, y = "mean_losses", ...) {
  df <- as.data.frame(x)
  if (!is.character(y) || length(y) != 1L || !y %in% setdiff(names(df), "steps")) {
    cli::cli_abort(
      "{.arg y} must be one of {.val {setdiff(names(df), 'steps')}}, not {.val {format(y)}}.",
      class = "pyhooks_error_argument"
    )
  }
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    plot_data <- data.frame(steps = df$steps, value = df[[y]])
    return(
      ggplot2::ggplot(plot_data, ggplot2::aes(x = steps, y = value)) +
        ggplot2::geom_line() +
        ggplot2::geom_point() +
        ggplot2::labs(x = "steps", y = y, title = "Training history")
    )
  }
  plot_history_base(df, y)
  invisible(x)
}

plot_history_base <- function(df, y) {
  graphics::plot(df$steps, df[[y]], type = "b", xlab = "steps", ylab = y,
                 main = "Training history")
  invisible(df)
}
