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
  expect_output(pyhooks:::progress_writer("Training 1/2\n"), "Training 1/2")
  expect_message(pyhooks:::log_writer("INFO:pyhooks:loss = 1"), "loss = 1")
})
