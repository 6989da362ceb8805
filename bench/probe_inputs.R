# The R worker of bench/probe_inputs.py: runs the cases of a JSON-lines file, one
# result line each (see probe_inputs.py for the protocol and the classes).
# Run by probe_inputs.py only: Rscript bench/probe_inputs.R <cases.jsonl>
suppressMessages(library(pyhooks))
options(warn = -1, pyhooks.progress = FALSE)

r_value <- function(label) {
  switch(label,
    "NULL" = NULL, "NA" = NA, NA_int = NA_integer_, NA_chr = NA_character_, "NaN" = NaN,
    "Inf" = Inf, NegInf = -Inf, neg = -1, zero = 0, huge = 1e10, frac = 2.5, "TRUE" = TRUE,
    one = 1, str = "a", empty = "", len0 = numeric(0), len2 = c(1, 2),
    strs2 = c("a", "b"), list = list(a = 1), fn = function(...) 1, env = new.env(),
    df = data.frame(a = 1), file = file(tempfile()),
    stop("unknown label ", label)
  )
}

root <- tempfile("pyhooks-probe-")
dir.create(root)
tmp <- function() {
  path <- tempfile(tmpdir = root)
  dir.create(path)
  path
}
DATA <- data.frame(x = (0:15) / 4, y = (0:15 %% 5) * 1.5, c = 0:15 %% 3,
                   s = rep(c("a", "b"), 8), b = 0:15 %% 2)
VOCAB <- file.path(root, "vocab.txt")
writeLines(c("a", "b"), VOCAB)
NUM <- column_numeric("x")
CAT <- column_categorical_with_identity("c", num_buckets = 3)
INP <- input_fn(DATA, features = "x", response = "y", batch_size = 4)
INP_ALL <- input_fn(DATA, features = c("x", "c", "s"), response = "y", batch_size = 4)
INP_CLS <- input_fn(DATA, features = "x", response = "b", batch_size = 4)
QUIET <- reticulate::import("io")$StringIO()
EST <- linear_regressor(NUM, model_dir = tmp())
invisible(train(EST, INP, steps = 1))
LOSS <- "global_step:0"
RECORD <- reticulate::py_run_string("
import tensorflow as tf
RECORD = tf.train.Example(features=tf.train.Features(feature={
    'x': tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])),
    'y': tf.train.Feature(float_list=tf.train.FloatList(value=[1.5])),
    'b': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))})).SerializeToString()
", convert = FALSE)$RECORD

names_it <- function(text, arg, label) {
  grepl(paste0("(?<![\\w.])", arg, "(?!\\w)"), text, perl = TRUE) ||
    (label %in% c("str", "strs2") && grepl("\"a\"|'a'", text))
}
classify <- function(error, arg, label, named) {
  text <- paste(conditionMessage(error), collapse = "\n")
  lines <- length(strsplit(text, "\n", fixed = TRUE)[[1]])
  list(if (names_it(text, arg, label) && lines <= 12) named else "obscure", text)
}

run_case <- function(case) {
  env <- environment()
  made <- tryCatch({
    base <- eval(parse(text = case$base))
    drop <- unlist(case$drop)
    if (length(drop) && !is.null(names(base))) base <- base[!(names(base) %in% drop)]
    base[case$arg] <- list(r_value(case$label))
    fn <- getExportedValue("pyhooks", case$fun)
    do.call(fn, base)
  }, error = function(e) e)
  if (inherits(made, "error")) return(classify(made, case$arg, case$label, "clear"))
  if (!nzchar(case$then)) return(list("silent", paste(format(made), collapse = " ")))
  ran <- tryCatch(eval(parse(text = case$then), list(made = made)), error = function(e) e)
  if (inherits(ran, "error")) return(classify(ran, case$arg, case$label, "at train()"))
  list("silent", "")
}

args <- commandArgs(trailingOnly = TRUE)
cases <- lapply(readLines(args[[1]]), jsonlite::fromJSON)
cat("@@READY\n")
for (case in cases) {
  cat("\n@@START", case$id, "\n")
  flush(stdout())
  start <- Sys.time()
  result <- tryCatch(run_case(case), error = function(e) list("obscure", conditionMessage(e)))
  seconds <- round(as.numeric(Sys.time() - start, units = "secs"), 2)
  cat("\n@@RESULT", jsonlite::toJSON(list(case$id, result[[1]], substr(result[[2]], 1, 2000),
                                         seconds), auto_unbox = TRUE), "\n")
  flush(stdout())
}
