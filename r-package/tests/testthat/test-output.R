test_that("the progress mode follows the option, then CI / knitr / testthat", {
  with_opts(list(pyhooks.progress = "dynamic"), expect_identical(pyhooks:::progress_mode(), "dynamic"))
  with_opts(list(pyhooks.progress = "plain"), expect_identical(pyhooks:::progress_mode(), "plain"))
  with_opts(list(pyhooks.progress = NULL, cli.dynamic = TRUE), {
    with_env(c(CI = "true"), expect_identical(pyhooks:::progress_mode(), "plain"))
    with_env(c(CI = "", TESTTHAT = "true"), expect_identical(pyhooks:::progress_mode(), "plain"))
    with_env(c(CI = "", TESTTHAT = "false"), {
      with_opts(list(knitr.in.progress = TRUE), expect_identical(pyhooks:::progress_mode(), "plain"))
    })
  })
})

test_that("otherwise a dynamic console gets dynamic output, others plain lines", {
  with_opts(list(pyhooks.progress = NULL, knitr.in.progress = NULL), {
    with_env(c(CI = "", TESTTHAT = "false"), {
      with_opts(list(cli.dynamic = FALSE), expect_identical(pyhooks:::progress_mode(), "plain"))
      with_opts(list(cli.dynamic = TRUE), expect_identical(pyhooks:::progress_mode(), "dynamic"))
    })
  })
})

test_that("a bad pyhooks.progress option warns and is ignored", {
  with_opts(list(pyhooks.progress = "fancy"), {
    expect_warning(mode <- pyhooks:::progress_mode(), "must be \"dynamic\" or \"plain\"")
  })
  expect_identical(mode, "plain")
})

test_that("the writers write through R", {
  expect_message(pyhooks:::progress_writer("Training 1/2\n"), "Training 1/2")
  expect_silent(capture_messages(out <- capture.output(pyhooks:::progress_writer("x\n"))))
  expect_identical(out, character())
  expect_message(pyhooks:::log_writer("INFO:pyhooks:loss = 1"), "loss = 1")
})

test_that("capture.output(train()) holds only what the user's hook printed", {
  skip_if_no_pyhooks()
  hook <- session_run_hook(after_run = function(context, values) cat("my hook\n"))
  messages <- capture_messages(out <- capture.output(
    train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL), steps = 3,
          hooks = list(hook, hook_logging_tensor(list(step = "global_step:0"), every_n_iter = 1)))
  ))
  expect_identical(out, rep("my hook", 3))
  text <- paste(messages, collapse = "")
  expect_match(text, "Training 3/3 \\[=+\\]")
  expect_match(text, "step = 2")
})

test_that("under Rscript the progress bar is on standard error, user output on standard output", {
  skip_on_cran()
  skip_if_no_pyhooks()
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(pyhooks)",
    "hook <- session_run_hook(after_run = function(context, values) cat('my hook\\n'))",
    "input <- input_fn(mtcars, response = 'mpg', features = 'drat', batch_size = 8L)",
    "model <- linear_regressor(feature_columns(column_numeric('drat')))",
    "invisible(train(model, input, steps = 2, hooks = list(hook)))"
  ), script)
  out <- tempfile()
  err <- tempfile()
  status <- system2(file.path(R.home("bin"), "Rscript"), shQuote(script), stdout = out,
                    stderr = err)
  expect_identical(status, 0L)
  expect_identical(readLines(out), c("my hook", "my hook"))
  expect_match(paste(readLines(err), collapse = "\n"), "Training 2/2 \\[=+\\] - ETA: 0s")
})
