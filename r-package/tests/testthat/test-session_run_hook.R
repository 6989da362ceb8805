# Custom hooks written in R.

test_that("SPEC section 3's custom history hook runs as written", {
  skip_if_no_pyhooks()
  fcs <- feature_columns(column_numeric("drat"))
  input <- input_fn(mtcars, response = "mpg", features = c("drat", "cyl"), batch_size = 8L)
  local_opts <- options(pyhooks.progress = "plain")
  on.exit(options(local_opts))
  out <- capture.output(suppressMessages({ # the progress bar: messages
    mean_losses_history <<- NULL
    hook_history_saver_custom <- function(every_n_step) {
      iter_count <<- 0
      session_run_hook(
        before_run = function(context) {
          session_run_args(losses = context$session$graph$get_collection("losses"))
        },
        after_run = function(context, values) {
          iter_count <<- iter_count + 1
          print(paste0("Running step: ", iter_count))
          if (iter_count %% every_n_step == 0) {
            raw_losses <- values$results$losses[[1]]
            mean_losses_history <<- c(mean_losses_history, mean(raw_losses))
          }
        }
      )
    }
    lr <- linear_regressor(feature_columns = fcs) %>%
      train(input_fn = input, steps = 4,
            hooks = list(hook_history_saver_custom(every_n_step = 1)))
  }))
  expect_identical(grep("Running step", out, value = TRUE),
                   sprintf("[1] \"Running step: %d\"", 1:4))
  expect_length(mean_losses_history, 4L)
  expect_true(all(mean_losses_history > 50 & mean_losses_history < 2000))
  # train() recorded the last step (every 10 steps by default, and the last)
  expect_equal(tail(mean_losses_history, 1), lr$mean_losses, tolerance = 1e-5)
  rm(mean_losses_history, iter_count, envir = globalenv())
})

test_that("callbacks are called at their points of the life cycle, with their arguments", {
  skip_if_no_pyhooks()
  calls <- character()
  seen <- list()
  hook <- session_run_hook(
    begin = function() calls <<- c(calls, "begin"),
    after_create_session = function(session, coord) {
      calls <<- c(calls, "after_create_session")
      seen$session <<- class(session)
      seen$coord <<- class(coord)
    },
    before_run = function(context) {
      calls <<- c(calls, "before_run")
      seen$context <<- class(context)
      seen$py_context <<- class(reticulate::r_to_py(context))
      NULL
    },
    after_run = function(context, values) {
      calls <<- c(calls, "after_run")
      seen$values <<- values
    },
    end = function(session) calls <<- c(calls, "end")
  )
  quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook))
  expect_identical(calls, c("begin", "after_create_session", rep(c("before_run", "after_run"), 2), "end"))
  expect_true(any(grepl("Session", seen$session)))
  expect_identical(seen$context, "pyhooks_run_context") # an R view of the Python context
  expect_true("pyhooks.hook.SessionRunContext" %in% seen$py_context)
  expect_s3_class(seen$values, "pyhooks_run_values")
  expect_null(seen$values$results)
})

test_that("only the callbacks given are called from Python", {
  skip_if_no_pyhooks()
  hook <- session_run_hook(after_run = function() NULL)
  methods <- reticulate::import_builtins()$sorted(hook$pyhooks_methods)
  expect_identical(unlist(methods), "after_run")
  # with a context: after_create_session too, where the context's view of the session is dropped
  hook <- session_run_hook(after_run = function(context, values) NULL)
  methods <- reticulate::import_builtins()$sorted(hook$pyhooks_methods)
  expect_identical(unlist(methods), c("after_create_session", "after_run"))
  expect_identical(format(hook), "<session_run_hook: after_run>")
  empty <- session_run_hook()
  expect_length(reticulate::import_builtins()$list(empty$pyhooks_methods), 0L)
  expect_s3_class(quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(empty)),
                  "pyhooks_history")
})

test_that("named and unnamed fetches come back as R values", {
  skip_if_no_pyhooks()
  got <- list()
  named <- session_run_hook(
    before_run = function(context) {
      session_run_args(loss = "training_loss:0",
                       losses = context$session$graph$get_collection("losses")[[1]])
    },
    after_run = function(context, values) got$named <<- values$results
  )
  unnamed <- session_run_hook(
    before_run = function(context) session_run_args("training_loss:0"),
    after_run = function(context, values) got$unnamed <<- values$results
  )
  quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(named, unnamed))
  expect_named(got$named, c("loss", "losses"))
  expect_true(is.numeric(got$named$loss) && length(got$named$loss) == 1L)
  expect_length(got$named$losses, 8L)
  expect_equal(sum(got$named$losses), got$named$loss, tolerance = 1e-4)
  # one unnamed fetch: a list of one number, which reticulate makes a number
  expect_true(is.numeric(got$unnamed) && length(got$unnamed) == 1L)
  expect_equal(got$unnamed, got$named$loss, tolerance = 1e-4)
})

test_that("context$request_stop() ends training after the step", {
  skip_if_no_pyhooks()
  steps <- 0
  stopper <- session_run_hook(after_run = function(context, values) {
    steps <<- steps + 1
    if (steps == 2) context$request_stop()
  })
  history <- quiet_train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL),
                         steps = 10, hooks = list(stopper, hook_history_saver(every_n_step = 1)))
  expect_identical(steps, 2)
  expect_identical(history$steps, 1:2)
})

test_that("context gives each run's own session, graph and collections", {
  skip_if_no_pyhooks()
  seen <- list()
  hook <- session_run_hook(
    before_run = function(context) {
      graph <- context$session$graph
      losses <- graph$get_collection("losses")
      seen[[length(seen) + 1L]] <<- list(session = context$session, graph = graph,
                                         losses = losses,
                                         scoped = graph$get_collection("losses", "no_such"))
      session_run_args(losses = losses)
    },
    after_run = function(context, values) {
      seen[[length(seen)]]$values <<- values$results$losses[[1]]
    }
  )
  first <- linear_regressor(mtcars_columns())
  second <- linear_regressor(mtcars_columns())
  quiet_train(first, steps = 3, hooks = list(hook))
  quiet_train(second, steps = 2, hooks = list(hook)) # another session and graph
  quiet_train(first, steps = 2, hooks = list(hook)) # the first model's kept session again
  expect_length(seen, 7L)
  field <- function(name) lapply(seen, `[[`, name)
  py_id <- function(name) vapply(field(name), reticulate::py_id, character(1))
  run <- c(1, 1, 1, 2, 2, 3, 3)
  graph_of_run <- c(1, 1, 1, 2, 2, 1, 1) # the first model's graph in runs 1 and 3
  expect_identical(py_id("graph"), py_id("graph")[match(graph_of_run, graph_of_run)])
  expect_false(py_id("graph")[[4]] == py_id("graph")[[1]])
  expect_identical(py_id("session"), py_id("session")[match(run, run)])
  expect_false(py_id("session")[[4]] == py_id("session")[[1]])
  # the losses are the tensors of each step's own graph
  loss_graphs <- vapply(field("losses"), function(l) reticulate::py_id(l[[1]]$graph), character(1))
  expect_identical(loss_graphs, py_id("graph"))
  expect_true(all(lengths(field("values")) == 8L))
  expect_identical(unique(lengths(field("scoped"))), 0L) # a scope: asked of Python
  expect_s3_class(seen[[1]]$session, "pyhooks.estimators.kept_session.KeptSession")
})

test_that("context reads anything else from the step's Python context", {
  skip_if_no_pyhooks()
  got <- list()
  kept <- NULL
  hook <- session_run_hook(after_run = function(context, values) {
    got$before <<- context$stop_requested
    context$request_stop()
    got$after <<- context$stop_requested
    got$args <<- class(context$original_args)
    got$printed <<- capture.output(print(context))
    got$type <<- reticulate::py_get_attr(reticulate::import_builtins()$type(context), "__name__")
    kept <<- context
  })
  quiet_train(linear_regressor(mtcars_columns()), steps = 5, hooks = list(hook))
  expect_false(got$before)
  expect_true(got$after)
  expect_true("pyhooks.hook.SessionRunArgs" %in% got$args)
  expect_match(got$printed[[1]], "<session run context>", fixed = TRUE)
  expect_match(paste(got$printed, collapse = "\n"), "SessionRunContext")
  # handed to Python, it is the Python context
  expect_identical(reticulate::py_to_r(got$type), "SessionRunContext")
  assign(".py", NULL, envir = kept) # nothing read yet: as at the start of a call
  expect_error(kept$original_args, "exist only while it runs")
})

test_that("before_run's value reaches Python whether it is new, repeated or NULL", {
  skip_if_no_pyhooks()
  names <- c("a", "b", "c")
  made <- lapply(names, function(n) do.call(session_run_args, setNames(list("training_loss:0"), n)))
  names(made) <- names
  schedule <- c("a", "a", "b", "new", "b", "none", "c", "a", "a")
  step <- 0
  got <- character()
  hook <- session_run_hook(
    before_run = function(context) {
      step <<- step + 1
      switch(schedule[[step]], none = NULL, new = session_run_args(new = "training_loss:0"),
             made[[schedule[[step]]]])
    },
    after_run = function(context, values) {
      got <<- c(got, if (is.null(values$results)) "none" else names(values$results))
    }
  )
  quiet_train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL),
              steps = length(schedule), hooks = list(hook))
  expect_identical(got, schedule)
})

test_that("a before_run value Python could not take is sent again, never replaced", {
  skip_if_no_pyhooks()
  good <- session_run_args(loss = "training_loss:0")
  bad <- session_run_args(x = 1) # no graph element: refused in the step
  use <- "good"
  got <- list()
  hook <- session_run_hook(
    before_run = function(context) if (use == "good") good else bad,
    after_run = function(context, values) got[[length(got) + 1L]] <<- values$results
  )
  model <- linear_regressor(mtcars_columns())
  quiet_train(model, steps = 2, hooks = list(hook))
  use <- "bad"
  expect_error(quiet_train(model, steps = 1, hooks = list(hook)))
  expect_error(quiet_train(model, steps = 1, hooks = list(hook)))
  expect_identical(lengths(got), c(1L, 1L))
  use <- "good"
  quiet_train(model, steps = 1, hooks = list(hook))
  expect_named(got[[3]], "loss")
})

test_that("a tensor or op name gives its value, in every R hook that takes names", {
  skip_if_no_pyhooks()
  got <- list()
  asks <- session_run_hook(
    before_run = function(context) {
      session_run_args(op = "global_step", tensor = "global_step:0",
                       loss = list("training_loss", "training_loss:0"),
                       # the variable's handle, as TF 1's ref variable gave its value
                       handle = context$session$graph$get_tensor_by_name("global_step:0"),
                       variable = tf$compat$v1$train$get_global_step())
    },
    after_run = function(context, values) got[[length(got) + 1L]] <<- values$results
  )
  final <- hook_final_ops(list(step = "global_step", step0 = "global_step:0"))
  history <- quiet_train(linear_regressor(mtcars_columns()), mtcars_input(num_epochs = NULL),
                         steps = 3,
                         hooks = list(asks, final,
                                      hook_history_saver(every_n_step = 1,
                                                         metrics = list(gs = "global_step"))))
  # the global step as the step fetched it: before its increment
  expect_identical(vapply(got, function(r) as.numeric(r$op), 0), c(0, 1, 2))
  expect_identical(lapply(got, `[[`, "op"), lapply(got, `[[`, "tensor"))
  expect_identical(lapply(got, `[[`, "op"), lapply(got, `[[`, "handle"))
  expect_identical(lapply(got, `[[`, "op"), lapply(got, `[[`, "variable"))
  for (r in got) expect_equal(r$loss[[1]], r$loss[[2]])
  expect_true(all(vapply(got, function(r) is.numeric(r$loss[[1]]), TRUE)))
  expect_equal(pyhooks:::py_value(reticulate::py_get_attr(final, "final_ops_values")),
               list(step = 3, step0 = 3))
  expect_identical(history$steps, 1:3)
  expect_identical(as.numeric(history$gs), c(0, 1, 2))
})

test_that("a name without a value is an error naming it, never NULL", {
  skip_if_no_pyhooks()
  err <- expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(session_run_hook(
      before_run = function(context) session_run_args(x = "no_such_tensor")
    ))),
    class = "pyhooks_python_HookSetupError"
  )
  expect_match(conditionMessage(err), "session_run_args(): \"no_such_tensor\" is not a tensor",
               fixed = TRUE)
  expect_match(conditionMessage(err), "Raised in session_run_hook().before_run()", fixed = TRUE)
  err <- expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 1,
                hooks = list(hook_final_ops(list(none = "no_such_op")))),
    class = "pyhooks_python_HookSetupError"
  )
  expect_match(conditionMessage(err), "FinalOpsHook: `final_ops`: \"no_such_op\"", fixed = TRUE)
  expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 1,
                hooks = list(hook_history_saver(metrics = list(gs = "no_such_op")))),
    "`metrics` \"gs\" \"no_such_op\" is not a tensor of the graph", fixed = TRUE
  )
})

test_that("callbacks may take fewer arguments, or dots", {
  skip_if_no_pyhooks()
  n <- 0
  hook <- session_run_hook(after_run = function() n <<- n + 1,
                           before_run = function(...) {
                             n <<- n + length(list(...))
                             NULL
                           })
  quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook))
  expect_identical(n, 4)
})

test_that("an error in a callback stops training with an R error naming it", {
  skip_if_no_pyhooks()
  for (callback in c("begin", "after_create_session", "before_run", "after_run", "end")) {
    fn <- switch(callback,
      begin = function() stop("broken callback"),
      before_run = function(context) stop("broken callback"),
      end = function(session) stop("broken callback"),
      function(a, b) stop("broken callback")
    )
    hook <- do.call(session_run_hook, stats::setNames(list(fn), callback))
    err <- expect_error(
      quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook)),
      class = "pyhooks_callback_error"
    )
    expect_match(conditionMessage(err), sprintf("in `%s` of a session_run_hook()", callback), fixed = TRUE)
    expect_match(conditionMessage(err), "broken callback")
    expect_identical(err$callback, callback)
    expect_identical(conditionMessage(err$parent), "broken callback")
  }
})

test_that("the error message is an R one, not a Python traceback", {
  skip_if_no_pyhooks()
  hook <- session_run_hook(after_run = function(context, values) stop("custom failure"))
  expect_snapshot(
    quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(hook)),
    error = TRUE
  )
})

test_that("after_error runs on failure; its own error does not hide the first one", {
  skip_if_no_pyhooks()
  cleaned <- NULL
  failing <- session_run_hook(after_run = function(context, values) stop("first failure"))
  cleanup <- session_run_hook(after_error = function(session, error) {
    cleaned <<- reticulate::py_str(error)
    stop("cleanup failed too")
  })
  err <- expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 2, hooks = list(cleanup, failing)),
    class = "pyhooks_callback_error"
  )
  expect_identical(err$callback, "after_run")
  expect_match(conditionMessage(err), "first failure")
  expect_match(conditionMessage(err),
               "`after_error` of a session_run_hook() also failed: cleanup failed too", fixed = TRUE)
  expect_match(cleaned, "first failure")
})

test_that("an after_error that fails after a Python error is said in the R error too", {
  skip_if_no_pyhooks()
  cleanup <- session_run_hook(after_error = function(session, error) stop("cleanup {failed}"))
  huge <- data.frame(x = c(1, 2, 3, 4), y = c(1e30, 1e30, 1e30, 1e30))
  model <- linear_regressor(feature_columns(column_numeric("x")), optimizer = "SGD")
  err <- expect_error(
    suppressMessages(quiet_train(model, input_fn(huge, features = "x", response = "y",
                                                 batch_size = 4L), steps = 3,
                                 hooks = list(cleanup))),
    class = "pyhooks_python_NanLossDuringTrainingError"
  )
  expect_match(conditionMessage(err), "Model diverged")
  expect_match(conditionMessage(err), "after_error() also raised RCallbackError", fixed = TRUE)
  expect_match(conditionMessage(err), "cleanup {failed}", fixed = TRUE)
})

test_that("before_run must return session_run_args() or NULL", {
  skip_if_no_pyhooks()
  hook <- session_run_hook(before_run = function(context) list(1))
  expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(hook)),
    "must return `session_run_args\\(\\)` or `NULL`, not a list"
  )
})

test_that("a fetch nobody can fetch names the hook that asked for it, R-style", {
  skip_if_no_pyhooks()
  fine <- session_run_hook(before_run = function(context) session_run_args(step = "global_step:0"))
  bad <- session_run_hook(before_run = function(context) session_run_args(a = 1))
  err <- expect_error(
    quiet_train(linear_regressor(mtcars_columns()), steps = 1, hooks = list(fine, bad)),
    class = "pyhooks_python_TypeError"
  )
  expect_match(conditionMessage(err), "= 1 has invalid type", fixed = TRUE)
  expect_match(conditionMessage(err),
               "`hooks[[2]]` (session_run_hook()) asked for this fetch in before_run()",
               fixed = TRUE)
  expect_no_match(conditionMessage(err), "pyhooks:", fixed = TRUE)
})

test_that("an interrupt in a callback is an interrupt that carries the history", {
  skip_if_no_pyhooks()
  n <- 0
  hook <- session_run_hook(after_run = function(context, values) {
    n <<- n + 1
    if (n == 3) rlang::interrupt()
  })
  cnd <- tryCatch(
    quiet_train(linear_regressor(mtcars_columns()), steps = 5,
                hooks = list(hook_history_saver(every_n_step = 1), hook)),
    interrupt = function(cnd) cnd
  )
  expect_s3_class(cnd, "pyhooks_interrupt")
  expect_identical(cnd$history$steps, 1:3)
})

test_that("session_run_hook() and session_run_args() check their arguments", {
  skip_if_no_pyhooks()
  expect_error(session_run_hook(after_run = 42), "`after_run` must be a function or `NULL`, not a number")
  expect_error(session_run_hook(begin = "go"), "`begin` must be a function")
  expect_error(session_run_args(a = "x:0", "y:0"), "must be all named or all unnamed")
  expect_error(session_run_args(x = new.env()),
               "Fetch \"x\" must be a tensor, an operation or their name, or a list of them, not an environment")
  expect_error(session_run_args(x = list("a:0", list(b = mean))),
               'Fetch "x$[[2]]$b" must be a tensor, an operation or their name, or a list of them, not a function',
               fixed = TRUE)
  expect_error(session_run_args(data.frame(a = 1)),
               'Fetch "[[1]]" must be a tensor, an operation or their name, or a list of them, not a data frame',
               fixed = TRUE)
  args <- session_run_args()
  expect_null(args$fetches)
  args <- session_run_args(loss = "training_loss:0", feed_dict = list("x:0" = 1))
  expect_s3_class(args, "pyhooks_session_run_args")
  expect_identical(args$fetches, list(loss = "training_loss:0"))
  py <- reticulate::r_to_py(args)
  expect_s3_class(py, "pyhooks.hook.SessionRunArgs")
  expect_identical(py$feed_dict, list("x:0" = 1))
})

test_that("session_run_args() refuses options that are not RunOptions, in R's words", {
  expect_error(session_run_args("loss", options = new.env()),
               "`options` must be a `RunOptions` \\(from Python\\) or `NULL`, not an environment")
  expect_error(session_run_args("loss", feed_dict = 1),
               "`feed_dict` must be a named list \\(tensor name = value\\) or `NULL`")
})
