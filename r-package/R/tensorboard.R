#' Look at an estimator's training in TensorBoard
#'
#' Estimators write TensorBoard event files to their [model_dir()]: the
#' training loss and `global_step/sec` while training (every
#' `save_summary_steps` of their [run_config()], 100 by default), and the
#' metrics under `eval/` after [evaluate()]. `tensorboard()` starts
#' TensorBoard on them in the background when the Python package
#' `tensorboard` is installed and `launch` is `TRUE`, or else prints the
#' command that starts it.
#'
#' @param log_dir A directory of event files, or an estimator (its
#'   [model_dir()]).
#' @param launch `TRUE` to start TensorBoard, `FALSE` to print the command
#'   only.
#' @param port The port TensorBoard listens on.
#' @param launch_browser The same as `launch` (the tensorflow package's
#'   name, which tfestimators' articles use), or `NULL`.
#' @returns The command (a string), invisibly.
#' @family estimators
#' @seealso [model_dir()], [hook_summary_saver()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train(model, input_fn(mtcars, mpg ~ drat), steps = 10)
#' tensorboard(model)
#' }
tensorboard <- function(log_dir, launch = interactive(), port = 6006L, launch_browser = NULL) {
  rlang::check_required(log_dir)
  if (!is.null(launch_browser)) launch <- launch_browser # the tensorflow package's name
  if (inherits(log_dir, "pyhooks_estimator")) log_dir <- model_dir(log_dir)
  if (!is.character(log_dir) || length(log_dir) != 1L || is.na(log_dir) || !dir.exists(log_dir)) {
    cli::cli_abort("{.arg log_dir} must be an existing directory or an estimator.",
                   class = "pyhooks_error_argument")
  }
  port <- as_py_int(port)
  log_dir <- normalizePath(log_dir)
  command <- sprintf("tensorboard --logdir %s --port %d", shQuote(log_dir), port)
  python <- pyhooks_python() %||% Sys.which("python3")
  available <- nzchar(python) && file.exists(python) &&
    identical(suppressWarnings(system2(python, c("-c", shQuote("import tensorboard")),
                                       stdout = FALSE, stderr = FALSE)), 0L)
  if (isTRUE(launch) && available) {
    system2(python, c("-m", "tensorboard.main", "--logdir", shQuote(log_dir), "--port", port),
            wait = FALSE, stdout = FALSE, stderr = FALSE)
    cli::cli_inform(c("v" = "TensorBoard started at {.url http://localhost:{port}}."))
  } else {
    cli::cli_inform(c(
      "Start TensorBoard with:", " " = "{.code {command}}",
      "i" = if (!available) "The Python package {.pkg tensorboard} is not installed: {.code pip install tensorboard}."
    ))
  }
  invisible(command)
}
