# One cell of bench/bench_scaling.py from R: pyhooks' train() on a data.frame or a CSV file.
#
#   Rscript bench/bench_scaling.R mem:ROWS | PATH.csv      (run by bench_scaling.py)
#
# In memory: ROWS rows of 20 numeric columns x0..x19 made with rnorm() (R's
# doubles), the label whether a fixed linear score is positive, and
# dnn_classifier([64, 32]); a path: dnn_regressor([64, 32]) on the file's
# response y. The clock starts right before library(pyhooks) and stops at the
# end of the first step; a Python hook (bench_scaling.clock_hook) reads it per step
# (an R hook would add R's per-step cost). Peak RSS counts from right before
# library(pyhooks) (VmHWM reset through /proc/self/clear_refs), so making the
# data frame is not in it and holding it is.
# Prints one JSON line, as the Python children do.

args <- commandArgs(trailingOnly = TRUE)
source_arg <- args[[1]]
columns <- paste0("x", 0:19)
in_memory <- startsWith(source_arg, "mem:")
if (in_memory) {
  set.seed(1)
  rows <- as.integer(sub("^mem:", "", source_arg))
  df <- as.data.frame(lapply(setNames(columns, columns), function(name) rnorm(rows)))
  score <- numeric(rows)
  for (name in columns) score <- score + df[[name]] * rnorm(1)
  df$y <- as.integer(score > 0)
  rm(score)
  data_mb <- as.numeric(object.size(df)) / 2^20
  invisible(gc())
} else {
  data_mb <- 0
}

writeLines("5", "/proc/self/clear_refs") # VmHWM counts from here (bench_scaling.reset_peak)
status <- readLines("/proc/self/status")
rss_mb <- as.numeric(strsplit(grep("^VmRSS:", status, value = TRUE), "[[:space:]]+")[[1]][[2]]) /
  1024
start <- as.numeric(Sys.time())
suppressPackageStartupMessages(library(pyhooks))
bench <- reticulate::import_from_path("bench_scaling", dirname(sub(
  "^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
marks <- bench$Marks(start, rss_mb)
clock <- bench$clock_hook(marks)
fcs <- do.call(feature_columns, lapply(columns, column_numeric))
if (in_memory) {
  model <- dnn_classifier(c(64L, 32L), fcs)
  data <- input_fn(df, features = columns, response = "y", batch_size = 256L, shuffle = TRUE,
                   num_epochs = NULL)
} else {
  model <- dnn_regressor(c(64L, 32L), fcs)
  data <- input_fn(source_arg, features = columns, response = "y", batch_size = 256L,
                   shuffle = TRUE, num_epochs = NULL, queue_capacity = 10000L)
}
silent <- reticulate::py_eval("lambda text: None")
train(model, input_fn = data, steps = 351L,
      hooks = list(hook_progress_bar(writer = silent), clock))
cat(reticulate::import("json")$dumps(marks$result(data_mb)), "\n")
