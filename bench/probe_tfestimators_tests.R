# Runs tfestimators' own test suite (tests/testthat/*.R of github.com/rstudio/tfestimators)
# under library(pyhooks) and prints one line per test_that() block (passed, failed, or
# cannot run and why), then the count of blocks that pass among those that can run.
#
#   Rscript bench/probe_tfestimators_tests.R <tfestimators checkout or git dir> [--timeout 600]
#       [--logs DIR] [--only FILE]
#
# e.g. with the R library and Python of a worktree's .venv:
#   R_LIBS=$PWD/.venv/R-library RETICULATE_PYTHON=$PWD/.venv/bin/python \
#   PYHOOKS_PYTHON=$PWD/.venv/bin/python LANG=C.UTF-8 TF_CPP_MIN_LOG_LEVEL=2 \
#   Rscript bench/probe_tfestimators_tests.R /work/.mirror/rstudio+tfestimators/repo
#
# Not part of `make test` or `make bench`: it needs a copy of tfestimators' repository (a
# checkout or a bare git directory), which CI does not have. Nothing of tfestimators is stored
# here: its test files are read from that copy at run time.
#
# Each test file runs with testthat::test_file() in a fresh R process, in a fresh directory
# holding that file and tfestimators' helper-utils.R (which the files source()), no assertion
# changed. The only edits are to names of packages that are not pyhooks (HARNESS below):
# `library(tfestimators)` / `library(tensorflow)` load pyhooks, and the two functions the tests
# take from the tensorflow R package (not installed here) are given their meaning:
# `tensorflow::np_array` is reticulate's np_array (which the tensorflow package re-exported),
# `tensorflow::tf_version()` the version of the running TensorFlow.
#
# A block "cannot run" when what it tests is not something pyhooks could provide (CANNOT
# below: tfestimators' internal functions and state, or models TensorFlow 2 no longer has).
# Such blocks still run and their outcome is shown, but they are not counted.

HARNESS <- list(
  list(pattern = "library\\((tfestimators|tensorflow)\\)", replacement = "library(pyhooks)",
       what = "library(tfestimators) / library(tensorflow) -> library(pyhooks)"),
  list(pattern = "tensorflow::np_array", replacement = "reticulate::np_array",
       what = "tensorflow::np_array -> reticulate::np_array (the function it re-exported)"),
  list(pattern = "tensorflow::tf_version\\(\\)", replacement = ".probe_tf_version()",
       what = "tensorflow::tf_version() -> the running TensorFlow's version")
)

# A block's code matching `pattern` cannot run under any package but tfestimators.
CANNOT <- list(
  list(pattern = "tfestimators:::",
       reason = "reads tfestimators' internal state (`tfestimators:::.globals`, its package-global history)"),
  list(pattern = "\\bparse_formula\\(",
       reason = "tests tfestimators' internal parse_formula(), which it did not export either"),
  list(pattern = "\\bboosted_trees_(classifier|regressor)\\(",
       reason = "boosted trees went with tf.estimator (TensorFlow 2.21 has none; pyhooks' error names replacements)"),
  list(pattern = "\\)\\((TRUE|fake_canned_estimator|fake_custom_estimator)\\)",
       reason = "calls the input function with tfestimators' internal arguments (`(TRUE)`, a fake estimator) to get its tensors"),
  list(pattern = "The following factor levels of",
       reason = "expects tfestimators' message announcing a factor's codes at every train(); pyhooks keeps the levels in model_dir and checks later data against them, silently when they match")
)

# Why a block that can run fails, when the cause is known (matched on its failure message).
CAUSES <- list(
  list(pattern = "Required version of NumPy not available|incompatible NumPy binary",
       cause = "issue 28: reticulate 1.28 cannot hand an R vector to NumPy 2 (np_array() of mtcars$vs)"),
  list(pattern = "`actual_output` not equal to `expected_output`",
       cause = "issue 28: the progress bar writes to stdout, so capture.output() holds it too"),
  list(pattern = "dim\\(as.data.frame\\(training_history\\)\\) not equal to c\\(2, 3\\)",
       cause = "by design: tfestimators' as.data.frame() of a history was long (a row per metric and step); pyhooks' history is one row per step (?pyhooks_history)")
)

`%||%` <- function(a, b) if (is.null(a)) b else a

# ---------------------------------------------------------------------------------------
# The child: one test file under testthat, results saved as a data frame.
# ---------------------------------------------------------------------------------------

run_child <- function(test_file, result_file) {
  options(warn = 1)
  .probe_tf_version <<- function() {
    package_version(reticulate::import("tensorflow")$`__version__`)
  }
  results <- testthat::test_file(test_file, reporter = testthat::SilentReporter$new(),
                                 stop_on_failure = FALSE, load_helpers = FALSE)
  rows <- lapply(results, function(test) {
    kinds <- vapply(test$results, function(e) class(e)[[1]], "")
    bad <- Filter(function(e) inherits(e, c("expectation_failure", "expectation_error")),
                  test$results)
    skipped <- Filter(function(e) inherits(e, "expectation_skip"), test$results)
    status <- if (length(bad)) "failed" else if (length(skipped)) "skipped" else "passed"
    message <- if (length(bad)) conditionMessage(bad[[1]])
               else if (length(skipped)) conditionMessage(skipped[[1]]) else ""
    data.frame(test = test$test, status = status, message = message,
               expectations = sum(kinds != "expectation_skip"), stringsAsFactors = FALSE)
  })
  saveRDS(do.call(rbind, c(rows, list(make.row.names = FALSE))), result_file)
}

# ---------------------------------------------------------------------------------------
# The driver.
# ---------------------------------------------------------------------------------------

rewrite <- function(lines) {
  code <- paste(lines, collapse = "\n")
  for (h in HARNESS) code <- gsub(h$pattern, h$replacement, code)
  code
}

# The test_that() / test_succeeds() blocks of a file: their names and code, in order.
test_blocks <- function(code) {
  blocks <- list()
  walk <- function(expr) {
    if (!is.call(expr)) return()
    head <- expr[[1]]
    if (is.name(head) && as.character(head) %in% c("test_that", "test_succeeds") &&
        length(expr) >= 3 && is.character(expr[[2]])) {
      blocks[[length(blocks) + 1]] <<- list(
        test = expr[[2]], code = paste(deparse(expr[[3]], width.cutoff = 500L), collapse = "\n"))
      return()
    }
    for (part in as.list(expr)[-1]) if (!missing(part)) walk(part)
  }
  for (expr in parse(text = code, keep.source = FALSE)) walk(expr)
  blocks
}

known_cause <- function(message) {
  for (c in CAUSES) if (grepl(c$pattern, message, perl = TRUE)) return(c$cause)
  ""
}

cannot_reason <- function(code) {
  for (c in CANNOT) if (grepl(c$pattern, code, perl = TRUE)) return(c$reason)
  ""
}

first_line <- function(text) {
  text <- trimws(gsub("\\s+", " ", paste(text, collapse = " ")))
  substr(text, 1, 150)
}

main <- function(args) {
  if (!length(args) || args[[1]] %in% c("-h", "--help")) {
    cat("usage: Rscript bench/probe_tfestimators_tests.R <tfestimators checkout or git dir>",
        "[--timeout SECONDS] [--logs DIR] [--only FILE]\n")
    quit(status = if (length(args)) 0 else 2)
  }
  option <- function(name, default) {
    at <- match(name, args)
    if (is.na(at)) default else args[[at + 1]]
  }
  timeout <- as.integer(option("--timeout", "600"))
  logs <- option("--logs", tempfile("tfestimators-tests-logs-"))
  only <- option("--only", "")
  dir.create(logs, showWarnings = FALSE, recursive = TRUE)
  reader <- source_reader(args[[1]])
  files <- reader$files()
  tests <- sort(grep("^tests/testthat/test-[^/]+\\.R$", files, value = TRUE))
  helpers <- grep("^tests/testthat/helper-[^/]+\\.R$", files, value = TRUE)
  if (nzchar(only)) tests <- tests[grepl(only, tests, fixed = TRUE)]
  # Absolute paths the tests write to: removed after the run unless they were there before.
  doc_dirs <- c("/tmp/ckpt_dir")
  doc_dirs <- doc_dirs[!file.exists(doc_dirs)]
  on.exit(unlink(doc_dirs, recursive = TRUE))
  probe <- normalizePath(PROBE_FILE)

  rows <- list()
  for (file in tests) {
    work <- tempfile("tfestimators-tests-")
    dir.create(work)
    for (helper in helpers) writeLines(rewrite(reader$read(helper)), file.path(work, basename(helper)))
    code <- rewrite(reader$read(file))
    writeLines(code, file.path(work, basename(file)))
    blocks <- test_blocks(code)
    result_file <- file.path(work, "results.rds")
    log <- file.path(logs, sub("\\.R$", ".log", basename(file)))
    unlink(doc_dirs, recursive = TRUE)
    old <- setwd(work)
    status <- suppressWarnings(system2(
      file.path(R.home("bin"), "Rscript"),
      c(shQuote(probe), "--child", shQuote(file.path(work, basename(file))), shQuote(result_file)),
      stdout = log, stderr = log, timeout = timeout))
    setwd(old)
    results <- if (file.exists(result_file)) readRDS(result_file) else NULL
    unlink(work, recursive = TRUE)
    for (block in blocks) {
      found <- if (!is.null(results)) results[results$test == block$test, , drop = FALSE]
      if (is.null(found) || !nrow(found)) {
        outcome <- "failed"
        message <- if (identical(status, 124L)) sprintf("not reached: the file ran over %d s", timeout)
                   else if (is.null(results)) sprintf("not reached: the file's process ended (status %s); see %s", status, log)
                   else "not reached: an error outside the test blocks ended the file"
      } else {
        outcome <- found$status[[1]]
        message <- found$message[[1]]
      }
      reason <- cannot_reason(block$code)
      rows[[length(rows) + 1]] <- data.frame(
        file = sub("^tests/testthat/", "", file), test = block$test,
        category = if (nzchar(reason)) "cannot run" else outcome,
        outcome = outcome, reason = reason, message = first_line(message),
        stringsAsFactors = FALSE)
    }
    cat(sprintf("%-45s %d block(s) done\n", basename(file), length(blocks)), file = stderr())
  }
  result <- do.call(rbind, rows)

  cat(sprintf("\ntfestimators' tests under library(pyhooks): %d test_that blocks in %d files\n",
              nrow(result), length(tests)))
  cat(sprintf("(logs of each file in %s)\n", logs))
  cat("Harness edits (names of packages other than pyhooks, no assertion changed):\n")
  for (h in HARNESS) cat("  - ", h$what, "\n", sep = "")
  cat("\n")
  for (k in seq_len(nrow(result))) {
    row <- result[k, ]
    cause <- if (row$category == "failed") known_cause(row$message) else ""
    detail <- if (row$category == "cannot run") {
      sprintf("%s [ran: %s]", row$reason, row$outcome)
    } else if (nzchar(cause)) sprintf("%s [%s]", cause, substr(row$message, 1, 60))
    else row$message
    cat(sprintf("%-36s %-62s %-10s %s\n", row$file, substr(row$test, 1, 62), row$category, detail))
  }
  runnable <- result[result$category != "cannot run", , drop = FALSE]
  cat(sprintf("\nPassed: %d of %d that can run (%d failed, %d skipped); %d cannot run.\n",
              sum(runnable$category == "passed"), nrow(runnable),
              sum(runnable$category == "failed"), sum(runnable$category == "skipped"),
              sum(result$category == "cannot run")))
  causes <- vapply(runnable$message[runnable$category == "failed"], known_cause, "")
  for (cause in unique(causes[nzchar(causes)])) {
    cat(sprintf("  %d failed: %s\n", sum(causes == cause), cause))
  }
  if (any(!nzchar(causes))) cat(sprintf("  %d failed for other reasons (see above)\n", sum(!nzchar(causes))))
  saveRDS(result, file.path(logs, "table.rds"))
  invisible(result)
}

PROBE_FILE <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file)) file[[1]] else "bench/probe_tfestimators_tests.R"
})
source(file.path(dirname(PROBE_FILE), "tfestimators_source.R")) # source_reader()

args <- commandArgs(trailingOnly = TRUE)
if (length(args) && args[[1]] == "--child") {
  run_child(args[[2]], args[[3]])
} else {
  main(args)
}
