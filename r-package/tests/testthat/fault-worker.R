# A training process for test-faults.R to kill, interrupt or starve of disk.
# Rscript fault-worker.R MODE MODEL_DIR OUT [ARG]; progress lines go to OUT.
#   train N     train N steps (checkpoint every 5, history CSV every step);
#               "interrupted" on an interrupt, "done <step>" at the end
#               (its hook writing "run <n>" keeps its count as its state)
#   defaults N  as train, with train()'s default hooks only (and the one writing "run <n>")
#   hold FILE   train, and after the first step wait (at most 120 s) until FILE exists
#   fork FILE   as hold, after forking a child (parallel::mcparallel, "child <pid>") that sleeps
#   fsize       train 2 steps, limit files to 200 bytes (as a full disk), train again
#               writing the history CSV
args <- commandArgs(trailingOnly = TRUE)
mode <- args[[1]]
model_dir <- args[[2]]
out <- args[[3]]
suppressPackageStartupMessages(library(pyhooks))
say <- function(...) cat(..., "\n", file = out, append = TRUE, sep = "")
model <- linear_regressor(feature_columns(column_numeric("drat")), model_dir = model_dir)
input <- input_fn(mtcars, features = "drat", response = "mpg", batch_size = 8L, num_epochs = NULL)
runs <- 0
hold <- if (mode %in% c("hold", "fork")) args[[4]]
fork <- mode == "fork"
announce <- session_run_hook(after_run = function(context, values) {
  runs <<- runs + 1
  say("run ", runs)
  if (fork) { # a child of the trainer, as parallel's workers are
    fork <<- FALSE
    child <- parallel::mcparallel(Sys.sleep(120))
    say("child ", child$pid)
  }
  if (!is.null(hold)) {
    say("holding")
    deadline <- Sys.time() + 120
    while (!file.exists(hold) && Sys.time() < deadline) Sys.sleep(0.05)
    hold <<- NULL
  }
  Sys.sleep(0.02)
}, state_dict = function() list(runs = runs), load_state_dict = function(state) NULL)
hooks <- list(hook_progress_bar(writer = function(text) NULL),
              hook_checkpoint_saver(model_dir, save_steps = 5, save_graph_def = FALSE),
              hook_history_saver(every_n_step = 1, path = file.path(model_dir, "history.csv")),
              announce)
if (mode == "defaults") hooks <- list(announce)
if (mode %in% c("train", "defaults")) {
  result <- tryCatch(train(model, input, steps = as.integer(args[[4]]), hooks = hooks),
                     interrupt = function(e) NULL)
  if (is.null(result)) say("interrupted") else say("done ", tail(result$steps, 1))
} else if (mode %in% c("hold", "fork")) {
  train(model, input, steps = 3, hooks = hooks)
} else if (mode == "fsize") {
  train(model, input, steps = 2, hooks = hooks[1])
  resource <- reticulate::import("resource")
  signal <- reticulate::import("signal")
  signal$signal(signal$SIGXFSZ, signal$SIG_IGN) # writes fail (EFBIG) instead of killing
  hard <- resource$getrlimit(resource$RLIMIT_FSIZE)[[2]]
  resource$setrlimit(resource$RLIMIT_FSIZE, reticulate::tuple(200L, hard))
  err <- tryCatch(train(model, input, steps = 20, hooks = hooks[c(1, 3, 4)]), error = function(e) e)
  resource$setrlimit(resource$RLIMIT_FSIZE, reticulate::tuple(hard, hard)) # to report
  say("message ", gsub("\n", "\\n", conditionMessage(err), fixed = TRUE))
  say("history ", paste(err$history$steps, collapse = ","))
}
