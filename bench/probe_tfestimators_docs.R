# Runs the R code of tfestimators' own documentation under library(pyhooks) and prints
# one table: per snippet, whether it runs as written, runs after a change a user would
# accept, or cannot run (and why), and the counts W / C / X.
#
#   Rscript bench/probe_tfestimators_docs.R <tfestimators checkout or git dir> [--timeout 120]
#       [--logs DIR] [--only ARTICLE]
#
# e.g. with the R library and Python of a worktree's .venv:
#   R_LIBS=$PWD/.venv/R-library RETICULATE_PYTHON=$PWD/.venv/bin/python \
#   PYHOOKS_PYTHON=$PWD/.venv/bin/python LANG=C.UTF-8 \
#   Rscript bench/probe_tfestimators_docs.R /work/.mirror/rstudio+tfestimators/repo
# (Without RETICULATE_PYTHON / PYHOOKS_PYTHON, as a user's Rscript runs, issue 28's choice of
# Python shows in the scripts that call estimator() first.)
#
# Not part of `make test` or `make bench`: it needs a copy of github.com/rstudio/tfestimators
# (a checkout, or a bare git directory of it), which CI does not have. Nothing of tfestimators
# is stored here: the snippets are read from that copy at run time. The Iris script needs
# modelr (Debian: r-cran-modelr).
#
# What counts as a snippet:
# - each R chunk of vignettes/*.Rmd: ```{r ...} chunks, except knitr's setup chunk (label
#   `setup` or include=FALSE: the reader never sees it), and ```r / ``` r blocks (two articles
#   show their code that way), except blocks of log output (first line "INFO:...");
#   chunks with eval=FALSE count (a reader runs them);
# - each example script vignettes/examples/*.R, as one snippet (its .Rmd only includes it).
# Each article (and each script) runs in one fresh R process in a fresh working directory,
# chunks in order, each chunk bounded by --timeout seconds. `library(pyhooks)` is loaded
# first (the articles assume their package is loaded), and `library(tfestimators)` /
# `library(tensorflow)` in the code become `library(pyhooks)`.
#
# This machine has no network: the documentation's downloads (read.csv() and download.file()
# of a URL, tf$contrib$learn$datasets' MNIST) and the data package nycflights13 (not in Debian)
# are served by local stand-ins of the same columns and format (LOCAL_DATA, the .probe_*
# functions in child_helpers), in every run, without editing the code; a snippet that used one
# is "as written, local data".
#
# Two runs per article: "as written", then, when something failed, with the CHANGES below. A
# snippet that fails as written and runs in the second run is "changed". A snippet that fails
# in both runs is a "fragment" when every one of its lines is part of a longer chunk of the
# same article that runs (the articles show a model_fn piece by piece, then whole); the rest
# "cannot run", and REASONS names why. Counts: W = as written (with or without local data),
# C = changed, X = fragments and cannot run.

# The local stand-ins of downloads (masking read.csv(), download.file() and library() in the
# child's global environment), listed in the output.
LOCAL_DATA <- c(
  "read.csv() of a URL: a local synthetic frame of the same columns (abalone, census)",
  "download.file() of MNIST: a local synthetic IDX file of the same format (6,000 + 1,000 images)",
  "tf$contrib$learn$datasets$load_dataset(\"mnist\"): MNIST_data/ of the working directory holds those synthetic IDX files, so it reads them without a download (as TensorFlow 1.x did when the files were there)",
  "library(nycflights13) (not in Debian): a synthetic `flights` of the same columns"
)

# CHANGES: other edits a user would accept, for one article ("group": the article's or the
# script's name). `before` adds code in front of chunk `chunk` (definitions the article takes
# for granted); `pattern` / `replacement` edit the code.
CHANGES <- list(
  list(group = "estimator_basics",
       what = "column_indicator() of a categorical column, not of the bare name \"am\" (which values it one-hots is not known when the column is made; TensorFlow >= 1.14 refuses it too)",
       pattern = "column_indicator\\(\"am\"\\)",
       replacement = "column_indicator(column_categorical_with_identity(\"am\", num_buckets = 2))"),
  list(group = "input_functions", chunk = 1, what = "define the `model` the article assumes (a linear_regressor of drat and cyl; fails under tfestimators too)",
       before = "model <- linear_regressor(feature_columns(column_numeric(\"drat\", \"cyl\")))"),
  list(group = "input_functions", chunk = 4, what = "define the train_data / test_data split the article assumes (fails under tfestimators too)",
       before = "train_data <- mtcars[1:24, ]; test_data <- mtcars[25:32, ]"),
  list(group = "tensorboard", chunk = 1, what = "define the model_fn and input the article assumes (fails under tfestimators too)",
       before = paste(
         "input <- input_fn(mtcars, features = c(\"drat\", \"cyl\"), response = \"mpg\")",
         "model_fn <- function(features, labels, mode, params, config) {",
         "  fitted <- tf$reshape(tf$layers$dense(features, 1L), list(-1L))",
         "  if (mode == \"infer\") return(estimator_spec(mode, predictions = list(mpg = fitted)))",
         "  loss <- tf$losses$mean_squared_error(labels, fitted)",
         "  step <- tf$train$GradientDescentOptimizer(0.001)$minimize(loss, global_step = tf$train$get_global_step())",
         "  estimator_spec(mode, loss = loss, train_op = step)",
         "}", sep = "\n"))
)

REASONS <- list(
  list(pattern = "could not find function \"(csv_record_spec|text_line_dataset|dataset_[a-z_]+)\"",
       reason = "tfdatasets (its datasets API) is not in Debian and not in pyhooks"),
  list(pattern = "tf\\.contrib\\.learn\\.[A-Za-z_]+ is gone",
       reason = "tf$contrib$learn (read_batch_features: a queue of tf.Example files) is gone from TensorFlow 2; pyhooks' error names the replacement"),
  list(pattern = "`parsing_spec` not equal to `expected_spec`",
       reason = "compares with a list in the order a, c, b; TensorFlow's classifier_parse_example_spec() (and pyhooks') orders features, label, weight: a, b, c (the article's order was Python 2's dict order)", doc_gap = TRUE),
  list(pattern = "The Python module pyhooks could not be loaded",
       reason = "issue 28: run without RETICULATE_PYTHON, estimator(model_fn) as the first pyhooks call lets reticulate start another Python"),
  list(pattern = "there is no package called .modelr.",
       reason = "modelr is not installed (Debian: r-cran-modelr)"),
  list(pattern = "no function to return from",
       reason = "a fragment of a model_fn: `return()` outside a function (fails in tfestimators too)", doc_gap = TRUE),
  list(pattern = "object '(features|labels|mode|params|tensor_of_predictions|age|logits|dropout|dense|pool[12](_flat)?|conv[12]|input_layer|second_hidden_layer|hidden_layer|predictions|predicted_classes|loss|onehot_labels)' not found",
       reason = "a fragment of a model_fn: uses the model_fn's arguments or locals (fails in tfestimators too)", doc_gap = TRUE),
  list(pattern = "`inputs` must be a tensor .*, got a function|Attempt to convert a value \\(<function|comparison \\(==\\) is possible only for atomic",
       reason = "a fragment of a model_fn: its `labels` / `mode` / `input_layer` are R functions outside one (fails in tfestimators too)", doc_gap = TRUE),
  list(pattern = "'\\.\\.\\.' used in an incorrect context",
       reason = "placeholder code: `...` stands for the reader's own columns", doc_gap = TRUE),
  list(pattern = "object '(model|model_fn|input|train_data|test_data|fcs|train_files|batch_size)' not found",
       reason = "uses an object the article never defines", doc_gap = TRUE)
)

`%||%` <- function(a, b) if (is.null(a)) b else a

# ---------------------------------------------------------------------------------------
# The child: runs one article's chunks in order, saving the results after each chunk.
# ---------------------------------------------------------------------------------------

child_helpers <- function() {
  # Local stand-ins for the documentation's downloads (same columns and types; fewer MNIST
  # rows). Defined in the child's global environment under .probe_* names.
  set.seed(1)
  .probe_abalone <- function(n) {
    size <- runif(n, 0.1, 0.8)
    frame <- data.frame(
      V1 = size, V2 = size * 0.8, V3 = size * 0.3, V4 = size^3 * 2, V5 = size^3 * 0.9,
      V6 = size^3 * 0.4, V7 = size^3 * 0.6)
    frame$V8 <- as.integer(pmax(1, round(3 + 15 * size + rnorm(n))))
    frame
  }
  .probe_census <- function(n) {
    pick <- function(values) sample(values, n, replace = TRUE)
    age <- sample(17:90, n, replace = TRUE)
    hours <- sample(1:99, n, replace = TRUE)
    data.frame(
      V1 = age,
      V2 = pick(c("Self-emp-not-inc", "Private", "State-gov", "Federal-gov", "Local-gov", "?")),
      V3 = sample(20000:900000, n, replace = TRUE),
      V4 = pick(c("Bachelors", "HS-grad", "11th", "Masters", "Some-college", "Doctorate")),
      V5 = sample(1:16, n, replace = TRUE),
      V6 = pick(c("Married-civ-spouse", "Divorced", "Never-married", "Widowed")),
      V7 = pick(c("Tech-support", "Craft-repair", "Sales", "Exec-managerial", "?")),
      V8 = pick(c("Husband", "Not-in-family", "Wife", "Own-child", "Unmarried")),
      V9 = pick(c("White", "Black", "Asian-Pac-Islander", "Other")),
      V10 = pick(c("Female", "Male")),
      V11 = ifelse(runif(n) < 0.1, sample(1:99999, n, replace = TRUE), 0L),
      V12 = ifelse(runif(n) < 0.05, sample(1:4356, n, replace = TRUE), 0L),
      V13 = hours,
      V14 = pick(c("United-States", "Mexico", "India", "Germany", "?")),
      V15 = ifelse(age + hours / 2 + rnorm(n, 0, 10) > 70, ">50K", "<=50K"),
      stringsAsFactors = FALSE)
  }
  .probe_read_csv <- function(file, ...) {
    switch(basename(file),
      abalone_train.csv = .probe_abalone(3320),
      abalone_test.csv = .probe_abalone(850),
      abalone_predict.csv = .probe_abalone(7),
      adult.data = .probe_census(32560),
      adult.test = .probe_census(16280),
      stop("the probe has no local stand-in for ", file))
  }
  .probe_digits <- function(n) {
    # the same n gives the same digits: a split's images and labels files agree
    old_seed <- .Random.seed
    on.exit(assign(".Random.seed", old_seed, envir = globalenv()))
    set.seed(n)
    labels <- sample(0:9, n, replace = TRUE)
    # each digit lights its own band of rows of the 28 x 28 image, plus noise
    pixels <- matrix(runif(n * 784) * 0.3, n, 784)
    for (d in 0:9) {
      band <- as.vector(outer(1:28, (2 * d + 3):(2 * d + 5), function(x, y) (y - 1) * 28 + x))
      pixels[labels == d, band] <- pixels[labels == d, band] + 0.7
    }
    list(images = pixels, labels = labels)
  }
  .probe_download_file <- function(url, destfile, ...) {
    n <- if (grepl("^train", basename(url))) 6000L else 1000L
    digits <- .probe_digits(n)
    conn <- gzfile(destfile, open = "wb")
    on.exit(close(conn))
    if (grepl("images", basename(url))) {
      writeBin(as.raw(c(0, 0, 8, 3)), conn)
      writeBin(c(n, 28L, 28L), conn, endian = "big")
      writeBin(as.raw(round(255 * t(digits$images) / 1.3)), conn)
    } else {
      writeBin(as.raw(c(0, 0, 8, 1)), conn)
      writeBin(n, conn, endian = "big")
      writeBin(as.raw(digits$labels), conn)
    }
    invisible(0L)
  }
  # MNIST_data/ as tf$contrib$learn$datasets$load_dataset("mnist") downloaded it: the files
  # are there, so it reads them (TensorFlow 1.x did the same)
  .probe_mnist_data <- function(dir = "MNIST_data") {
    dir.create(dir, showWarnings = FALSE)
    for (name in c("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                   "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")) {
      .probe_download_file(name, file.path(dir, name))
    }
  }
  .probe_flights <- function() {
    n <- 1000L
    minutes <- function() sample(0:2359, n, replace = TRUE)
    frame <- data.frame(
      year = 2013L, month = sample(1:12, n, TRUE), day = sample(1:28, n, TRUE),
      dep_time = minutes(), sched_dep_time = minutes(), dep_delay = rnorm(n, 10, 30),
      arr_time = minutes(), sched_arr_time = minutes(), arr_delay = rnorm(n, 5, 40),
      carrier = sample(c("UA", "AA", "B6", "DL"), n, TRUE), flight = sample(1:6000, n, TRUE),
      tailnum = sprintf("N%03dUA", sample(1:999, n, TRUE)),
      origin = sample(c("EWR", "LGA", "JFK"), n, TRUE),
      dest = sample(c("IAH", "MIA", "BQN", "ATL"), n, TRUE), air_time = rnorm(n, 150, 90),
      distance = runif(n, 80, 4983), hour = sample(5:23, n, TRUE), minute = sample(0:59, n, TRUE),
      stringsAsFactors = FALSE)
    frame$time_hour <- as.POSIXct("2013-01-01", tz = "UTC") + sample(0:(365 * 86400), n, TRUE)
    assign("flights", frame, envir = globalenv())
    invisible(frame)
  }
  for (name in ls(environment(), all.names = TRUE, pattern = "^\\.probe_")) {
    assign(name, get(name), envir = globalenv())
  }
  # The documentation's downloads, served locally (no network here): the code is run as
  # written, these mask base R's functions in the global environment where it runs.
  # `.probe_served` records that a chunk used one.
  served <- function() assign(".probe_served", TRUE, envir = globalenv())
  assign("read.csv", function(file, ...) {
    if (is.character(file) && grepl("^https?://", file)) {
      served()
      return(.probe_read_csv(file, ...))
    }
    utils::read.csv(file, ...)
  }, envir = globalenv())
  assign("download.file", function(url, destfile, ...) {
    served()
    .probe_download_file(url, destfile, ...)
  }, envir = globalenv())
  assign("library", function(package, ...) {
    name <- if (is.character(substitute(package))) package else deparse(substitute(package))
    if (identical(name, "nycflights13")) {
      served()
      return(invisible(.probe_flights()))
    }
    base::library(name, character.only = TRUE, ...)
  }, envir = globalenv())
}

apply_substitutions <- function(code, pass, group, chunk) {
  code <- gsub("library\\((tfestimators|tensorflow)\\)", "library(pyhooks)", code)
  applied <- character()
  if (pass == "substituted") {
    for (s in CHANGES) {
      if (!group %in% s$group) next
      if (!is.null(s$before) && identical(as.integer(s$chunk), as.integer(chunk))) {
        code <- paste(s$before, code, sep = "\n")
        applied <- c(applied, s$what)
      } else if (!is.null(s$pattern) && grepl(s$pattern, code, perl = TRUE)) {
        code <- gsub(s$pattern, s$replacement, code, perl = TRUE)
        applied <- c(applied, s$what)
      }
    }
  }
  list(code = code, applied = applied)
}

first_line <- function(text) {
  text <- trimws(paste(text, collapse = "\n"))
  strsplit(text, "\n", fixed = TRUE)[[1]][1] %||% ""
}

run_child <- function(chunk_file, result_file, pass, timeout, group) {
  options(warn = 1)
  suppressMessages(library(pyhooks))
  child_helpers()
  chunks <- readRDS(chunk_file)
  mnist_reader <- "tf\\$contrib\\$learn\\$datasets"
  if (any(grepl(mnist_reader, unlist(chunks)))) .probe_mnist_data()
  results <- vector("list", length(chunks))
  for (i in seq_along(chunks)) {
    cat(sprintf("\n######## chunk %d (%s pass)\n", i, pass))
    prepared <- apply_substitutions(chunks[[i]], pass, group, i)
    started <- Sys.time()
    assign(".probe_served", grepl(mnist_reader, prepared$code), envir = globalenv())
    outcome <- tryCatch({
      exprs <- parse(text = prepared$code, keep.source = FALSE)
      setTimeLimit(elapsed = timeout, transient = TRUE)
      for (expr in exprs) {
        shown <- withVisible(eval(expr, globalenv()))
        if (shown$visible) print(shown$value)
      }
      setTimeLimit(elapsed = Inf)
      list(status = "ok", message = "")
    }, error = function(e) {
      setTimeLimit(elapsed = Inf)
      cat("ERROR: ", conditionMessage(e), "\n", sep = "")
      list(status = "error", message = first_line(conditionMessage(e)))
    })
    outcome$applied <- prepared$applied
    outcome$served <- isTRUE(get(".probe_served", envir = globalenv()))
    outcome$seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
    results[[i]] <- outcome
    saveRDS(results, result_file)
  }
  invisible(NULL)
}

# ---------------------------------------------------------------------------------------
# The driver: finds the snippets, runs each article twice, classifies, prints the table.
# ---------------------------------------------------------------------------------------

# Splits an R Markdown file into its R snippets (see the header for the rules).
rmd_chunks <- function(lines) {
  chunks <- list()
  i <- 1
  while (i <= length(lines)) {
    open <- regmatches(lines[i], regexec("^\\s*(`{3,})\\s*(.*)$", lines[i]))[[1]]
    if (!length(open)) {
      i <- i + 1
      next
    }
    fence <- nchar(open[2])
    info <- trimws(open[3])
    close <- i + 1
    while (close <= length(lines) &&
           !(grepl("^\\s*`{3,}\\s*$", lines[close]) &&
             nchar(trimws(lines[close])) >= fence)) {
      close <- close + 1
    }
    body <- if (close > i + 1) lines[(i + 1):(close - 1)] else character()
    braced <- grepl("^\\{r([ ,}]|$)", info)
    plain <- identical(info, "r")
    header <- sub("^\\{r[ ,]*", "", sub("\\}$", "", info))
    setup <- braced && (grepl("^setup\\b", header) || grepl("include\\s*=\\s*FALSE", header))
    log_output <- plain && grepl("^INFO:", trimws(body[nzchar(trimws(body))][1] %||% ""))
    if ((braced && !setup) || (plain && !log_output)) {
      chunks[[length(chunks) + 1]] <- list(
        line = i, code = paste(body, collapse = "\n"),
        eval_false = braced && grepl("eval\\s*=\\s*FALSE", header))
    }
    i <- close + 1
  }
  chunks
}

find_snippets <- function(reader) {
  files <- reader$files()
  articles <- sort(grep("^vignettes/[^/]+\\.Rmd$", files, value = TRUE))
  scripts <- sort(grep("^vignettes/examples/[^/]+\\.R$", files, value = TRUE))
  groups <- list()
  for (file in articles) {
    chunks <- rmd_chunks(reader$read(file))
    if (length(chunks)) groups[[file]] <- chunks
  }
  for (file in scripts) {
    groups[[file]] <- list(list(line = 1, code = paste(reader$read(file), collapse = "\n"),
                                eval_false = FALSE))
  }
  groups
}

run_article <- function(chunks, group, pass, timeout, log_file) {
  work <- tempfile("tfestimators-doc-")
  dir.create(work)
  on.exit(unlink(work, recursive = TRUE))
  chunk_file <- file.path(work, "chunks.rds")
  result_file <- file.path(work, "results.rds")
  saveRDS(lapply(chunks, `[[`, "code"), chunk_file)
  probe <- normalizePath(PROBE_FILE)
  old <- setwd(work)
  on.exit(setwd(old), add = TRUE, after = FALSE)
  limit <- timeout * length(chunks) + 60
  status <- suppressWarnings(system2(
    file.path(R.home("bin"), "Rscript"),
    c(shQuote(probe), "--child", shQuote(chunk_file), shQuote(result_file), pass, timeout,
      shQuote(group)),
    stdout = log_file, stderr = log_file, timeout = limit))
  results <- if (file.exists(result_file)) readRDS(result_file) else list()
  for (i in seq_along(chunks)) {
    if (i > length(results) || is.null(results[[i]])) {
      why <- if (identical(status, 124L)) sprintf("stopped: the article's process ran over %d s", limit)
             else sprintf("not reached: the article's process ended (status %s)", status)
      results[[i]] <- list(status = "error", message = why, applied = character(), seconds = NA)
    }
  }
  results
}

# A snippet's code lines without comments and spaces.
squash <- function(code) {
  lines <- gsub("\\s+", "", sub("#.*$", "", strsplit(code, "\n", fixed = TRUE)[[1]]))
  lines[nzchar(lines)]
}

# The chunk (of those that ran) that contains every line of chunk i, or NA: chunk i is then
# a piece of a longer chunk, shown on its own to explain it.
part_of <- function(i, chunks, ran) {
  mine <- squash(chunks[[i]]$code)
  for (j in seq_along(chunks)) {
    if (j == i || !ran[[j]]) next
    whole <- paste(squash(chunks[[j]]$code), collapse = "")
    if (nchar(whole) > sum(nchar(mine)) &&
        all(vapply(mine, grepl, logical(1), x = whole, fixed = TRUE))) return(j)
  }
  NA
}

reason_for <- function(message) {
  for (r in REASONS) if (grepl(r$pattern, message, perl = TRUE)) return(r)
  list()
}

main <- function(args) {
  if (!length(args) || args[[1]] %in% c("-h", "--help")) {
    cat("usage: Rscript bench/probe_tfestimators_docs.R <tfestimators checkout or git dir>",
        "[--timeout SECONDS] [--logs DIR] [--only ARTICLE]\n")
    quit(status = if (length(args)) 0 else 2)
  }
  option <- function(name, default) {
    at <- match(name, args)
    if (is.na(at)) default else args[[at + 1]]
  }
  timeout <- as.integer(option("--timeout", "120"))
  logs <- option("--logs", tempfile("tfestimators-doc-logs-"))
  only <- option("--only", "")
  dir.create(logs, showWarnings = FALSE, recursive = TRUE)
  groups <- find_snippets(source_reader(args[[1]]))
  if (nzchar(only)) groups <- groups[grepl(only, names(groups), fixed = TRUE)]
  # Absolute model directories the documentation writes to: removed after the run unless
  # they were there before (a stale checkpoint would change what the next run restores).
  doc_dirs <- c("/tmp/test", "/tmp/mnist_convnet_model", "/tmp/iris-custom-decay-cnn-model")
  doc_dirs <- doc_dirs[!file.exists(doc_dirs)]
  on.exit(unlink(doc_dirs, recursive = TRUE))

  rows <- list()
  for (file in names(groups)) {
    chunks <- groups[[file]]
    name <- sub("\\.(Rmd|R)$", "", sub("^vignettes/", "", file))
    log <- file.path(logs, paste0(gsub("/", "_", name), ".log"))
    unlink(doc_dirs, recursive = TRUE)
    written <- run_article(chunks, name, "written", timeout, log)
    substituted <- NULL
    if (any(vapply(written, function(r) r$status != "ok", logical(1)))) {
      unlink(doc_dirs, recursive = TRUE)
      substituted <- run_article(chunks, name, "substituted", timeout,
                                 sub("\\.log$", ".substituted.log", log))
    }
    ran <- vapply(seq_along(chunks), function(i) {
      written[[i]]$status == "ok" || identical(substituted[[i]]$status, "ok")
    }, logical(1))
    applied_so_far <- character()
    for (i in seq_along(chunks)) {
      w <- written[[i]]
      s <- substituted[[i]]
      applied_so_far <- unique(c(applied_so_far, s$applied))
      doc_gap <- FALSE
      if (w$status == "ok") {
        category <- if (isTRUE(w$served)) "written, local data" else "as written"
        detail <- if (isTRUE(w$served)) "its download served from a local stand-in" else ""
      } else if (!is.null(s) && s$status == "ok" && length(applied_so_far)) {
        category <- "changed"
        detail <- if (length(s$applied)) paste(s$applied, collapse = "; ")
                  else "runs once the chunks before it run (their changes above)"
      } else if (!is.na(whole <- part_of(i, chunks, ran))) {
        category <- "fragment"
        doc_gap <- TRUE
        detail <- sprintf("not runnable alone (nor under tfestimators): every line is part of #%d (%s)",
                          whole, if (written[[whole]]$status == "ok") "as written" else "after the changes")
      } else {
        category <- "cannot run"
        message <- if (!is.null(s)) s$message else w$message
        why <- reason_for(message)
        doc_gap <- isTRUE(why$doc_gap)
        detail <- paste0(if (length(why)) paste0(why$reason, ": ") else "", substr(message, 1, 110))
      }
      rows[[length(rows) + 1]] <- data.frame(
        snippet = if (length(chunks) == 1 && grepl("\\.R$", file)) name
                  else sprintf("%s #%d (line %d)", name, i, chunks[[i]]$line),
        eval_false = chunks[[i]]$eval_false, written = w$status,
        seconds = round(w$seconds %||% NA, 1), category = category, detail = detail,
        doc_gap = doc_gap, stringsAsFactors = FALSE)
    }
    cat(sprintf("%-40s %d snippet(s) done\n", name, length(chunks)), file = stderr())
  }
  result <- do.call(rbind, rows)

  cat(sprintf("\ntfestimators' documented R code under library(pyhooks): %d snippets\n", nrow(result)))
  cat(sprintf("(logs of each run in %s)\n\n", logs))
  width <- max(nchar(result$snippet))
  for (k in seq_len(nrow(result))) {
    cat(sprintf("%-*s  %-16s %s\n", width, result$snippet[k], result$category[k],
                result$detail[k]))
  }
  cat("\nLocal stand-ins of the downloads (no network here), in every run:\n")
  for (d in LOCAL_DATA) cat("  - ", d, "\n", sep = "")
  cat("\nCounts:\n")
  levels <- c("as written", "written, local data", "changed", "fragment", "cannot run")
  counts <- table(factor(result$category, levels = levels))
  for (l in levels) cat(sprintf("  %-20s %3d\n", l, counts[[l]]))
  cat(sprintf("  %-20s %3d\n", "total", nrow(result)))
  x <- result$category %in% c("fragment", "cannot run")
  cat(sprintf("\nW (as written) %d, C (changed) %d, X (cannot run) %d, of %d.\n",
              counts[["as written"]] + counts[["written, local data"]], counts[["changed"]],
              sum(x), nrow(result)))
  cat(sprintf("  X: %d fail under tfestimators too (fragments of a longer chunk, code the article leaves incomplete), %d need what TensorFlow 2.21, Debian or pyhooks lack.\n",
              sum(x & result$doc_gap), sum(x & !result$doc_gap)))
  saveRDS(result, file.path(logs, "table.rds"))
  invisible(result)
}

PROBE_FILE <- local({
  file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(file)) file[[1]] else "bench/probe_tfestimators_docs.R"
})
source(file.path(dirname(PROBE_FILE), "tfestimators_source.R")) # source_reader()

args <- commandArgs(trailingOnly = TRUE)
if (length(args) && args[[1]] == "--child") {
  run_child(args[[2]], args[[3]], args[[4]], as.numeric(args[[5]]), args[[6]])
} else {
  main(args)
}
