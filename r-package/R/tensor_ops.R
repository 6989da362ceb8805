#' R's operators and math functions on tensors
#'
#' In R code that builds a model (a [column_numeric()] `normalizer_fn`, a
#' custom [estimator()]'s `model_fn`), R's operators and math functions work
#' on TensorFlow tensors as the tensorflow R package made them work for
#' tfestimators' users: `(x - 3) / 4.2`, `labels - predictions`,
#' `sqrt(x)`, `sum(x)` give tensors.
#'
#' * Operators: `+ - * / ^ %% %/%`, the comparisons `== != < <= > >=` and
#'   `& | !`. `/` divides as R does (integers give a floating-point
#'   result); `%%` and `%/%` round towards minus infinity, as in R. An R
#'   number or vector on either side becomes a tensor of the other side's
#'   type, so `x - 3` keeps `x`'s `float32`.
#' * Math functions: `abs`, `sign`, `sqrt`, `floor`, `ceiling`, `round`
#'   (whole numbers only; halves to even, as R does), `exp`, `expm1`,
#'   `log` (any `base`), `log2`, `log10`, `log1p`, `cos`, `sin`, `tan`,
#'   `acos`, `asin`, `atan`, `cosh`, `sinh`, `tanh`, `acosh`, `asinh`,
#'   `atanh`, `lgamma`, `digamma`, `cumsum`, `cumprod`. Others are an error
#'   naming the function.
#' * `sum()`, `prod()`, `max()`, `min()`, `range()`, `all()`, `any()` and
#'   `mean()` of one tensor reduce all its values to one, as R's do for a
#'   vector.
#' * `x[i]`, `x[i, j]`...: one index per dimension, each empty (all of it),
#'   a whole number from 1 (that element, counted from 1 as in R; the
#'   dimension is dropped unless `drop = FALSE`), or a range `a:b`. Other
#'   selections (negative, non-contiguous or logical indices, fewer indices
#'   than dimensions) are an error naming `tf$gather()` and
#'   `tf$boolean_mask()`: Python's own indexing, which a Python object gets
#'   in R otherwise, counts from 0 and would read `x[1]` as the second
#'   element. An index beyond the size is an error; where the size is known
#'   only when the model runs (the batch), when it runs.
#' * `dim()` gives the tensor's shape, `NA` for a size not known until it
#'   runs (e.g. the batch); `length()` the number of its values, `NA` when
#'   not known.
#'
#' A tensor's R class includes `"tensorflow.tensor"`, as with the tensorflow
#' R package; if that package is loaded too, its methods are used for the
#' operators it defines, with the same results.
#'
#' @param e1,e2,x Tensors, or an R number or vector and a tensor.
#' @param ... For `Math`, `log()`'s `base` or `round()`'s `digits`; for
#'   `Summary`, the one tensor; for `[`, the indices.
#' @param na.rm Ignored: a tensor has no `NA`.
#' @param drop For `[`: whether a dimension indexed by one number is
#'   dropped.
#' @returns A tensor.
#' @family custom estimators
#' @seealso [tf], [estimator()], [column_numeric()]
#' @name tensor_ops
#' @examplesIf is_pyhooks_available()
#' x <- tf$constant(c(1, 4, 9))
#' (x - 3) / 2
#' sqrt(x)
#' sum(x)
#' x[1]
NULL

# The Python classes of tensors (TensorFlow >= 2.14 names them so), which get the R class
# "tensorflow.tensor" when they come to R: the class the operators below are methods of.
tensor_python_classes <- c(
  "tensorflow.python.framework.tensor.Tensor",
  "tensorflow.python.types.core.Tensor",
  "tensorflow.python.ops.variables.Variable",
  "tensorflow.python.framework.sparse_tensor.SparseTensor",
  "tensorflow.python.ops.ragged.ragged_tensor.RaggedTensor"
)

tensor_class_filter <- function(classes) {
  if (!"tensorflow.tensor" %in% classes && any(tensor_python_classes %in% classes)) {
    c("tensorflow.tensor", classes)
  } else {
    classes
  }
}

#' @rdname tensor_ops
#' @export
Ops.tensorflow.tensor <- function(e1, e2) {
  if (missing(e2)) {
    return(switch(.Generic,
      "+" = e1,
      "-" = tf$negative(e1),
      "!" = tf$logical_not(e1)
    ))
  }
  # the R operand takes the tensor's type, as the tensorflow package did
  if (!inherits(e1, "tensorflow.tensor")) {
    e1 <- tf$convert_to_tensor(e1, dtype = e2$dtype$base_dtype)
  } else if (!inherits(e2, "tensorflow.tensor")) {
    e2 <- tf$convert_to_tensor(e2, dtype = e1$dtype$base_dtype)
  }
  op <- switch(.Generic,
    "+" = tf$add, "-" = tf$subtract, "*" = tf$multiply, "/" = tf$truediv,
    "^" = tf$pow, "%%" = tf$math$floormod, "%/%" = tf$math$floordiv,
    "==" = tf$equal, "!=" = tf$not_equal, "<" = tf$less, "<=" = tf$less_equal,
    ">" = tf$greater, ">=" = tf$greater_equal,
    "&" = tf$logical_and, "|" = tf$logical_or
  )
  op(e1, e2)
}

#' @rdname tensor_ops
#' @export
Math.tensorflow.tensor <- function(x, ...) {
  args <- list(...)
  if (.Generic == "log" && length(args)) {
    return(tf$math$log(x) / log(args[[1L]]))
  }
  if (.Generic == "round" && length(args) && !isTRUE(args[[1L]] == 0)) {
    tensor_op_error("{.fn round} of a tensor rounds to whole numbers only ({.code digits = 0}), not {.code digits = {args[[1L]]}}.")
  }
  math <- tf$math
  op <- switch(.Generic,
    abs = math$abs, sign = math$sign, sqrt = math$sqrt, floor = math$floor,
    ceiling = math$ceil, round = math$round, exp = math$exp, expm1 = math$expm1,
    log = math$log, log1p = math$log1p, cos = math$cos, sin = math$sin, tan = math$tan,
    acos = math$acos, asin = math$asin, atan = math$atan, cosh = math$cosh,
    sinh = math$sinh, tanh = math$tanh, acosh = math$acosh, asinh = math$asinh,
    atanh = math$atanh, lgamma = math$lgamma, digamma = math$digamma,
    log2 = function(x) math$log(x) / log(2), log10 = function(x) math$log(x) / log(10),
    cumsum = function(x) math$cumsum(tf$reshape(x, list(-1L))),
    cumprod = function(x) math$cumprod(tf$reshape(x, list(-1L))),
    tensor_op_error("{.fn {(.Generic)}} of a tensor is not supported; use a function of {.code tf$math}.")
  )
  op(x)
}

#' @rdname tensor_ops
#' @export
Summary.tensorflow.tensor <- function(..., na.rm = FALSE) {
  values <- list(...)
  if (length(values) != 1L) {
    tensor_op_error("{.fn {(.Generic)}} takes one tensor, not {length(values)} value{?s}.")
  }
  x <- values[[1L]]
  switch(.Generic,
    sum = tf$reduce_sum(x), prod = tf$reduce_prod(x),
    max = tf$reduce_max(x), min = tf$reduce_min(x),
    range = tf$stack(list(tf$reduce_min(x), tf$reduce_max(x))),
    all = tf$reduce_all(x), any = tf$reduce_any(x)
  )
}

#' @rdname tensor_ops
#' @export
mean.tensorflow.tensor <- function(x, ...) tf$reduce_mean(x)

#' @rdname tensor_ops
#' @export
dim.tensorflow.tensor <- function(x) {
  if (is.null(x$shape$rank)) return(NULL)
  vapply(x$shape$as_list(), function(size) if (is.null(size)) NA_integer_ else as.integer(size),
         integer(1))
}

#' @rdname tensor_ops
#' @export
length.tensorflow.tensor <- function(x) {
  # reticulate's length() is Python's len(), which a graph tensor refuses with TensorFlow's
  # error; rlang's backtraces call length() on what a call holds
  n <- x$shape$num_elements()
  if (is.null(n)) NA_integer_ else as.integer(n)
}

#' @rdname tensor_ops
#' @export
`[.tensorflow.tensor` <- function(x, ..., drop = TRUE) {
  indices <- as.list(sys.call())[-c(1L, 2L)] # as written, empty ones included
  indices$drop <- NULL
  env <- parent.frame()
  sizes <- dim(x)
  if (is.null(sizes) || length(indices) != length(sizes)) {
    has <- if (is.null(sizes)) "an unknown number of" else length(sizes)
    given <- length(indices)
    tensor_op_error(paste(
      "Index a tensor with one index per dimension: it has {has} dimension(s), and {given}",
      "{cli::qty(given)}{?was/were} given. For other selections use {.code tf$gather()} or",
      "{.code tf$boolean_mask()}."
    ))
  }
  builtins <- reticulate::import_builtins()
  checks <- list() # a range on a dimension whose size is known only when the graph runs
  key <- lapply(seq_along(indices), function(d) {
    if (identical(indices[[d]], quote(expr = ))) return(builtins$slice(NULL))
    i <- eval(indices[[d]], env)
    size <- sizes[[d]]
    value <- paste(deparse(i), collapse = " ")
    if (nchar(value) > 40L) value <- paste0(substr(value, 1L, 40L), "...")
    whole <- is.numeric(i) && length(i) >= 1L && !anyNA(i) && all(i == trunc(i)) && all(i >= 1)
    if (!whole || (length(i) > 1L && any(diff(i) != 1)) || (!is.na(size) && max(i) > size)) {
      upto <- if (is.na(size)) "its size" else size
      tensor_op_error(paste(
        "Index {d} of a tensor must be empty, a whole number from 1 to {upto}",
        "or a range {.code a:b} of them, not {.code {value}}. For other",
        "selections use {.code tf$gather()} or {.code tf$boolean_mask()}."
      ))
    }
    if (length(i) == 1L && drop) return(as.integer(i - 1))
    if (is.na(size)) {
      # Python's slicing would stop at the end without an error (1:300 of a last batch of
      # 100 rows would give 100): refused when the step runs, as beyond a known size above
      checks[[length(checks) + 1L]] <<- tf$debugging$assert_less_equal(
        as.integer(max(i)), tf$shape(x, out_type = "int32")$`__getitem__`(as.integer(d - 1L)),
        message = sprintf("Index %d of a tensor, %s, goes beyond its size", d, value))
    }
    builtins$slice(as.integer(min(i) - 1), as.integer(max(i)))
  })
  selected <- x$`__getitem__`(do.call(reticulate::tuple, key))
  if (!length(checks)) return(selected)
  with(tf$control_dependencies(checks), tf$identity(selected))
}

# An error of the methods above, where R's own would be: at the operator, not its caller.
tensor_op_error <- function(message, env = parent.frame()) {
  cli::cli_abort(message, class = "pyhooks_error_argument", call = NULL, .envir = env)
}

# `fn`, when it is an R function TensorFlow calls with tensors: the `arg` (a column's
# `normalizer_fn`, an estimator's `activation_fn`) of `of` (`column_numeric("drat")`). Its
# first error is recorded for the train(), evaluate() or predict() call running it
# (run_with_callbacks()), and reaches Python with a message naming `arg` and `of`.
tensor_function <- function(fn, arg, of) {
  if (!is.function(fn)) return(fn)
  assign(arg, fn) # called by its argument's name, which R's errors then show
  user_call <- as.call(list(as.name(arg), quote(...)))
  function(...) {
    withCallingHandlers(eval(user_call), error = function(e) {
      state <- dynGet("pyhooks_tensor_function_state", ifnotfound = NULL)
      if (!is.null(state) && is.null(state$condition)) {
        state$of <- of
        record_condition(state, arg)(e)
      }
      stop(structure(class = c("pyhooks_tensor_function_error", "error", "condition"), list(
        message = sprintf("The `%s` of %s failed: %s", arg, of, conditionMessage(e)),
        call = NULL
      )))
    })
  }
}
