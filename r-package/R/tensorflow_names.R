#' The shape of a tensor, as the tensorflow package wrote it
#'
#' `shape(784L)`, `shape(28, 28)` or `shape(NULL, 784L)` make a TensorFlow
#' `TensorShape`, as `shape()` of the tensorflow R package did for
#' tfestimators' code: for `column_numeric(shape =)` and for [tf]'s functions
#' (`tf$placeholder()`, `tf$reshape()`...).
#'
#' @param ... The dimensions: whole numbers, or `NULL` for a dimension not
#'   known in advance (e.g. the batch).
#' @returns A `tf.TensorShape` (a Python object).
#' @family custom estimators
#' @seealso [column_numeric()], [tf]
#' @export
#' @examplesIf is_pyhooks_available()
#' shape(NULL, 784L)
#' column_numeric("x", shape = shape(784L))
shape <- function(...) {
  dims <- list(...)
  for (i in seq_along(dims)) {
    dim <- dims[[i]]
    if (is.null(dim)) next
    if (!is.numeric(dim) || length(dim) != 1L || is.na(dim) || dim < 0 || dim != trunc(dim)) {
      cli::cli_abort(
        "Each dimension of {.fn shape} must be a whole number >= 0 or {.code NULL}, not {.obj_type_friendly {dim}} (dimension {i}).",
        class = "pyhooks_error_argument"
      )
    }
    dims[i] <- list(as.integer(dim))
  }
  tf$TensorShape(dims)
}

#' @importFrom reticulate import
#' @export
reticulate::import
