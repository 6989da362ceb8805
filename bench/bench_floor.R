# bench_floor.py's workloads trained from R, beside the same floor in the same process.
#
#   Rscript bench/bench_floor.R        (BENCH_ROUNDS=3, BENCH_SPE=1,100 by default)
#
# dnn_classifier [64, 32] on 100,000 rows x 20 numeric columns at batch 256, and
# linear_classifier and linear_regressor on 1,000,000 rows x 10 numeric columns at batch
# 32, 256 and 4096 (the data of bench_floor.py, sent to R once as a data.frame of
# doubles), as an R user writes them: input_fn(df, features, response, batch_size,
# num_epochs = NULL) and train(model, input, steps, hooks = list(hook_progress_bar(),
# hook_history_saver(every_n_step = 10), hook_step_counter())), with
# run_config(steps_per_execution =) 1 and 100. The floor is bench_floor.py's own (the
# hand-written step, data inside the session, one weight matrix), and for the linear
# models its "one variable per column" twin, run through reticulate in this R process.
# Each round times every side once (the order changes each round); medians of
# examples/s (wall) and CPU µs/step (the process's, all threads, from proc.time()), and
# each side's ratios to the floors: the median over the rounds of the ratio within each
# round. The progress bars go to stderr: run with 2>/dev/null to see the table alone.

suppressPackageStartupMessages(library(pyhooks))
Sys.setenv(TF_CPP_MIN_LOG_LEVEL = Sys.getenv("TF_CPP_MIN_LOG_LEVEL", "2"))
rounds <- as.integer(Sys.getenv("BENCH_ROUNDS", "3"))
spes <- as.integer(strsplit(Sys.getenv("BENCH_SPE", "1,100"), ",")[[1]])
bench_dir <- normalizePath(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                             value = TRUE))))
py <- reticulate::py_run_string(sprintf("
import sys
sys.path.insert(0, %s)
import bench_floor as B
data = {'dnn': B.data(B.DNN_ROWS, B.DNN_COLS, 1), 'linear': B.data(B.LIN_ROWS, B.LIN_COLS, 2)}
def arrays(kind):
    x, labels, score = data['dnn' if kind == 'dnn' else 'linear']
    return x, score if kind == 'linear_regressor' else labels
def column(kind, i):
    return bytearray(arrays(kind)[0][:, i].astype('<f8').tobytes())
def response(kind):
    return bytearray(arrays(kind)[1].astype('<f8').tobytes())
def floor(kind, batch, per_column):
    return B.Floor(kind, *arrays(kind), batch, per_column)
", encodeString(bench_dir, quote = "'")))

doubles <- function(bytes) readBin(bytes, "double", n = length(bytes) %/% 8L, size = 8L,
                                   endian = "little")
data_frame <- function(kind) {
  columns <- if (kind == "dnn") 0:19 else 0:9
  df <- as.data.frame(lapply(setNames(columns, paste0("x", columns)),
                             function(i) doubles(py$column(kind, i))))
  df$y <- doubles(py$response(kind))
  if (kind != "linear_regressor") df$y <- as.integer(df$y)
  df
}

measure <- function(run) {
  gc(FALSE)
  start <- proc.time()
  run()
  took <- proc.time() - start
  c(wall = took[["elapsed"]], cpu = took[["user.self"]] + took[["sys.self"]])
}

# steps per round of each workload, by batch size
workloads <- list(dnn = c(`256` = 2000L),
                  linear_classifier = c(`32` = 4000L, `256` = 2000L, `4096` = 300L),
                  linear_regressor = c(`32` = 4000L, `256` = 2000L, `4096` = 300L))
for (kind in names(workloads)) {
  df <- data_frame(kind)
  features <- setdiff(names(df), "y")
  for (batch in as.integer(names(workloads[[kind]]))) {
    steps <- workloads[[kind]][[as.character(batch)]]
    sides <- list()
    for (per_column in if (kind == "dnn") FALSE else c(FALSE, TRUE)) {
      f <- py$floor(kind, batch, per_column)
      sides[[if (per_column) "floor, one variable per column" else "floor"]] <-
        local({ f <- f; function(n) f$run(as.integer(n)) })
    }
    input <- input_fn(df, features = features, response = "y", batch_size = batch,
                      num_epochs = NULL)
    for (spe in spes) {
      columns <- do.call(feature_columns, lapply(features, column_numeric))
      config <- run_config(steps_per_execution = spe)
      model <- if (kind == "dnn") {
        dnn_classifier(c(64L, 32L), columns, config = config)
      } else {
        do.call(kind, list(columns, config = config))
      }
      sides[[sprintf("pyhooks from R, everyday hooks, spe %d", spe)]] <- local({
        model <- model
        function(n) train(model, input, steps = n, hooks = list(
          hook_progress_bar(), hook_history_saver(every_n_step = 10), hook_step_counter()))
      })
    }
    for (side in sides) side(max(200L, steps %/% 10L))  # build, restore, warm up
    times <- lapply(sides, function(side) list())
    loads <- numeric(0)
    for (r in seq_len(rounds)) {
      k <- (r - 1L) %% length(sides)
      order <- c(tail(names(sides), length(sides) - k), head(names(sides), k))
      if (r %% 2 == 0) order <- rev(order)
      for (name in order) times[[name]][[r]] <- measure(function() sides[[name]](steps))
      loads <- c(loads, as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1]))
    }
    rate <- sapply(times, function(t) median(sapply(t, function(m) steps * batch / m[["wall"]])))
    cpu <- sapply(times, function(t) median(sapply(t, function(m) m[["cpu"]] / steps * 1e6)))
    # a side's ratio to a floor: within each round (the machine's speed drifts between
    # rounds), then the median over the rounds
    paired <- function(name, base, what) {
      median(mapply(function(mine, f) f[[what]] / mine[[what]], times[[name]], times[[base]]))
    }
    cat(sprintf("\n%s, batch %d, %d steps per round, %d rounds; load average %.1f-%.1f\n\n",
                kind, batch, steps, rounds, min(loads), max(loads)))
    cat("| side | examples/s (wall) | × floor | CPU µs/step | × floor (CPU) |",
        "× per-column floor | × per-column floor (CPU) |\n|---|---:|---:|---:|---:|---:|---:|\n")
    layout <- if (kind == "dnn") "floor" else "floor, one variable per column"
    for (name in names(sides)) {
      cat(sprintf("| %s | %s | %.2f | %.0f | %.2f | %.2f | %.2f |\n", name,
                  format(round(rate[[name]]), big.mark = ",", scientific = FALSE),
                  paired(name, "floor", "wall"),
                  cpu[[name]], paired(name, "floor", "cpu"), paired(name, layout, "wall"),
                  paired(name, layout, "cpu")))
    }
  }
}
