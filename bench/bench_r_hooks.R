# Per-step cost in R of hooks during train(), and the number of R calls per step.
#
#   Rscript bench/bench_r_hooks.R                     this checkout
#   BENCH_BASE=<commit>[,<commit>...] Rscript bench/bench_r_hooks.R
#                                                     this checkout beside those commits (their R
#                                                     packages and Python installed in a temporary
#                                                     directory), in alternating processes
#
# Workloads (BENCH_WORKLOADS=mtcars,dnn by default), each trained in one train() call:
#   mtcars  linear_regressor on mtcars, batch 8 (BENCH_STEPS=1000 steps)
#   dnn     dnn_classifier([64, 32]) on 100,000 rows x 20 numeric columns, batch 256
#           (BENCH_DNN_STEPS=300 steps)
# Variants, BENCH_REPEATS (5) times each, interleaved; medians:
#   none      no R hook (progress bar writing to a Python no-op, so no R call)
#   (a)       + built-in hook_*() hooks only
#   (b)       (a) + a session_run_hook() defining only after_run
#   (c)       (a) + a session_run_hook() defining all five callbacks
#   (d)       (a) + a session_run_hook() whose before_run asks for the losses as
#             SPEC §3's does (a structure built anew in R at every step), after_run NULL
#   (e)       (a) + a session_run_hook() whose before_run asks for the loss by name
#             (a new Python string at every step), after_run NULL
# R calls are counted, and the time spent in them measured, by wrapping
# reticulate's Python-to-R entry point (rpycall.call_r_function) in separate
# runs of each variant: the CPU time of the calling thread (time.thread_time),
# which neither TensorFlow's step time nor the other processes of a busy
# machine change, unlike the wall time of a step.
# A last table times one hook-method call from Python without TensorFlow (CPU
# time of the thread, too).
# With BENCH_BASE, BENCH_ROUNDS (3) rounds, each running every workload once per
# side in random order, one process each; the tables give medians over rounds.
# "CPU µs per R call" is the CPU time in R per step divided by the R calls per step.

Sys.setenv(TF_CPP_MIN_LOG_LEVEL = Sys.getenv("TF_CPP_MIN_LOG_LEVEL", "2"))
this_file <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))

# --------------------------------------------------------------------------- one process
measure <- function(workload) {
  suppressPackageStartupMessages(library(pyhooks))
  repeats <- as.integer(Sys.getenv("BENCH_REPEATS", "5"))
  steps <- as.integer(Sys.getenv(if (workload == "dnn") "BENCH_DNN_STEPS" else "BENCH_STEPS",
                                 if (workload == "dnn") "300" else "1000"))
  py <- reticulate::py_run_string("
import time
import rpycall

_entry = rpycall.call_r_function
r_calls = [0, 0.0]

def _counting(f, *args, **kwargs):
    r_calls[0] += 1
    start = time.thread_time()
    try:
        return _entry(f, *args, **kwargs)
    finally:
        r_calls[1] += time.thread_time() - start

def count_r_calls(on):
    rpycall.call_r_function = _counting if on else _entry
    r_calls[0] = 0
    r_calls[1] = 0.0

def r_call_count():
    return r_calls[0]

def r_call_seconds():
    return r_calls[1]

def silent(text):
    pass

def time_method(hook, method, n):
    import pyhooks
    ctx = pyhooks.SessionRunContext(pyhooks.SessionRunArgs(None), None)
    vals = pyhooks.SessionRunValues({'loss': 1.0}, None, None)
    fn = getattr(hook, method)
    args = {'after_run': (ctx, vals), 'before_run': (ctx,)}[method]
    fn(*args)
    t = time.thread_time()
    for _ in range(n):
        fn(*args)
    return (time.thread_time() - t) / n * 1e6

def time_plain(fn, n):
    t = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - t) / n * 1e6
", convert = TRUE)

  if (workload == "dnn") {
    set.seed(1)
    data <- as.data.frame(matrix(stats::rnorm(100000 * 20), ncol = 20,
                                 dimnames = list(NULL, paste0("x", 1:20))))
    data$y <- as.integer(rowSums(data[1:5]) + stats::rnorm(100000) > 0)
    input <- input_fn(data, features = paste0("x", 1:20), response = "y", batch_size = 256L,
                      num_epochs = NULL)
    model <- dnn_classifier(c(64, 32), feature_columns(do.call(column_numeric,
                                                               as.list(paste0("x", 1:20)))))
  } else {
    input <- input_fn(mtcars, features = c("drat", "cyl"), response = "mpg", batch_size = 8L,
                      num_epochs = NULL)
    model <- linear_regressor(feature_columns(column_numeric("drat")))
  }

  builtin_hooks <- function() {
    list(
      hook_history_saver(every_n_step = 1),
      hook_nan_tensor("training_loss:0"),
      hook_global_step_waiter(wait_until_step = 0),
      hook_step_counter(every_n_steps = 100),
      hook_logging_tensor(list(loss = "training_loss"), every_n_iter = 100)
    )
  }
  after_run_only <- function() {
    session_run_hook(after_run = function(context, values) NULL)
  }
  all_five <- function() {
    session_run_hook(
      begin = function() NULL,
      after_create_session = function(session, coord) NULL,
      before_run = function(context) NULL,
      after_run = function(context, values) NULL,
      end = function(session) NULL
    )
  }
  spec_before_run <- function() { # SPEC §3's before_run: a structure built in R at every step
    session_run_hook(
      before_run = function(context) {
        session_run_args(losses = context$session$graph$get_collection("losses"))
      },
      after_run = function(context, values) NULL
    )
  }
  by_name <- function() { # a name: reticulate makes a new Python string at every step
    session_run_hook(
      before_run = function(context) session_run_args(loss = "training_loss:0"),
      after_run = function(context, values) NULL
    )
  }
  variants <- list(
    "none" = function() list(),
    "(a) built-in hook_*() only" = builtin_hooks,
    "(b) (a) + session_run_hook(after_run)" = function() c(builtin_hooks(), list(after_run_only())),
    "(c) (a) + session_run_hook(all five)" = function() c(builtin_hooks(), list(all_five())),
    "(d) (a) + session_run_hook(SPEC before_run, after_run)" = function() {
      c(builtin_hooks(), list(spec_before_run()))
    },
    "(e) (a) + session_run_hook(before_run by name, after_run)" = function() {
      c(builtin_hooks(), list(by_name()))
    }
  )

  run <- function(make_hooks) {
    hooks <- c(make_hooks(), list(hook_progress_bar(writer = py$silent, mode = "plain")))
    start <- proc.time()[["elapsed"]]
    suppressMessages(train(model, input, steps = steps, hooks = hooks))
    proc.time()[["elapsed"]] - start
  }

  invisible(lapply(variants, run)) # warm up: graph, session, callables
  times <- matrix(NA_real_, repeats, length(variants), dimnames = list(NULL, names(variants)))
  for (i in seq_len(repeats)) {
    for (v in sample(names(variants))) times[i, v] <- run(variants[[v]])
  }
  counted <- vapply(variants, function(make_hooks) {
    runs <- vapply(seq_len(repeats), function(i) {
      py$count_r_calls(TRUE)
      on.exit(py$count_r_calls(FALSE))
      run(make_hooks)
      c(py$r_call_count(), py$r_call_seconds())
    }, numeric(2))
    c(calls = runs[1, 1] / steps, us = stats::median(runs[2, ]) / steps * 1e6)
  }, numeric(2))
  per_step <- apply(times, 2, stats::median) / steps * 1e6
  steps_table <- data.frame(
    workload = workload, variant = names(variants), us_step = per_step,
    calls_step = counted["calls", ], us_in_r_step = counted["us", ], row.names = NULL
  )

  # One hook-method call from Python, without TensorFlow.
  n <- 20000L
  k <- 0
  reference <- reticulate::py_eval("__import__('pyhooks').LambdaHook(after_run=lambda c, v: None)")
  calls <- list(
    "Python LambdaHook.after_run (reference)" = function() py$time_method(reference, "after_run", n),
    "empty R function through reticulate (the floor)" = function() {
      py$time_plain(reticulate::r_to_py(function() NULL, convert = FALSE), n)
    },
    "session_run_hook(after_run = function(context, values) NULL)" = function() {
      py$time_method(after_run_only(), "after_run", n)
    },
    "session_run_hook(after_run = function(context, values) k <<- k + 1)" = function() {
      py$time_method(session_run_hook(after_run = function(context, values) k <<- k + 1),
                     "after_run", n)
    },
    "session_run_hook(after_run = ...) reading values$results" = function() {
      py$time_method(session_run_hook(after_run = function(context, values) values$results),
                     "after_run", 2000L)
    },
    "session_run_hook(after_run = ...) reading context$stop_requested" = function() {
      py$time_method(session_run_hook(after_run = function(context, values) {
        context$stop_requested
      }), "after_run", 2000L)
    },
    "session_run_hook(after_run = ...): before_run not given" = function() {
      py$time_method(after_run_only(), "before_run", n)
    }
  )
  micro <- data.frame(workload = "one call", variant = names(calls),
                      us_call = vapply(calls, function(f) f(), numeric(1)), row.names = NULL)
  list(steps = steps_table, micro = micro,
       about = sprintf("R %s, reticulate %s", getRversion(), utils::packageVersion("reticulate")))
}

# --------------------------------------------------------------------------- printing
md_table <- function(df) {
  cells <- lapply(df, function(col) if (is.numeric(col)) formatC(col, format = "f", digits = 1,
                                                                 big.mark = ",") else col)
  widths <- mapply(function(name, col) max(nchar(c(name, col))), names(df), cells)
  right <- vapply(df, is.numeric, logical(1))
  pad <- function(x, w, r) formatC(x, width = w, flag = if (r) "" else "-")
  line <- function(values) paste0("| ", paste(mapply(pad, values, widths, right), collapse = " | "),
                                  " |")
  rule <- paste0("|", paste(ifelse(right, paste0(strrep("-", widths + 1), ":"),
                                   strrep("-", widths + 2)), collapse = "|"), "|")
  cat(line(names(df)), rule, do.call(mapply, c(list(function(...) line(c(...))), cells)),
      sep = "\n")
  cat("\n")
}

per_call <- function(us, calls) ifelse(calls > 0.5, us / round(calls), NA_real_)

print_one <- function(result) {
  s <- result$steps
  for (w in unique(s$workload)) {
    cat(sprintf("train(), %s: medians (%s)\n\n", w, result$about))
    t <- s[s$workload == w, ]
    md_table(data.frame(variant = t$variant, `µs/step` = t$us_step,
                        `vs none` = t$us_step - t$us_step[[1]],
                        `R calls/step` = round(t$calls_step, 3), `CPU µs in R/step` = t$us_in_r_step,
                        `CPU µs per R call` = per_call(t$us_in_r_step, t$calls_step),
                        check.names = FALSE))
  }
  cat("One hook-method call from Python, no TensorFlow (mean)\n\n")
  md_table(data.frame(call = result$micro$variant, `CPU µs/call` = result$micro$us_call,
                      check.names = FALSE))
}

print_compare <- function(rounds, sides, n_rounds) {
  steps <- do.call(rbind, lapply(rounds, `[[`, "steps"))
  med <- stats::aggregate(cbind(us_step, calls_step, us_in_r_step) ~ side + workload + variant,
                          steps, stats::median)
  variants <- unique(steps$variant)
  for (w in unique(steps$workload)) {
    cat(sprintf("train(), %s: medians of %d rounds (%s)\n\n", w, n_rounds, rounds[[1]]$about))
    of <- lapply(stats::setNames(sides, sides), function(side) {
      m <- med[med$side == side & med$workload == w, ]
      m[match(variants, m$variant), ]
    })
    calls <- of[[sides[[1]]]]$calls_step
    table <- data.frame(variant = variants, `R calls/step` = round(calls, 2), check.names = FALSE)
    for (side in sides) {
      table[[paste("CPU µs per R call", side)]] <- per_call(of[[side]]$us_in_r_step, calls)
    }
    first <- table[[paste("CPU µs per R call", sides[[1]])]]
    table[["change"]] <- table[[paste("CPU µs per R call", sides[[length(sides)]])]] - first
    for (side in sides) table[[paste("µs/step (wall)", side)]] <- of[[side]]$us_step
    md_table(table)
  }
  micro <- do.call(rbind, lapply(rounds, function(r) cbind(r$micro, side = r$side)))
  med <- stats::aggregate(us_call ~ side + variant, micro, stats::median)
  table <- data.frame(call = unique(micro$variant))
  for (side in sides) {
    m <- med[med$side == side, ]
    table[[paste("CPU µs/call", side)]] <- m$us_call[match(table$call, m$variant)]
  }
  cat("One hook-method call from Python, no TensorFlow (mean; medians of rounds)\n\n")
  md_table(table)
}

# --------------------------------------------------------------------------- driver
worker_out <- Sys.getenv("BENCH_OUT")
workloads <- strsplit(Sys.getenv("BENCH_WORKLOADS", "mtcars,dnn"), ",")[[1]]
base <- Sys.getenv("BENCH_BASE")
if (nzchar(worker_out)) { # a process of a comparison: one workload, results to a file
  result <- measure(Sys.getenv("BENCH_WORKLOAD"))
  saveRDS(result, worker_out)
} else if (!nzchar(base)) {
  results <- lapply(workloads, measure)
  print_one(list(steps = do.call(rbind, lapply(results, `[[`, "steps")),
                 micro = results[[1]]$micro, about = results[[1]]$about))
} else {
  repo <- dirname(dirname(this_file))
  bases <- strsplit(base, ",")[[1]]
  where <- tempfile("bench_base_")
  on.exit(unlink(where, recursive = TRUE), add = TRUE)
  sides <- list()
  for (commit in bases) { # each commit's R package and Python, in a directory of its own
    dir <- file.path(where, commit)
    dir.create(file.path(dir, "lib"), recursive = TRUE)
    status <- system(sprintf("git -C %s archive %s | tar -x -C %s", shQuote(repo),
                             shQuote(commit), shQuote(dir)))
    if (status != 0) stop("cannot read commit ", commit, " of ", repo)
    status <- system2("R", c("CMD", "INSTALL", "--no-test-load",
                             paste0("--library=", file.path(dir, "lib")),
                             file.path(dir, "r-package")), stdout = FALSE, stderr = FALSE)
    if (status != 0) stop("cannot install the R package of ", commit)
    sides[[commit]] <- c(sprintf("R_LIBS=%s", paste(c(file.path(dir, "lib"), Sys.getenv("R_LIBS")),
                                                    collapse = ":")),
                         sprintf("PYTHONPATH=%s", dir))
  }
  sides[["this checkout"]] <- character()
  setwd(tempdir()) # no checkout in the processes' working directory
  rounds <- list()
  for (round in seq_len(as.integer(Sys.getenv("BENCH_ROUNDS", "3")))) {
    for (w in workloads) {
      for (side in sample(names(sides))) {
        out <- tempfile(fileext = ".rds")
        status <- system2("Rscript", this_file, env = c(
          sides[[side]], sprintf("BENCH_OUT=%s", out), sprintf("BENCH_WORKLOAD=%s", w)))
        if (status != 0) stop("the ", side, " process of ", w, " failed")
        result <- readRDS(out)
        result$steps$side <- side
        result$side <- side
        rounds[[length(rounds) + 1L]] <- result
        message(sprintf("round %d, %s, %s done (load %s)", round, w, side,
                        paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
      }
    }
  }
  print_compare(rounds, names(sides), round)
}
