# How pyhooks' objects print in R: what they are and their settings, as
# `<hook_progress_bar: label = "Training", min_interval = 0.1>`, not as the
# Python object behind them. Hooks and feature columns keep the arguments
# they were made with (attribute "pyhooks_args", set by py_construct()).

#' Printing hooks, estimators and feature columns
#'
#' Hooks, estimators and feature columns are Python objects used through
#' reticulate; they print as the R call that made them would suggest: the
#' function's name and the settings given to it.
#'
#' @param x A hook (from the `hook_*()` functions or [session_run_hook()]),
#'   an estimator (e.g. from [linear_regressor()]), a feature column or a
#'   list of them (from [feature_columns()]), or an [input_fn()].
#' @param ... Ignored.
#' @returns `format()`: a character string; `print()`: `x`, invisibly.
#' @name pyhooks_print
#' @examplesIf is_pyhooks_available()
#' hook_history_saver(every_n_step = 2)
#' fcs <- feature_columns(column_numeric("drat", "cyl"))
#' fcs
#' linear_regressor(feature_columns = fcs)
NULL

#' @rdname pyhooks_print
#' @method format pyhooks.hook.SessionRunHook
#' @export
format.pyhooks.hook.SessionRunHook <- function(x, ...) {
  if (inherits(x, "pyhooks_session_run_hook")) {
    methods <- names(attr(x, "pyhooks_args"))
    return(sprintf("<session_run_hook: %s>", paste(methods, collapse = ", ")))
  }
  python_class <- class(x)[[1L]]
  name <- attr(x, "pyhooks_function") %||% hook_function_name(sub(".*\\.", "", python_class))
  format_call(name, attr(x, "pyhooks_args"))
}

#' @rdname pyhooks_print
#' @method print pyhooks.hook.SessionRunHook
#' @export
print.pyhooks.hook.SessionRunHook <- function(x, ...) {
  cat(format(x, ...), "\n", sep = "")
  invisible(x)
}

#' @rdname pyhooks_print
#' @method format pyhooks.estimators.feature_columns.FeatureColumn
#' @export
format.pyhooks.estimators.feature_columns.FeatureColumn <- function(x, ...) {
  python_class <- sub(".*\\.", "", class(x)[[1L]])
  name <- column_function_names[[python_class]] %||% python_class
  fields <- reticulate::py_to_r(reticulate::py_call(reticulate::py_get_attr(x, "_repr_fields")))
  args <- lapply(fields, function(field) field[[2L]])
  names(args) <- vapply(fields, function(field) field[[1L]], character(1))
  format_call(name, args)
}

#' @rdname pyhooks_print
#' @method print pyhooks.estimators.feature_columns.FeatureColumn
#' @export
print.pyhooks.estimators.feature_columns.FeatureColumn <- function(x, ...) {
  cat(format(x, ...), "\n", sep = "")
  invisible(x)
}

#' @rdname pyhooks_print
#' @method format pyhooks.estimators.inputs.InputFn
#' @export
format.pyhooks.estimators.inputs.InputFn <- function(x, ...) {
  get <- function(name) py_field(x, name)
  files <- if (inherits(x, "pyhooks.estimators.files.FileInput")) unlist(get("files"))
  data <- if (is.null(files)) {
    sprintf("%d rows", get("n"))
  } else {
    more <- length(files) - 1L
    sprintf("%s file%s \"%s\"%s", get("file_format"), if (more) "s" else "",
            files[[1L]], if (more) sprintf(" and %d more", more) else "")
  }
  response <- unlist(get("response"))
  settings <- list(features = unlist(get("features")),
                   response = if (length(response)) response,
                   batch_size = get("batch_size"), shuffle = get("shuffle"))
  shown <- vapply(Filter(Negate(is.null), settings), format_setting, character(1))
  epochs <- get("num_epochs")
  sprintf("<input_fn: %s, %s, num_epochs = %s>", data,
          paste(names(shown), "=", shown, collapse = ", "),
          if (is.null(epochs)) "NULL (forever)" else format_setting(epochs))
}

#' @rdname pyhooks_print
#' @method print pyhooks.estimators.inputs.InputFn
#' @export
print.pyhooks.estimators.inputs.InputFn <- function(x, ...) {
  cat(format(x, ...), "\n", sep = "")
  invisible(x)
}

#' @rdname pyhooks_print
#' @export
format.pyhooks_feature_columns <- function(x, ...) {
  n <- length(x)
  c(sprintf("<feature_columns: %d column%s>", n, if (n == 1L) "" else "s"),
    vapply(x, function(column) paste0("  ", format(column)), character(1)))
}

#' @rdname pyhooks_print
#' @export
print.pyhooks_feature_columns <- function(x, ...) {
  cat(format(x, ...), sep = "\n")
  invisible(x)
}

#' @rdname pyhooks_print
#' @export
format.pyhooks_estimator <- function(x, ...) {
  facts <- estimator_facts(x)
  columns <- facts$feature_columns
  what <- if (is.null(columns)) {
    "model_fn"
  } else {
    sprintf("%d feature column%s (%s)", length(columns), if (length(columns) == 1L) "" else "s",
            paste(columns, collapse = ", "))
  }
  sprintf("<%s: %s, model_dir %s>", facts$estimator, what, facts$model_dir)
}

#' @rdname pyhooks_print
#' @export
print.pyhooks_estimator <- function(x, ...) {
  cat(format(x, ...), "\n", sep = "")
  invisible(x)
}

#' @rdname pyhooks_print
#' @param object An estimator.
#' @details `str()` of an estimator shows what it is made of (feature
#'   columns, `model_dir`, latest checkpoint and its global step) as R values;
#'   `summary()` adds its run configuration.
#' @returns `str()`: nothing (invisible `NULL`); `summary()`: a
#'   `summary.pyhooks_estimator` list (`estimator`, `feature_columns`,
#'   `model_dir`, `checkpoint`, `global_step`, `config`), which prints.
#' @export
str.pyhooks_estimator <- function(object, ...) {
  facts <- estimator_facts(object)
  cat(sprintf("<%s> a pyhooks estimator (Python object) of\n", facts$estimator))
  utils::str(facts[c("feature_columns", "model_dir", "checkpoint", "global_step")],
             no.list = TRUE, give.head = TRUE)
  invisible()
}

#' @rdname pyhooks_print
#' @export
summary.pyhooks_estimator <- function(object, ...) {
  facts <- estimator_facts(object)
  config <- tryCatch(reticulate::py_get_attr(object, "config"), error = function(e) NULL)
  settings <- c("tf_random_seed", "save_summary_steps", "log_step_count_steps",
                "save_checkpoints_steps", "save_checkpoints_secs", "keep_checkpoint_max")
  facts$config <- if (!is.null(config)) {
    Filter(Negate(is.null), stats::setNames(lapply(settings, py_field, object = config),
                                            settings))
  }
  structure(facts, class = "summary.pyhooks_estimator")
}

#' @export
print.summary.pyhooks_estimator <- function(x, ...) {
  trained <- if (is.null(x$checkpoint)) {
    "not yet"
  } else {
    sprintf("to step %s (checkpoint %s)", x$global_step, basename(x$checkpoint))
  }
  config <- if (length(x$config)) {
    paste(names(x$config), "=", vapply(x$config, format_setting, ""), collapse = ", ")
  } else {
    "defaults"
  }
  cat(sprintf("%s, a pyhooks estimator\n", x$estimator),
      sprintf("  feature columns: %s\n",
              if (is.null(x$feature_columns)) "those of its model_fn"
              else paste(x$feature_columns, collapse = ", ")),
      sprintf("  model_dir:       %s\n", x$model_dir),
      sprintf("  trained:         %s\n", trained),
      sprintf("  config:          %s\n", config), sep = "")
  invisible(x)
}

# What an estimator is, as R values: the name of the function that made it, its feature
# columns' names (NULL for a custom estimator), model_dir, latest checkpoint (NULL before
# training) and the global step it was saved at (NA before training).
estimator_facts <- function(x) {
  columns <- tryCatch({
    model <- reticulate::py_get_attr(x, "_model")
    # unique: a wide-and-deep model's columns shared by its linear and dnn parts, once
    unique(vapply(py_field(model, "columns"), function(column) py_field(column, "name"),
                  character(1)))
  }, error = function(e) NULL)
  if (!length(columns)) columns <- NULL # a custom estimator: its model_fn reads the features
  checkpoint <- tryCatch(x$latest_checkpoint(), error = function(e) NULL)
  step <- if (is.null(checkpoint)) NA_integer_ else {
    suppressWarnings(as.integer(sub("^.*-([0-9]+)$", "\\1", checkpoint)))
  }
  list(estimator = py_field(x, "_name") %||% "estimator", feature_columns = columns,
       model_dir = py_field(x, "model_dir") %||% NA_character_, checkpoint = checkpoint,
       global_step = step)
}

# ProgressBarHook -> "hook_progress_bar", LambdaHook -> "hook_lambda".
hook_function_name <- function(python_class) {
  base <- sub("Hook$", "", python_class)
  paste0("hook_", tolower(gsub("([a-z0-9])([A-Z])", "\\1_\\2", base)))
}

column_function_names <- list(
  NumericColumn = "column_numeric",
  VocabularyListColumn = "column_categorical_with_vocabulary_list",
  IdentityColumn = "column_categorical_with_identity",
  HashBucketColumn = "column_categorical_with_hash_bucket",
  BucketizedColumn = "column_bucketized",
  CrossedColumn = "column_crossed",
  IndicatorColumn = "column_indicator",
  EmbeddingColumn = "column_embedding"
)

secret_settings <- "credentials"

# Attribute `name` of a Python object as an R value, or NULL if it has none.
py_field <- function(object, name) {
  tryCatch(reticulate::py_to_r(reticulate::py_get_attr(object, name)), error = function(e) NULL)
}

# "<name: a = 1, b = "x">" from the non-NULL settings, in R's spelling.
format_call <- function(name, args) {
  args <- Filter(Negate(is.null), args %||% list())
  if (!length(args)) return(sprintf("<%s>", name))
  shown <- vapply(args, format_setting, character(1))
  shown[names(args) %in% secret_settings] <- "<hidden>"
  sprintf("<%s: %s>", name, paste(names(args), "=", shown, collapse = ", "))
}

# One setting as R would spell it: 2, "x", TRUE, c(4, 6), <function>, or what a
# Python object is (a feature column prints as its R call).
format_setting <- function(value) {
  if (inherits(value, "pyhooks.estimators.feature_columns.FeatureColumn")) {
    return(format(value))
  }
  if (is_py_object(value)) return(sprintf("<%s>", sub(".*\\.", "", class(value)[[1L]])))
  if (is.function(value)) return("<function>")
  simple <- is.list(value) && length(value) && is.null(names(value)) &&
    all(vapply(value, function(v) is.atomic(v) && length(v) == 1L, logical(1))) &&
    length(unique(vapply(value, typeof, ""))) == 1L
  if (simple) value <- unlist(value)
  if (is.list(value)) {
    inner <- vapply(value, format_setting, character(1))
    if (!is.null(names(value))) inner <- paste(names(value), "=", inner)
    return(sprintf("list(%s)", paste(inner, collapse = ", ")))
  }
  if (is.atomic(value)) {
    text <- paste(deparse(unname(value), width.cutoff = 60L), collapse = "")
    text <- sub("^([0-9.e+-]+)L$", "\\1", text) # 2L -> 2
    text <- gsub("([0-9])L([,)])", "\\1\\2", text)
    if (nchar(text) > 40L) text <- paste0(substr(text, 1L, 37L), "...")
    return(text)
  }
  sprintf("<%s>", class(value)[[1L]])
}

#' Is Python with pyhooks and TensorFlow available?
#'
#' `TRUE` when Python can be loaded with the pyhooks module (see
#' [pyhooks-package] for how it is found); loads Python if it is not yet.
#' Used by the examples, which need it.
#'
#' @returns `TRUE` or `FALSE`.
#' @seealso [install_pyhooks()]
#' @export
#' @examples
#' is_pyhooks_available()
is_pyhooks_available <- function() {
  isTRUE(tryCatch({
    py_pyhooks()
    TRUE
  }, error = function(e) FALSE))
}
