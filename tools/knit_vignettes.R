#!/usr/bin/env Rscript
# Knits every vignettes/*.Rmd (every chunk evaluated) and checks expected output.
# Each is knitted as a user would, outside make: in a fresh R process without make's variables
# (no RETICULATE_PYTHON, PYHOOKS_PYTHON, TF_CPP_MIN_LOG_LEVEL), from a copy in a directory with
# no .venv above it, so library(pyhooks) finds its Python by itself (R_LIBS is kept: it is
# where the package is installed).
# Usage: Rscript tools/knit_vignettes.R [--html]   (--html: also render HTML for reading)
# Fails (exit status 1) if a chunk errors or an expected output is missing.

args <- commandArgs(trailingOnly = TRUE)
html <- "--html" %in% args
root <- normalizePath(".")
vignette_dir <- file.path(root, "vignettes")
out_dir <- Sys.getenv("PYHOOKS_VIGNETTE_OUT", file.path(tempdir(), "pyhooks-vignettes"))
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

# Regular expressions that must match the knitted Markdown, per vignette.
expectations <- list(
  run_hooks = c(
    "Training 2/2 \\[=+\\] - ETA: 0s - loss: [0-9]+\\.[0-9]{2}",
    "mean_losses +total_losses +steps",
    "\n[#> ]*1 +[0-9.]+ +[0-9.]+ +2\n",
    "\n[#> ]*2 +[0-9.]+ +[0-9.]+ +4\n",
    "total = 8 x mean: TRUE",
    paste0("Running step: ", 1:4, "\""),
    "mean_losses_history holds 4 values between 100 and 2000: TRUE"
  ),
  getting_started = c("mean_losses +total_losses +steps", "average_loss", "predicted"),
  custom_hooks = c("Running step", "after_error", "stop"),
  python_guide = c("StopAtStepHook", "Training [0-9]+/[0-9]+ \\[=+\\]",
                   "test accuracy: (0\\.[89][0-9]*|1\\.000) after 400 steps",
                   "seed \\[[^]]*\\]: kind 2 \\([0-9]+%\\)"),
  distributed = c("worker 0 \\(chief: True\\) stopped after step 30",
                  "worker 1 \\(chief: False\\) stopped after step 30",
                  "Training +30/100 \\[=+>? *\\]", "tmp_worker_1/history.csv:\n[#> ]*mean_losses,total_losses,steps",
                  "the chief is done", "worker 0 stopped after step 100 writing into [^ ]*model[^ /]*\\s",
                  "worker 1 stopped after step 100 writing into [^ ]*/tmp_worker_1\\s",
                  "\"model.ckpt-100.data-00000-of-00001\"",
                  "-- Ray worker 0:\n[#> ]*the chief is done\n[#> ]*worker 0 stopped after step 100",
                  "-- Ray worker 1:\n[#> ]*worker 1 stopped after step 100 writing into [^ ]*/tmp_worker_1\\s",
                  "'model.ckpt-100.index'\\]",
                  "worker 0 stopped after step 50, checkpoint: [^ ]*/model.ckpt-50\n",
                  "worker 1 stopped after step 50, checkpoint: None\n"),
  coming_from_tfestimators = c(
    "features = c\\(\"drat\", \"cyl\"\\), response = \"mpg\"",
    "features = c\\(\"Petal.Length\", \"Petal.Width\"\\), response = \"Species\"",
    "Training 4/4 \\[=+\\]",
    "mean_losses +total_losses +steps",
    "loss +rmse +global_step",
    "\n[#> ]*\\[1\\]( +[0-9.-]+){6}\n",
    "accuracy +auc",
    "model.ckpt-4",
    "dnn/logits/bias",
    "event files: [1-9][0-9]* while training, [1-9][0-9]* after evaluate\\(\\)",
    "tensorboard --logdir",
    "\\$global_step\n[#> ]*\\[1\\] 4\n",
    "\"saved_model.pb\" +\"variables\"",
    "setosa +versicolor +virginica",
    "tf.contrib.learn.read_batch_features is gone",
    "went with `tf.estimator`"
  )
)

# Knits `rmd` into `md` in a fresh Rscript with a user's environment; NULL, or why it failed.
knit_outside_make <- function(rmd, md) {
  work <- tempfile("knit-")
  dir.create(work)
  on.exit(unlink(work, recursive = TRUE))
  file.copy(rmd, work)
  code <- sprintf(
    "rmarkdown::render(%s, output_format = rmarkdown::md_document(variant = 'gfm'), output_file = %s, output_dir = %s, intermediates_dir = %s, quiet = TRUE)",
    deparse(file.path(work, basename(rmd))), deparse(basename(md)), deparse(dirname(md)),
    deparse(work))
  keep <- c("PATH", "HOME", "LANG", "R_LIBS", "TMPDIR")
  values <- Sys.getenv(keep, unset = NA)
  env <- paste0(keep, "=", values)[!is.na(values)]
  log <- file.path(work, "knit.log")
  status <- system2("env", c("-i", shQuote(env), file.path(R.home("bin"), "Rscript"), "-e",
                             shQuote(code)), stdout = log, stderr = log)
  if (status == 0 && file.exists(md)) return(NULL)
  paste(c(sprintf("exit status %d", status), tail(readLines(log, warn = FALSE), 30)),
        collapse = "\n")
}

failures <- character()
for (rmd in sort(Sys.glob(file.path(vignette_dir, "*.Rmd")))) {
  name <- tools::file_path_sans_ext(basename(rmd))
  cat(sprintf("-- knitting %s.Rmd\n", name))
  md <- file.path(out_dir, paste0(name, ".md"))
  started <- Sys.time()
  result <- knit_outside_make(rmd, md)
  if (!is.null(result)) {
    failures <- c(failures, sprintf("%s: a chunk failed: %s", name, result))
    next
  }
  text <- paste(readLines(md, warn = FALSE), collapse = "\n")
  for (pattern in expectations[[name]]) {
    if (!grepl(pattern, text, perl = TRUE)) {
      failures <- c(failures, sprintf("%s: expected output missing: /%s/", name, pattern))
    }
  }
  if (grepl("\r|\b", text)) {
    failures <- c(failures, sprintf("%s: raw \\r or \\b in the output", name))
  }
  cat(sprintf("   ok (%.1f s)\n", as.numeric(difftime(Sys.time(), started, units = "secs"))))
  if (html) {
    rmarkdown::render(rmd, output_format = rmarkdown::html_document(), output_dir = vignette_dir,
                      intermediates_dir = out_dir, quiet = TRUE, envir = new.env())
    cat(sprintf("   rendered vignettes/%s.html\n", name))
  }
}
if (length(failures)) {
  cat("\nVignette failures:\n", paste0(" - ", failures, "\n"), sep = "")
  quit(status = 1)
}
n <- length(Sys.glob(file.path(vignette_dir, "*.Rmd")))
cat(sprintf("vignettes: %d passed, 0 failed\n", n))
