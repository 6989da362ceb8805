# Estimators from R on real-sized data: input_fn(data.frame) beside Python's input_fn(dict).
#
#   Rscript bench/bench_estimators_r.R        (BENCH_REPEATS=7, BENCH_STEPS=50,400 by default;
#                                              BENCH_ONLY=a,a_custom: some workloads only)
#
# The workloads of bench/bench_estimators_data.py, in one R process (one
# TensorFlow), R and Python taking turns:
#   (a)      dnn_classifier([64, 32]) on 100,000 rows x 20 numeric columns, batch 256
#   (a custom) the same network as a custom estimator: estimator(model_fn) with the
#            model_fn written in R (tf$layers, tf$losses, tf$train) beside the same
#            model_fn in Python (bench_estimators_data.py's custom_model_fn)
#   (a wide & deep) dnn_linear_combined_classifier() with the 20 columns on both sides
#   (b lin)  linear_classifier on 1,000,000 rows: x1, x2, user (a character column,
#            hashed into 1,000 buckets), color (a factor, vocabulary list of 8)
# For each: the time input_fn() takes to turn the data into an input (R: a
# data.frame; Python: a dict of numpy arrays, the same values), and training
# examples/s over STEPS steps after WARMUP steps within one train() call
# (a Python hook reads the clock), with the default hooks (the progress bar
# writing nowhere), and the process's CPU time per step over the same steps (R
# and Python share the process and take turns, so the two CPU columns count the
# same threads; CPU time moves less than wall time with the machine's load).
# Medians of BENCH_REPEATS alternating rounds. The machine is shared: compare
# columns of one run, not runs.

suppressPackageStartupMessages(library(pyhooks))
Sys.setenv(TF_CPP_MIN_LOG_LEVEL = Sys.getenv("TF_CPP_MIN_LOG_LEVEL", "2"))
repeats <- as.integer(Sys.getenv("BENCH_REPEATS", "7"))
steps <- as.integer(strsplit(Sys.getenv("BENCH_STEPS", "50,400"), ",")[[1]])
bench_dir <- normalizePath(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                             value = TRUE))))

py <- reticulate::py_run_string(sprintf("
import sys, time
sys.path.insert(0, %s)
import pyhooks
import bench_estimators_data as B
from pyhooks import estimators as E
from pyhooks.estimators import layers

WARMUP, STEPS = %d, %d

def silent(text):
    pass

class Timer(pyhooks.SessionRunHook):
    def __init__(self):
        self.n = 0
        self.t0 = self.t1 = None
    def after_run(self, run_context, run_values):
        self.n += 1
        if self.n == WARMUP:
            self.t0, self.c0 = time.perf_counter(), time.process_time()
        elif self.n == WARMUP + STEPS:
            self.t1, self.c1 = time.perf_counter(), time.process_time()
    def rate(self, batch):
        return [STEPS * batch / (self.t1 - self.t0), (self.c1 - self.c0) / STEPS * 1e6]

data = {'a': B.columns_a(), 'b_lin': B.data_b()}

def python_custom(columns):
    model_fn = B.custom_model_fn(E._quiet.import_tensorflow(), layers.dense, E.input_layer,
                                 E.estimator_spec)
    return E.estimator(model_fn, params={'columns': columns})

def column_names(workload):
    return list(data[workload])

def column_bytes(workload, name):
    import numpy as np
    values = data[workload][name]
    if values.dtype.kind == 'f':
        return 'double', bytearray(values.astype('<f8').tobytes()), None
    if values.dtype.kind in 'iu':
        return 'integer', bytearray(values.astype('<i4').tobytes()), None
    levels, codes = np.unique(values, return_inverse=True)
    return 'character', bytearray((codes + 1).astype('<i4').tobytes()), levels.tolist()

def python_input(workload):
    columns = data[B.data_key(workload)]
    start = time.perf_counter()
    inp = E.input_fn(columns, [k for k in columns if k != 'label'], 'label', batch_size=256,
                     shuffle=True, num_epochs=None)
    return inp, time.perf_counter() - start

def python_train(model, inp):
    timer = Timer()
    model.train(inp, steps=WARMUP + STEPS,
                hooks=[timer, pyhooks.ProgressBarHook(writer=silent, mode='plain')])
    return timer.rate(256)
", encodeString(bench_dir, quote = "'"), steps[[1]], steps[[2]]))

# The same values as Python's, as R users hold them: a data.frame of numeric
# columns; for (b) a character column and a factor. (They come over as bytes:
# reticulate 1.28 cannot convert NumPy 2 arrays.)
column_to_r <- function(workload, name) {
  sent <- py$column_bytes(workload, name)
  n <- length(sent[[2]]) %/% if (sent[[1]] == "double") 8L else 4L
  values <- readBin(sent[[2]], if (sent[[1]] == "double") "double" else "integer", n = n,
                    size = if (sent[[1]] == "double") 8L else 4L, endian = "little")
  if (sent[[1]] == "character") unlist(sent[[3]])[values] else values
}
data_set <- c(a = "a", a_custom = "a", a_wide_deep = "a", b_lin = "b_lin")
r_data <- lapply(c(a = "a", b_lin = "b_lin"), function(workload) {
  names <- unlist(py$column_names(workload))
  df <- as.data.frame(lapply(setNames(names, names), function(name) column_to_r(workload, name)),
                      stringsAsFactors = FALSE)
  if (workload == "b_lin") df$color <- factor(df$color)
  df
})

columns_a <- function() do.call(feature_columns, lapply(paste0("x", 0:19), column_numeric))

# (a)'s network as an R user writes a custom estimator (custom_model_fn's twin)
r_model_fn <- function(features, labels, mode, params) {
  net <- input_layer(features, params$columns)
  net <- tf$layers$dense(net, 64L, activation = tf$nn$relu)
  net <- tf$layers$dense(net, 32L, activation = tf$nn$relu)
  logits <- tf$reshape(tf$layers$dense(net, 1L), list(-1L))
  predictions <- list(probabilities = tf$sigmoid(logits))
  if (mode == mode_keys()$PREDICT) {
    return(estimator_spec(mode, predictions = predictions))
  }
  loss <- tf$losses$sigmoid_cross_entropy(labels, logits)
  train_op <- tf$train$AdagradOptimizer(0.05)$minimize(
    loss, global_step = tf$train$get_global_step())
  estimator_spec(mode, predictions = predictions, loss = loss, train_op = train_op)
}

# one model per side; only the custom estimator's model_fn differs between R and Python
models <- list(
  a = function(side) dnn_classifier(c(64L, 32L), columns_a()),
  a_custom = function(side) {
    if (side == "r") estimator(r_model_fn, params = list(columns = columns_a()))
    else py$python_custom(columns_a())
  },
  a_wide_deep = function(side) dnn_linear_combined_classifier(columns_a(), columns_a(),
                                                              c(64L, 32L)),
  b_lin = function(side) linear_classifier(feature_columns(
    column_numeric("x1"), column_numeric("x2"),
    column_categorical_with_hash_bucket("user", hash_bucket_size = 1000L),
    column_categorical_with_vocabulary_list("color", vocabulary_list = unlist(py$B$COLORS))))
)

r_input <- function(workload) {
  df <- r_data[[data_set[[workload]]]]
  time <- system.time(
    inp <- input_fn(df, features = setdiff(names(df), "label"), response = "label",
                    batch_size = 256L, shuffle = TRUE, num_epochs = NULL)
  )[["elapsed"]]
  list(input = inp, seconds = time)
}

r_train <- function(model, inp) {
  timer <- py$Timer()
  train(model, input_fn = inp, steps = sum(steps),
        hooks = list(timer, hook_progress_bar(writer = py$silent, mode = "plain")))
  timer$rate(256L)
}

results <- list()
only <- strsplit(Sys.getenv("BENCH_ONLY", paste(names(models), collapse = ",")), ",")[[1]]
for (workload in intersect(names(models), only)) {
  model_r <- models[[workload]]("r")
  model_py <- models[[workload]]("py")
  inp_r <- r_input(workload)$input
  inp_py <- py$python_input(workload)[[1]]
  r_train(model_r, inp_r) # first calls: graphs
  py$python_train(model_py, inp_py)
  rows <- list(r_conv = c(), py_conv = c(), r_rate = c(), py_rate = c(), r_cpu = c(),
               py_cpu = c())
  for (i in seq_len(repeats)) {
    sides <- if (i %% 2 == 1) c("r", "py") else c("py", "r")
    for (side in sides) {
      if (side == "r") {
        made <- r_input(workload)
        rows$r_conv <- c(rows$r_conv, made$seconds)
        rate <- unlist(r_train(model_r, made$input))
        rows$r_rate <- c(rows$r_rate, rate[[1]])
        rows$r_cpu <- c(rows$r_cpu, rate[[2]])
      } else {
        made <- py$python_input(workload)
        rows$py_conv <- c(rows$py_conv, made[[2]])
        rate <- unlist(py$python_train(model_py, made[[1]]))
        rows$py_rate <- c(rows$py_rate, rate[[1]])
        rows$py_cpu <- c(rows$py_cpu, rate[[2]])
      }
    }
  }
  results[[workload]] <- vapply(rows, median, numeric(1))
}

cat(sprintf(paste0("\nFrom R: input_fn(data.frame) beside Python's input_fn(dict of numpy ",
                   "arrays); medians of %d alternating rounds, %d steps after %d, batch 256\n"),
            repeats, steps[[2]], steps[[1]]))
line <- sprintf("%-30s%16s%16s%10s%18s%18s%10s%14s%10s%10s", "", "input_fn() R", "Python",
                "R/Py", "train ex/s R", "Python", "R/Py", "CPU us/step R", "Python", "R/Py")
cat(line, "\n", strrep("-", nchar(line)), "\n", sep = "")
labels <- c(a = "(a) DNN, 100k x 20 numeric", a_custom = "(a) custom estimator(model_fn)",
            a_wide_deep = "(a) wide & deep", b_lin = "(b) linear, 1M rows, 4 columns")
for (workload in names(results)) {
  r <- results[[workload]]
  cat(sprintf("%-30s%14.1f ms%13.1f ms%10.2f%18s%18s%10.2f%14.0f%10.0f%10.2f\n",
              labels[[workload]],
              1000 * r[["r_conv"]], 1000 * r[["py_conv"]], r[["r_conv"]] / r[["py_conv"]],
              format(round(r[["r_rate"]]), big.mark = ","),
              format(round(r[["py_rate"]]), big.mark = ","), r[["r_rate"]] / r[["py_rate"]],
              r[["r_cpu"]], r[["py_cpu"]], r[["r_cpu"]] / r[["py_cpu"]]))
}
