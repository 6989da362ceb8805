# train() under run_config(train_distribute = ...) with two real Rscript workers.

test_that("two Rscript workers train one model; the chief keeps the checkpoints", {
  skip_if_no_pyhooks()
  skip_on_os("windows")
  socket <- reticulate::import("socket")
  ports <- vapply(1:2, function(i) {
    s <- socket$socket()
    s$bind(reticulate::tuple("127.0.0.1", 0L))
    port <- s$getsockname()[[2]]
    s$close()
    port
  }, integer(1))
  cluster <- sprintf('{"worker": ["127.0.0.1:%d", "127.0.0.1:%d"]}', ports[[1]], ports[[2]])
  dir <- tempfile("mwms")
  dir.create(dir)
  # raw = TRUE: each worker's OUT lines, errors included; a worker writing
  # model_dir/hanging is killed (SIGKILL)
  run_workers <- function(model_dir, ..., raw = FALSE) {
    outs <- file.path(model_dir, c("out0", "out1"))
    pids <- file.path(model_dir, c("pid0", "pid1"))
    for (i in 0:1) {
      env <- sprintf("R_LIBS=%s RETICULATE_PYTHON=%s TF_CPP_MIN_LOG_LEVEL=3 TF_CONFIG=%s",
                     shQuote(paste(.libPaths(), collapse = ":")),
                     shQuote(reticulate::py_config()$python),
                     shQuote(sprintf('{"cluster": %s, "task": {"type": "worker", "index": %d}}',
                                     cluster, i)))
      command <- sprintf("echo $$ > %s; exec env %s %s --vanilla %s %s",
                         shQuote(pids[[i + 1]]), env,
                         shQuote(file.path(R.home("bin"), "Rscript")),
                         shQuote(test_path("distributed-worker.R")),
                         paste(shQuote(c(model_dir, outs[[i + 1]], ...)), collapse = " "))
      system2("setsid", c("bash", "-c", shQuote(command)), stdout = file.path(model_dir, "so"),
              stderr = file.path(model_dir, paste0("log", i)), wait = FALSE)
    }
    on.exit(for (pid in pids) { # kill what is left (after a failure or a time-out)
      if (file.exists(pid) && length(readLines(pid)) > 0) {
        tools::pskill(as.integer(readLines(pid)), tools::SIGKILL)
      }
    })
    deadline <- Sys.time() + 150
    while (!all(file.exists(outs)) && Sys.time() < deadline) {
      if (file.exists(file.path(model_dir, "hanging")) && !file.exists(outs[[2]])) {
        tools::pskill(as.integer(readLines(pids[[2]])), tools::SIGKILL)
        writeLines("killed", outs[[2]])
      }
      Sys.sleep(0.3)
    }
    logs <- vapply(file.path(model_dir, c("log0", "log1")),
                   function(f) paste(tail(readLines(f, warn = FALSE), 20), collapse = "\n"), "")
    if (!all(file.exists(outs))) stop("the workers did not finish in 150 s:\n", logs)
    if (raw) return(lapply(outs, readLines))
    lapply(outs, function(out) {
      lines <- readLines(out)
      if (startsWith(lines[[1]], "error")) stop(out, ": ", lines[[1]], "\n", logs)
      stats::setNames(sub("^[a-z_]+ ", "", lines), sub(" .*", "", lines))
    })
  }
  reports <- run_workers(dir)
  expect_equal(reports[[1]][["steps"]], "2,4,6,8")
  expect_equal(reports[[2]][["steps"]], "2,4,6,8")
  expect_equal(reports[[1]][["weights"]], reports[[2]][["weights"]]) # one model
  expect_equal(reports[[1]][["checkpoint"]], "model.ckpt-8")
  expect_equal(reports[[2]][["checkpoint"]], "none")
  expect_equal(c(reports[[1]][["chief_runs"]], reports[[2]][["chief_runs"]]), c("8", "0"))
  expect_equal(reports[[2]][["model_dir"]], file.path(normalizePath(dir), "tmp_worker_1"))
  expect_equal(nrow(utils::read.csv(file.path(dir, "history.csv"))), 4)
  expect_equal(nrow(utils::read.csv(file.path(dir, "tmp_worker_1", "history.csv"))), 4)
  # a stop asked on worker 1 from step 3 on ends train() on both after the same step: the
  # next agreement's (run_config(agree_every_n_steps = "auto"))
  again <- tempfile("mwms")
  dir.create(again)
  reports <- run_workers(again, "3")
  expect_equal(reports[[1]][["steps"]], reports[[2]][["steps"]])
  last <- as.integer(utils::tail(strsplit(reports[[1]][["steps"]], ",")[[1]], 1))
  expect_true(last >= 3 && last <= 8)
  expect_equal(reports[[1]][["checkpoint"]], paste0("model.ckpt-", last))
  # input_fn() refusing worker 1's data: the chief's error names worker 1, the phase and why
  bad <- tempfile("mwms")
  dir.create(bad)
  outs <- run_workers(bad, "NA", "NA", "bad_input", raw = TRUE)
  expect_match(outs[[2]][[1]], '^error `features`: no column "z" in `data`')
  expect_match(outs[[1]][[1]], paste0("^error worker 1 failed building the input ",
                                      '\\(input_fn\\(\\)\\): `features`: no column "z" in `data`'))
  expect_no_match(outs[[1]][[1]], "could not tell|most recent call last|File \"")
  # an infinite loss on worker 1: both fail at step 3, the error names worker 1
  inf <- tempfile("mwms")
  dir.create(inf)
  outs <- run_workers(inf, "NA", "NA", "inf", raw = TRUE)
  for (out in outs) {
    expect_match(out[[1]], "^error Model diverged with loss = Inf at step 3")
    expect_match(out[[1]], "the loss was not finite in the batch of worker 1")
    expect_no_match(out[[1]], "could not tell")
  }
  # worker 1 killed after its step 3: the chief's error names it, without Python's frames
  killed <- tempfile("mwms")
  dir.create(killed)
  outs <- run_workers(killed, "NA", "NA", "hang", raw = TRUE)
  expect_equal(outs[[2]], "killed")
  expect_match(outs[[1]][[1]], "^error .*task:1")
  expect_no_match(outs[[1]][[1]], "most recent call last|File \"|\\[\\[\\{\\{node")
})

test_that("run_config() refuses a train_distribute that is not a strategy", {
  skip_if_no_pyhooks()
  expect_error(run_config(train_distribute = "mirrored"),
               "`train_distribute` must be a tf.distribute strategy")
})
