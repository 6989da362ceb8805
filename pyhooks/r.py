"""Hooks written in R, used from Python (through rpy2).

The R package ``pyhooks`` builds custom hooks with ``session_run_hook(...)``:
a Python hook whose methods call R functions (through reticulate).
This module evaluates R code in an R embedded in this Python process and hands
back that hook, so a Python training loop can run a hook written in R::

    import pyhooks.r
    hook = pyhooks.r.r_hook('''
        steps <- 0
        session_run_hook(after_run = function(context, values) {
          steps <<- steps + 1
          if (steps >= 3) context$request_stop()
        })
    ''')
    with pyhooks.MonitoredSession(hooks=[hook]) as sess: ...

An error in an R callback propagates as a Python exception carrying the R
message, noted ``pyhooks: raised in session_run_hook().after_run()``: it is
never swallowed.

rpy2 releases the GIL while R runs, and reticulate 1.28 frees Python objects
from R's garbage collector without taking it: R code that rpy2 runs can crash
the process once R holds Python objects. rpy2 therefore only starts R here;
``r_hook()`` evaluates its code through an R function that reticulate calls
from Python, holding the GIL, as it calls a hook's methods.

rpy2 3.5 and reticulate share this interpreter otherwise, but rpy2's shutdown
of the embedded R runs R's exit finalizers with the GIL released, and
reticulate's finalizers then call into Python: the process died at exit with
"PyThreadState_Get: the function must be called with the GIL held". pyhooks
ends R itself at exit, before rpy2 would: it cleans R's temporary directory
and marks the embedded R as ended, skipping the exit finalizers (they would
only release Python objects of a process that is exiting anyway). Once Python
has finalized, the process ends at once (see ``_exit_once_python_has_finalized``).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import warnings

__all__ = ["r_hook"]

_lock = threading.Lock()
_state = {"evaluate": None}  # set once R is started and the evaluator handed over

# What r_hook() calls to evaluate R code: an R function that R hands over once, through
# reticulate (_use_evaluator). Called from Python through reticulate, R runs with the GIL
# held. rpy2 releases the GIL while R runs, and reticulate 1.28's finalizers of Python
# objects do not take it: an R garbage collection during an rpy2 call that freed such an
# object crashed the process (SIGSEGV in PyObject_GC_Del, from R_RunWeakRefFinalizer).
_EVALUATOR = """
local({
  evaluate <- function(code) {
    env <- new.env(parent = globalenv())
    value <- tryCatch(eval(parse(text = code, keep.source = FALSE), env),
                      error = function(e) e)
    if (inherits(value, "error")) return(list(error = conditionMessage(value), hook = NULL))
    if (!inherits(value, "pyhooks_session_run_hook"))
      return(list(error = paste0("the R code must return session_run_hook(...), got an object",
                                 " of class ", paste(class(value), collapse = "/")),
                  hook = NULL))
    list(error = NULL, hook = value)
  }
  reticulate::import("pyhooks.r")$`_use_evaluator`(evaluate)
})
"""


def _use_evaluator(evaluate):
    """Called once from R (through reticulate) with the R function r_hook() uses."""
    _state["evaluate"] = evaluate


def _keeping_main_names(start):
    """Runs ``start()`` (which starts reticulate in this process) keeping ``__main__``'s
    names ``R`` and ``r`` as they were: reticulate 1.28 defines a class ``R`` there, makes
    ``r = R()`` unless ``r`` exists, and deletes ``R``, a user's ``R`` with it."""
    main = vars(sys.modules["__main__"])
    kept = {name: main[name] for name in ("R", "r") if name in main}
    try:
        start()
    finally:
        for name in ("R", "r"):
            if name in kept:
                main[name] = kept[name]
            else:
                main.pop(name, None)


def _end_embedded_r():
    from rpy2.rinterface_lib import embedded, openrlib

    if not embedded.isinitialized():
        return
    with openrlib.rlock:
        if embedded.rpy2_embeddedR_isinitialized & embedded.RPY_R_Status.ENDED.value:
            return
        openrlib.rlib.R_CleanTempDir()
        # R may still poll for events while Python finalizes: no Python callback then.
        openrlib.rlib.ptr_R_ProcessEvents = openrlib.ffi.NULL
        embedded.rpy2_embeddedR_isinitialized |= embedded.RPY_R_Status.ENDED.value
    _exit_once_python_has_finalized()


def _exit_once_python_has_finalized():
    """Ends the process as soon as Python has finalized, with Python's exit status.

    reticulate 1.28 (Debian's) starts a thread that calls ``Py_AddPendingCall``
    every 250 ms for as long as the process lives, and cannot be stopped. Once
    Python has finalized, that call dereferences the freed interpreter: the
    process died with SIGSEGV in about 1 of 10 exits under load, while the C
    libraries' exit handlers (TensorFlow's) ran. glibc's ``on_exit`` hands the
    exit status to the handler; registered now, it runs first among them.
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        on_exit = libc.on_exit  # glibc only; elsewhere the process exits as it did
    except (OSError, AttributeError):
        return
    libc.fflush(None)  # C stdio buffers (Python's own streams flush as it finalizes)
    on_exit(ctypes.cast(libc._exit, ctypes.c_void_p), None)


def _evaluator():
    """The R function evaluating a hook's code, R started through rpy2 the first time (with
    ``library(pyhooks)`` attached and exit made safe)."""
    with _lock:
        if _state["evaluate"] is not None:
            return _state["evaluate"]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # rpy2's note about old reticulate releases
                import rpy2.rinterface_lib.callbacks  # noqa: F401
                import rpy2.robjects as ro
        except ImportError as error:
            raise ImportError("pyhooks.r needs rpy2 and R: pip install 'rpy2>=3.5.17,<3.6' "
                              "(and apt-get install r-base-core)") from error
        # reticulate inside this R must use this very interpreter.
        os.environ.setdefault("RETICULATE_PYTHON", sys.executable)
        # Registered after rpy2's own handler, so it runs first (atexit is LIFO).
        atexit.register(_end_embedded_r)
        # rpy2 hooks a warning onto reticulate's load that concerns releases
        # before 2022 (reticulate >= 1.25 has the fix): drop it.
        ro.r('setHook(packageEvent("reticulate", "onLoad"), NULL, "replace")')
        try:
            ro.r("suppressPackageStartupMessages(library(pyhooks))")
        except Exception as error:  # rpy2's RRuntimeError
            raise ImportError(
                f"the R package 'pyhooks' could not be loaded: {error}. Install it into R's "
                "site library with `make install` in the pyhooks checkout (`make setup` does "
                "it too), or put the R library holding it on R_LIBS.") from error
        _keeping_main_names(lambda: ro.r(_EVALUATOR))
        return _state["evaluate"]


def r_hook(code=None, *, file=None):
    """A hook written in R: R code (or a file) whose value is ``session_run_hook(...)``.

    The code runs in a new R environment (child of the global one), with the R
    package ``pyhooks`` attached; state kept with ``<<-`` lands there.

    Args:
        code: R source as a string.
        file: path to an R file, instead of ``code``.

    Returns:
        the hook (a :class:`pyhooks.SessionRunHook` whose methods call R functions).

    Raises:
        ValueError: neither or both of ``code`` and ``file``; R code that fails
            (the R message is kept) or does not return a ``session_run_hook()``.
        ImportError: rpy2, R or the R package is missing (says how to install).

    Example:
        >>> hook = r_hook("session_run_hook(end = function(session) cat('done\\n'))")
    """
    if (code is None) == (file is None):
        raise ValueError("Exactly one of `code` and `file` must be given, "
                         f"got code={code!r}, file={file!r}.")
    if file is not None:
        file = os.fspath(file)
        if not os.path.isfile(file):
            raise ValueError(f"`file` does not exist: {file!r}.")
        with open(file, encoding="utf-8") as handle:
            code = handle.read()
    if not isinstance(code, str):
        raise TypeError(f"`code` must be a string of R code, got {type(code).__name__}.")
    evaluate = _evaluator()
    with _lock:
        outcome = evaluate(code)
    if outcome["error"] is not None:
        raise ValueError(f"R: {outcome['error']}")
    return outcome["hook"]
