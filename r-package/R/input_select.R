# tfestimators' ways of naming input_fn()'s columns, resolved to column names
# before input_fn.default() (which takes names) runs: a formula
# (`mpg ~ drat + cyl`, `mpg ~ .`), bare names and tidyselect helpers
# (`c(drat, cyl)`, `starts_with("d")`, `-mpg`), and strings as before.

# list(features = , response = , data = ) from the quosures of `features` and
# `response` on the data frame `data`.
resolve_input_columns <- function(data, features, response, call) {
  formula <- quo_formula(features)
  if (!is.null(formula)) {
    if (!rlang::quo_is_null(response)) {
      cli::cli_abort("Give the response in the formula or in {.arg response}, not both.",
                     class = "pyhooks_error_argument", call = call)
    }
    parsed <- parse_input_formula(formula, data, call)
    features <- parsed$features
    response <- parsed$response
  } else {
    features <- select_columns(features, data, "features", call)
    response <- if (!rlang::quo_is_null(response)) {
      select_columns(response, data, "response", call)
    }
  }
  list(features = features, response = response, data = data)
}

quo_formula <- function(quo) {
  expr <- rlang::quo_get_expr(quo)
  if (rlang::is_call(expr, "~")) return(rlang::eval_tidy(quo))
  if (rlang::is_formula(expr)) return(expr)
  if (rlang::is_symbol(expr)) {
    value <- tryCatch(rlang::eval_tidy(quo), error = function(e) NULL)
    if (rlang::is_formula(value)) return(value)
  }
  NULL
}

parse_input_formula <- function(formula, data, call) {
  if (length(formula) != 3L) {
    cli::cli_abort(
      "The formula must name the response on its left: {.code response ~ features}, not {.code {format(formula)}}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  unknown <- setdiff(all.vars(formula), c(names(data), "."))
  if (length(unknown)) {
    cli::cli_abort(
      c("The formula names {.val {unknown}}, which {?is not a column/are not columns} of {.arg data}.",
        "i" = "The columns are {.val {names(data)}}."),
      class = "pyhooks_error_argument", call = call
    )
  }
  response <- all.vars(formula[[2L]])
  terms <- stats::terms(formula, data = as.data.frame(lapply(data, function(x) x[0L]),
                                                     optional = TRUE))
  features <- setdiff(attr(terms, "term.labels"), response)
  bad <- features[!features %in% names(data)]
  if (length(bad)) {
    cli::cli_abort(
      "The formula's features must be column names ({.code a + b}), not {.code {bad}}.",
      class = "pyhooks_error_argument", call = call
    )
  }
  list(features = features, response = response)
}

select_columns <- function(quo, data, arg, call) {
  if (rlang::quo_is_null(quo)) return(NULL)
  expr <- rlang::quo_get_expr(quo)
  # a character vector held in a variable, or strings: names as given
  value <- if (!rlang::is_symbol(expr) || !rlang::as_string(expr) %in% names(data)) {
    tryCatch(rlang::eval_tidy(quo), error = function(e) NULL)
  }
  if (is.character(value)) {
    check_not_na(value, arg, call)
    unknown <- setdiff(value, names(data))
    if (length(unknown)) {
      cli::cli_abort("{.arg {arg}}: no column {.val {unknown}} in {.arg data}; the data frame has: {names(data)}.",
                     class = "pyhooks_error_argument", call = call)
    }
    return(value)
  }
  selected <- tryCatch(
    tidyselect::eval_select(quo, data, allow_rename = FALSE),
    error = function(e) {
      cli::cli_abort(
        c("{.arg {arg}} must select columns of {.arg data}: names, {.code c(a, b)}, or tidyselect helpers such as {.code starts_with()}.",
          "i" = "The columns are {.val {names(data)}}."),
        parent = e, class = "pyhooks_error_argument", call = call
      )
    }
  )
  names(selected)
}
