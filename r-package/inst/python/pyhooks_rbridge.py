"""Glue between the R package pyhooks and pyhooks' Python core (loaded by reticulate).

Nothing here imports TensorFlow when loaded (only :func:`allow_deprecated_calls_from_r`,
when R's ``tf`` loads). Its pieces:

* :class:`RHook` is what ``session_run_hook()`` makes: a hook whose methods
  call the R functions of the R hook object (see ``session_run_hook.R``).
* :class:`RLogHandler` forwards records of the ``pyhooks`` logger to an R
  function, so they reach the R console (knitr, Rscript, RStudio) instead of
  Python's stderr.
* :class:`WarningCapture` collects pyhooks' warnings (``PyhooksWarning``, e.g.
  ``NanLossWarning``) raised during a call, for R to raise as R warnings.
* :class:`RModelFn` is what ``estimator()`` makes of an R ``model_fn``.
* :func:`allow_deprecated_calls_from_r` lets R call TensorFlow's deprecated functions.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
import warnings

from pyhooks.hook import SessionRunArgs
from pyhooks.hooks.lambda_hook import LambdaHook

__all__ = ["RCallbackError", "RHook", "RLogHandler", "WarningCapture", "call_to_r",
           "install_log_handler", "r_formatter", "to_r"]

ARRAY_MARK = "__pyhooks_array__"


def to_r(value):
    """``value`` with NumPy arrays and scalars replaced by plain Python values.

    reticulate converts plain lists of numbers to R vectors by itself but does
    not convert NumPy arrays unless its NumPy support works (it does not with
    reticulate 1.28 and NumPy 2). A 1-d array becomes a list; an n-d array a
    dict ``{ARRAY_MARK: True, "data": <column-major list>, "dim": shape}``
    that the R side turns into an R array; bytes become str.
    """
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                return to_r(value.item())
            if value.dtype.kind in "SO":
                flat = [to_r(v) for v in value.ravel(order="F").tolist()]
            else:
                flat = value.ravel(order="F").tolist()
            if value.ndim == 1:
                return flat
            return {ARRAY_MARK: True, "data": flat, "dim": list(value.shape)}
        if isinstance(value, np.generic):
            return to_r(value.item())
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {k: to_r(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_r(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [to_r(v) for v in value]
    return value


def call_to_r(fn, kwargs, materialize=False):
    """``to_r(fn(**kwargs))``; ``materialize`` first turns an iterator result into a list."""
    result = fn(**kwargs)
    if materialize and not isinstance(result, (list, tuple, dict)):
        result = list(result)
    return to_r(result)


def r_formatter(fn, with_elapsed):
    """A ``LoggingTensorHook`` formatter calling the R function ``fn`` with R values."""
    if with_elapsed:
        def formatter(values, elapsed_secs):
            return fn(to_r(values), elapsed_secs)
    else:
        def formatter(values):
            return fn(to_r(values))
    return formatter


class RCallbackError(RuntimeError):
    """An R callback of a ``session_run_hook()`` signalled an R error."""


class RHook(LambdaHook):
    """A ``session_run_hook()``: each method calls the R function given for it.

    The R functions take no argument: while one runs, R reads the method's
    arguments with :meth:`arg` and :meth:`values`, and only if the callback uses
    them (R evaluates arguments lazily; reticulate converts each argument of a
    call at ~15 µs). Methods without an R function do nothing, and pyhooks'
    runners do not call them (``pyhooks_methods``).

    ``before_run``'s R function returns ``session_run_args()``'s fields (a dict:
    ``fetches``, ``feed_dict``, ``options``), a Python ``SessionRunArgs``, ``None``,
    or ``True`` for "identical to the step before's": reticulate hands a Python
    object back from R at ~35 µs (each tensor among the fetches), an R ``TRUE``
    at ~1. If the R call fails, ``forget`` (an R function) makes R send its
    next value in full. In a TensorFlow graph, a tensor or op name among the
    fetches gives its value (``"global_step"`` as ``"global_step:0"``), or an
    error naming it. A variable's handle tensor (``graph$get_tensor_by_name(
    "global_step:0")``) gives the variable's value too: its own fetch, a
    serialized handle, is of no use in R.

    An R error reaches Python as reticulate's ``RuntimeError`` and is raised
    again as :class:`RCallbackError` naming the callback; an R interrupt (the R
    side sets ``interrupted``) as ``KeyboardInterrupt``. The R side keeps the R
    condition itself.
    """

    def __init__(self, functions, forget=None, state_key=None):
        functions = dict(functions)
        saving, loading = functions.pop("state_dict", None), functions.pop("load_state_dict", None)
        super().__init__(**functions, name="session_run_hook()")
        if saving is not None:  # the hook-state protocol (pyhooks.hooks._hook_state)
            self._fns.update(state_dict=saving, load_state_dict=loading)
            self.state_dict = lambda: self._call("state_dict")
            self.load_state_dict = lambda state: self._call("load_state_dict", state)
            self.state_key = state_key
        self.args = ()
        self.interrupted = False
        self._forget = forget
        self._last = None  # before_run's last value from R

    def _call(self, method, *args):
        fn = self._fns.get(method)
        if fn is None:
            return None
        self.args = args
        try:
            return fn()
        except RuntimeError as error:
            if self.interrupted:
                self.interrupted = False
                raise KeyboardInterrupt(
                    f"interrupted in `{method}` of a session_run_hook()") from None
            raise RCallbackError(f"in `{method}` of a session_run_hook(): {error}") from None
        finally:
            self.args = ()

    def before_run(self, run_context):
        try:
            value = self._call("before_run", run_context)
        except BaseException:
            if self._forget is not None:
                self._forget()
            raise
        if value is True:  # identical to the step before's
            value = self._last
        else:
            self._last = value
        if value is None:
            return None
        if isinstance(value, dict):  # session_run_args()' fields
            value = SessionRunArgs(value.get("fetches"), value.get("feed_dict"),
                                   value.get("options"))
        graph = getattr(run_context.session, "graph", None)
        ops = sys.modules.get("tensorflow.python.framework.ops")
        if value.fetches is None or ops is None or not isinstance(graph, ops.Graph):
            return value  # (eager and Keras: names are the step's outputs)
        from pyhooks.hooks._lookup import names_as_values

        return SessionRunArgs(names_as_values(value.fetches, graph, "session_run_args()",
                                              handles=True),
                              value.feed_dict, value.options)

    def arg(self, i):
        """The ``i``-th (0-based) argument of the running method."""
        try:
            return self.args[i]
        except IndexError:
            raise RuntimeError("the arguments of a session_run_hook()'s callback exist only "
                               "while it runs (kept in R, its `context` has no step to read "
                               "from)") from None

    def values(self):
        """``after_run``'s ``run_values`` for R: ``results`` converted by :func:`to_r`."""
        values = self.args[1]
        return {"results": to_r(values.results), "options": values.options,
                "run_metadata": values.run_metadata}


class RLogHandler(logging.Handler):
    """Sends formatted records to an R function (from the main thread only)."""

    def __init__(self, write, level=logging.NOTSET):
        super().__init__(level)
        self.write = write
        self.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))

    def emit(self, record):
        try:
            message = self.format(record)
            if threading.current_thread() is threading.main_thread():
                self.write(message)
            else:  # R must not be called from another thread
                import sys

                sys.stderr.write(message + "\n")
        except Exception:  # noqa: BLE001 - logging must never break training
            self.handleError(record)


def install_log_handler(write, name="pyhooks", level=logging.INFO):
    """Routes the ``name`` logger to ``write`` (idempotent: replaces an earlier R handler).

    The logger's level is lowered to ``level`` if it was unset or higher, and it
    stops propagating to the root logger (whose handlers write to Python's
    stderr, which R does not see).
    """
    logger = logging.getLogger(name)
    for handler in list(logger.handlers):
        if isinstance(handler, RLogHandler) or type(handler).__name__ == "RLogHandler":
            logger.removeHandler(handler)
    handler = RLogHandler(write)
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > level:
        logger.setLevel(level)
    logger.propagate = False
    return handler


class WarningCapture:
    """Records the warnings of one call into pyhooks; ``stop()`` returns pyhooks' own.

    Other warnings are shown as Python would have shown them (never dropped).
    """

    def __init__(self):
        self._context = warnings.catch_warnings(record=True)
        self._log = None

    def start(self):
        """Starts recording, under the filters in force (entering resets "once per place")."""
        self._log = self._context.__enter__()
        return self

    def stop(self):
        """``[(category name, message)]`` of the ``PyhooksWarning`` s raised since ``start()``."""
        if self._log is None:
            return []
        log, self._log = self._log, None
        self._context.__exit__(None, None, None)
        from pyhooks.errors import PyhooksWarning

        ours = []
        for record in log:
            if issubclass(record.category, PyhooksWarning):
                ours.append((record.category.__name__, str(record.message)))
            else:
                warnings.showwarning(record.message, record.category, record.filename,
                                     record.lineno)
        return ours


class RModelFn:
    """A custom estimator's R ``model_fn``, called with no arguments.

    While it runs, R reads them as this object's attributes ``features``, ``labels``,
    ``mode`` and ``config``. A call of the R function with the tensors as its arguments would
    hold them in R's call stack, and an R error there (``rlang::abort()``,
    ``stopifnot()``...) records the stack, formatting each argument. The R package's
    ``length()`` of a tensor makes that formatting safe (Python's ``len()`` of a graph tensor
    raises TensorFlow's "Using a symbolic `tf.Tensor` as a Python `bool`"); calling by name
    keeps the backtrace readable, with the argument names in place of tensors.
    """

    def __init__(self, fn):
        self._fn = fn
        self.features = self.labels = self.mode = self.config = None

    def __call__(self, features, labels, mode, config=None):
        self.features, self.labels, self.mode, self.config = features, labels, mode, config
        try:
            return self._fn()
        finally:
            self.features = self.labels = self.mode = self.config = None


def allow_deprecated_calls_from_r():
    """Lets R call TensorFlow's deprecated functions (``tf$compat$v1$to_float``,
    ``tf$train$checkpoint_exists``...) directly.

    Their deprecation notice names the Python line that called them. Called from R there is
    no such line, and TensorFlow's lookup failed with "'NoneType' object has no attribute
    'f_code'" before the function ran (TensorFlow issue 49225). The lookup used from then
    on says "R" for such calls and gives TensorFlow's answer for the others.
    """
    from pyhooks.estimators._quiet import import_tensorflow

    import_tensorflow()
    from tensorflow.python.util import deprecation

    def call_location(outer=False):
        # the frames above this one: the deprecated function's wrapper, then its caller
        caller = inspect.currentframe().f_back.f_back
        if caller is None:
            return "R"
        if outer and caller.f_back is not None:
            caller = caller.f_back
        return f"{caller.f_code.co_filename}:{caller.f_lineno}"

    deprecation._call_location = call_location  # noqa: SLF001


def features_as_dict(features):
    """A model_fn's features (a dict subclass) as a plain dict, which reticulate makes a named list."""
    return dict(features)
