# Where Python's output goes in R: the progress bar and the "pyhooks" logger
# write through R, because reticulate does not forward Python's stdout to
# knitr or to Rscript reliably. Both are R messages, as the progress and cli
# packages write theirs: standard error in the console and in Rscript, shown
# by knitr and testthat, and out of capture.output(), so standard output
# holds only what user code prints.

# "dynamic" (redraw in place with \r) or "plain" (whole lines), decided by the
# option pyhooks.progress, then CI / knitr / testthat (plain), then whether the
# console can redraw a line (terminal, RStudio).
progress_mode <- function() {
  opt <- getOption("pyhooks.progress")
  if (!is.null(opt)) {
    if (is.character(opt) && length(opt) == 1L && opt %in% c("dynamic", "plain")) {
      return(opt)
    }
    cli::cli_warn(c(
      "Option {.code pyhooks.progress} must be {.val dynamic} or {.val plain}, not {.val {format(opt)}}.",
      "i" = "Ignoring it."
    ))
  }
  ci <- tolower(Sys.getenv("CI"))
  if (nzchar(ci) && !ci %in% c("0", "false")) return("plain")
  if (isTRUE(getOption("knitr.in.progress"))) return("plain")
  if (identical(Sys.getenv("TESTTHAT"), "true")) return("plain")
  if (isTRUE(cli::is_dynamic_tty(stderr()))) "dynamic" else "plain"
}

# The progress bar's writer: text goes out as it comes, as an R message (standard error).
progress_writer <- function(text) {
  message(text, appendLF = FALSE)
  invisible()
}

# Records of Python's "pyhooks" logger (e.g. hook_logging_tensor()) become R
# messages: visible in the console, knitr and testthat, and suppressible.
log_writer <- function(text) {
  message(text)
  invisible()
}
