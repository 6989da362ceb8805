"""Glue between the R package pyhooks and pyhooks' Python core (loaded by reticulate).

Nothing here imports TensorFlow. Its pieces:

* :class:`RCallback` is what ``session_run_hook()`` gives ``pyhooks.LambdaHook``
  for each R callback. It calls the R function with no arguments and keeps the
  hook method's arguments in ``args`` for the duration of the call; the R side
  turns them into R objects only when the callback uses them (R evaluates
  arguments lazily), so an R callback costs one R call per hook method call and
  an unused argument costs nothing.
* :class:`RViews` tells the R side when its views of a hook's run context (the
  session, its graph, the graph's collections, kept from step to step) may be
  stale: at the first call of each run and after each session creation.
* :class:`RLogHandler` forwards records of the ``pyhooks`` logger to an R
  function, so they reach the R console (knitr, Rscript, RStudio) instead of
  Python's stderr.
* :class:`WarningCapture` collects pyhooks' warnings (``PyhooksWarning``, e.g.
  ``NanLossWarning``) raised during a call, for R to raise as R warnings.
"""

from __future__ import annotations

import logging
import sys
import threading
import warnings

__all__ = ["RCallback", "RCallbackError", "RLogHandler", "RViews", "WarningCapture",
           "call_to_r", "install_log_handler", "r_formatter", "to_r"]

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


class RCallback:
    """A Python callable running one R callback of a ``session_run_hook()``.

    Args:
        fn: the R function reticulate made callable. It takes no argument,
            but ``before_run``/``after_run`` with :class:`RViews` take one
            when the views are stale, and ``before_run``'s may return the
            slot of a value it had kept (:meth:`keep`).
        name: the hook method, e.g. ``"after_run"``.
        views: the hook's :class:`RViews`, when its ``before_run`` or
            ``after_run`` is given (those check it; the others open an epoch).

    An R error reaches Python as reticulate's ``RuntimeError`` and is raised
    again as :class:`RCallbackError` naming the callback; an R interrupt (the
    R side sets ``interrupted``) as ``KeyboardInterrupt``. The R side keeps
    the R condition itself.
    """

    __slots__ = ("fn", "name", "args", "interrupted", "views", "checks", "kept")

    def __init__(self, fn, name, views=None):
        self.fn = fn
        self.name = name
        self.args = ()
        self.interrupted = False
        self.views = views  # the hook's RViews, if its R callbacks are given the run context
        self.checks = views is not None and name in ("before_run", "after_run")
        self.kept = []  # what before_run returned, kept so that R can send its index (see keep)

    def __call__(self, *args):
        self.args = args
        try:
            views = self.views
            if self.checks and views.seen != views.epoch:  # stale R views: R drops them
                views.seen = views.epoch
                result = self.fn(True)
            else:
                if views is not None and not self.checks:  # begin, after_create_session
                    views.epoch += 1
                result = self.fn()
            if type(result) is int:  # before_run's value, one R had kept here (see keep)
                return self.kept[result - 1]
            return result
        except RuntimeError as error:
            if self.interrupted:
                self.interrupted = False
                raise KeyboardInterrupt(
                    f"interrupted in `{self.name}` of a session_run_hook()") from None
            raise RCallbackError(f"in `{self.name}` of a session_run_hook(): {error}") from None
        finally:
            self.args = ()

    def arg(self, i):
        """The ``i``-th (0-based) argument of the running call."""
        try:
            return self.args[i]
        except IndexError:
            raise RuntimeError(f"the arguments of `{self.name}` exist only while it runs (kept "
                               "in R, its `context` has no step to read from)") from None

    def keep(self, slot, value):
        """Keeps ``before_run``'s ``value`` at ``slot`` (from 1), which R then returns instead.

        reticulate converts a Python object R hands back at ~50 µs a call, an
        R integer at ~2: a ``before_run`` returning the same object at every
        step (``session_run_args()`` returns one object for the same
        arguments) sends it once, then its slot.
        """
        kept = self.kept
        while len(kept) < slot:
            kept.append(None)
        kept[slot - 1] = value

    def values(self):
        """``after_run``'s ``run_values`` for R: ``results`` converted by :func:`to_r`."""
        values = self.args[1]
        return {"results": to_r(values.results), "options": values.options,
                "run_metadata": values.run_metadata}

    def __repr__(self):
        return f"<R callback {self.name}>"


class RViews:
    """When the R views of one ``session_run_hook()``'s run context must be made again.

    The R side keeps, from step to step, R objects for ``context$session``, its
    graph and the graph's collections (reticulate makes each anew at ~100 µs a
    ``$``). They hold within one session of one run: ``begin`` and
    ``after_create_session`` (:meth:`new_epoch` given to ``LambdaHook``, or the
    R callbacks given for them) start an epoch, and the first
    ``before_run``/``after_run`` call of an epoch calls its R function with the
    argument ``TRUE``: drop the views first. No R call of its own.
    """

    __slots__ = ("epoch", "seen")

    def __init__(self):
        self.epoch = 0
        self.seen = -1

    def new_epoch(self, *args):
        self.epoch += 1

    def __repr__(self):
        return f"<R run-context views, epoch {self.epoch}>"


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


def features_as_dict(features):
    """A model_fn's features (a dict subclass) as a plain dict, which reticulate makes a named list."""
    return dict(features)
