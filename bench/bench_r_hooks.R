# Per-step cost in R of hooks during train(), and the number of R calls per step.
#
#   Rscript bench/bench_r_hooks.R            (BENCH_STEPS=1000 BENCH_REPEATS=7 by default)
#
# Variants, each trained BENCH_STEPS steps on mtcars (linear_regressor, batch 8),
# BENCH_REPEATS times, interleaved; medians reported:
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
# runs of each variant (BENCH_REPEATS of them, medians): that time does not
# depend on TensorFlow's step time, whose noise dominates the differences of
# wall time on a busy machine.
# A second table times one hook-method call from Python without TensorFlow.

suppressPackageStartupMessages(library(pyhooks))
Sys.setenv(TF_CPP_MIN_LOG_LEVEL = Sys.getenv("TF_CPP_MIN_LOG_LEVEL", "2"))
steps <- as.integer(Sys.getenv("BENCH_STEPS", "1000"))
repeats <- as.integer(Sys.getenv("BENCH_REPEATS", "7"))

py <- reticulate::py_run_string("
import time
import rpycall

_entry = rpycall.call_r_function
r_calls = [0, 0.0]

def _counting(f, *args, **kwargs):
    r_calls[0] += 1
    start = time.perf_counter()
    try:
        return _entry(f, *args, **kwargs)
    finally:
        r_calls[1] += time.perf_counter() - start

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
    t = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - t) / n * 1e6

def time_plain(fn, n):
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e6
", convert = TRUE)

input <- input_fn(mtcars, features = c("drat", "cyl"), response = "mpg", batch_size = 8L,
                  num_epochs = NULL)
model <- linear_regressor(feature_columns(column_numeric("drat")))

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
spec_before_run <- function() {  # SPEC §3's before_run: a structure built in R at every step
  session_run_hook(
    before_run = function(context) {
      session_run_args(losses = context$session$graph$get_collection("losses"))
    },
    after_run = function(context, values) NULL
  )
}
by_name <- function() {  # a name: reticulate makes a new Python string at every step
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

invisible(lapply(variants, run)) # warm up: graph, session, caches
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
table <- data.frame(
  variant = names(variants),
  `us/step` = round(per_step, 1),
  `vs none (us/step)` = round(per_step - per_step[["none"]], 1),
  `vs (a) (us/step)` = round(per_step - per_step[[2]], 1),
  `R calls/step` = round(counted["calls", ], 3),
  `us in R/step` = round(counted["us", ], 1),
  check.names = FALSE, row.names = NULL
)
cat(sprintf("train(): %d steps x %d repeats per variant, medians (R %s, reticulate %s)\n\n",
            steps, repeats, getRversion(), utils::packageVersion("reticulate")))
print(table, row.names = FALSE)

# One hook-method call from Python, without TensorFlow.
n <- 20000L
k <- 0
reference <- reticulate::py_eval("__import__('pyhooks').LambdaHook(after_run=lambda c, v: None)")
micro <- data.frame(
  call = c(
    "Python LambdaHook.after_run (reference)",
    "empty R function through reticulate (the floor)",
    "session_run_hook(after_run = function(context, values) NULL)",
    "session_run_hook(after_run = function(context, values) k <<- k + 1)",
    "session_run_hook(after_run = ...) reading values$results",
    "session_run_hook(after_run = ...) reading context$stop_requested",
    "session_run_hook(after_run = ...): before_run not given"
  ),
  `us/call` = round(c(
    py$time_method(reference, "after_run", n),
    py$time_plain(reticulate::r_to_py(function() NULL, convert = FALSE), n),
    py$time_method(after_run_only(), "after_run", n),
    py$time_method(session_run_hook(after_run = function(context, values) k <<- k + 1), "after_run", n),
    py$time_method(session_run_hook(after_run = function(context, values) values$results), "after_run", 2000L),
    py$time_method(session_run_hook(after_run = function(context, values) context$stop_requested), "after_run", 2000L),
    py$time_method(after_run_only(), "before_run", n)
  ), 2),
  check.names = FALSE
)
cat(sprintf("\nOne hook-method call from Python, no TensorFlow (%d calls, mean)\n\n", n))
print(micro, row.names = FALSE)
