#' Look at an estimator's training in TensorBoard
#'
#' Estimators write TensorBoard event files to their [model_dir()]: the
#' training loss and `global_step/sec` while training (every
#' `save_summary_steps` of their [run_config()], 100 by default), and the
#' metrics under `eval/` after [evaluate()]. `tensorboard()` starts
#' TensorBoard on them in the background, on the loopback address (only this
#' machine can connect), and returns once it serves; in an interactive
#' session it also opens the scalars page in the browser. With `launch =
#' FALSE` it only prints the command that starts TensorBoard.
#'
#' TensorBoard runs until `board$stop()`, `tensorboard(action = "stop")`, or
#' until this R session ends. The runs it shows for an estimator are `.`
#' (training) and `eval`.
#'
#' @param log_dir A directory of event files, or an estimator (its
#'   [model_dir()]).
#' @param launch `TRUE` to start TensorBoard, `FALSE` to print the command
#'   only.
#' @param port The port TensorBoard listens on, or `NULL` for a free one.
#' @param browse `TRUE` to open the scalars page in the browser.
#' @param launch_browser The tensorflow package's name, which tfestimators'
#'   articles use: `TRUE` starts TensorBoard and opens the browser, or
#'   `NULL`.
#' @param action `"start"`, or `"stop"` (as in the tensorflow package) to stop
#'   the TensorBoard servers this R session started on `log_dir`, or all of
#'   them when `log_dir` is not given.
#' @returns With `launch = TRUE`, the running server (invisibly): `$url`,
#'   `$port`, `$stop()`. Otherwise the command (a string), invisibly. With
#'   `action = "stop"`, the number of servers stopped, invisibly.
#' @family estimators
#' @seealso [model_dir()], [hook_summary_saver()]
#' @export
#' @examples
#' \dontrun{
#' model <- linear_regressor(feature_columns(column_numeric("drat")))
#' train(model, input_fn(mtcars, mpg ~ drat), steps = 10)
#' board <- tensorboard(model)
#' board$url
#' board$stop()
#' tensorboard(action = "stop") # stops every server this session started
#' }
tensorboard <- function(log_dir, launch = interactive(), port = NULL, browse = interactive(),
                        launch_browser = NULL, action = c("start", "stop")) {
  call <- rlang::current_env()
  if (is.character(launch) && length(launch) == 1L && launch %in% c("start", "stop")) {
    cli::cli_abort(c("{.arg launch} must be {.code TRUE} or {.code FALSE}, not {.str {launch}}.",
                     "i" = "Name it: {.code action = \"{launch}\"}."),
                   class = "pyhooks_error_argument", call = call)
  }
  action <- rlang::arg_match(action, error_call = call)
  if (action == "stop") {
    return(invisible(stop_tensorboards(if (!missing(log_dir)) log_dir, call)))
  }
  rlang::check_required(log_dir)
  if (!is.null(launch_browser)) {
    if (!rlang::is_bool(launch_browser)) {
      cli::cli_abort("{.arg launch_browser} must be {.code TRUE}, {.code FALSE} or {.code NULL}.",
                     class = "pyhooks_error_argument", call = call)
    }
    launch <- browse <- launch_browser
  }
  for (arg in c("launch", "browse")) {
    if (!rlang::is_bool(get(arg))) {
      cli::cli_abort("{.arg {arg}} must be {.code TRUE} or {.code FALSE}, not {.obj_type_friendly {get(arg)}}.",
                     class = "pyhooks_error_argument", call = call)
    }
  }
  log_dir <- check_log_dir(log_dir, call)
  port <- as_py_int(port)
  log_dir <- normalizePath(log_dir)
  if (!launch) {
    command <- paste(c("tensorboard --logdir", shQuote(log_dir),
                       if (!is.null(port)) paste("--port", port)), collapse = " ")
    cli::cli_inform(c("Start TensorBoard with:", " " = "{.code {command}}"))
    return(invisible(command))
  }
  py_pyhooks()
  helper <- reticulate::import("pyhooks.estimators.tensorboard")
  board <- with_py_errors(helper$start_tensorboard(log_dir, port = port %||% 0L), call = call)
  url <- board$url
  cli::cli_inform(c("v" = "TensorBoard serves {.path {log_dir}} at {.url {url}}.",
                    "i" = "Stop it with {.code board$stop()} (it also ends with this R session)."))
  if (browse) utils::browseURL(paste0(url, "#scalars"))
  invisible(board)
}

check_log_dir <- function(log_dir, call) {
  if (inherits(log_dir, "pyhooks_estimator")) log_dir <- model_dir(log_dir)
  if (!is.character(log_dir) || length(log_dir) != 1L || is.na(log_dir) || !dir.exists(log_dir)) {
    cli::cli_abort("{.arg log_dir} must be an existing directory or an estimator.",
                   class = "pyhooks_error_argument", call = call)
  }
  log_dir
}

stop_tensorboards <- function(log_dir, call) {
  if (!is.null(log_dir)) log_dir <- normalizePath(check_log_dir(log_dir, call))
  py_pyhooks()
  helper <- reticulate::import("pyhooks.estimators.tensorboard")
  stopped <- with_py_errors(helper$stop_tensorboard(log_dir), call = call)
  where <- if (is.null(log_dir)) "" else " on {.path {log_dir}}"
  cli::cli_inform(paste0("Stopped {stopped} TensorBoard server{?s}", where, "."))
  stopped
}
