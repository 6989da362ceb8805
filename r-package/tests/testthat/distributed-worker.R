# A worker of test-distributed.R (and the vignette's example): one of two processes
# training one linear regressor under MultiWorkerMirroredStrategy; TF_CONFIG says which.
# Rscript distributed-worker.R MODEL_DIR OUT [STOP_STEP [FAIL_STEP [FAULT [AGREE]]]]: worker 1 asks
# to stop after STOP_STEP and fails (an R error in a hook) after FAIL_STEP (default, or NA:
# never); FAULT on worker 1: "bad_input" (its input_fn() refuses its data), "inf" (an
# infinite loss at its step 3), "hang" (it sleeps after step 3, writing MODEL_DIR/hanging,
# to be killed); AGREE: run_config(agree_every_n_steps =), a number or "auto" (the
# default); what the test checks goes to OUT.
args <- commandArgs(trailingOnly = TRUE)
model_dir <- args[[1]]
stop_step <- if (length(args) > 2) suppressWarnings(as.integer(args[[3]])) else NA
fail_step <- if (length(args) > 3) suppressWarnings(as.integer(args[[4]])) else NA
fault <- if (length(args) > 4) args[[5]] else "none"
agree <- if (length(args) > 5 && args[[6]] != "auto") as.integer(args[[6]]) else "auto"
suppressPackageStartupMessages(library(pyhooks))
tensorflow <- reticulate::import("tensorflow")
strategy <- tensorflow$distribute$MultiWorkerMirroredStrategy() # reads TF_CONFIG
task <- strategy$cluster_resolver$task_id
x <- seq(-1, 1, length.out = 32) + task / 2 # each worker its own rows
model <- linear_regressor(feature_columns(column_numeric("x")),
                          config = run_config(model_dir = model_dir, train_distribute = strategy,
                                              agree_every_n_steps = agree))
asker <- session_run_hook(after_run = function(context, values) {
  step <- context$session$run(tf$train$get_global_step())
  if (task == 1 && !is.na(stop_step) && step >= stop_step) context$request_stop()
  if (task == 1 && !is.na(fail_step) && step >= fail_step) stop("boom at step ", step)
  if (task == 1 && fault == "hang" && step >= 3) {
    file.create(file.path(model_dir, "hanging"))
    Sys.sleep(600)
  }
})
chief_runs <- 0
counter <- session_run_hook(after_run = function(context, values) chief_runs <<- chief_runs + 1)
report <- tryCatch({
  features <- if (task == 1 && fault == "bad_input") "z" else "x" # no column z
  if (task == 1 && fault == "inf") x[[9]] <- 1e30 # an infinite loss at step 3
  input <- input_fn(data.frame(x = x, y = 2 * x + 1), features = features, response = "y",
                    batch_size = 4L, shuffle = FALSE)
  history <- train(model, input, steps = 8, hooks = list(
    hook_progress_bar(writer = function(text) NULL), asker,
    hook_history_saver(every_n_step = 2, path = file.path(model_dir, "history.csv"))),
    chief_only_hooks = list(counter))
  # this worker's variables (only the chief saves them), in its training graph (kept under
  # ("train", whether the input is held in the session))
  sums <- reticulate::py_eval("lambda model: [float(v.sum()) for state in [next(
    s for (mode, _), s in model._states.items() if mode == 'train')] for v in
    state.session.run(state.model_variables)]")
  weights <- unlist(sums(model))
  checkpoint <- model$latest_checkpoint()
  c(paste("steps", paste(history$steps, collapse = ",")),
    paste("weights", paste(signif(weights, 6), collapse = ",")),
    paste("model_dir", model$model_dir),
    paste("chief_runs", chief_runs),
    paste("checkpoint", if (is.null(checkpoint)) "none" else basename(checkpoint)))
}, error = function(e) paste("error", gsub("\n", " ", conditionMessage(e))))
writeLines(report, args[[2]])
