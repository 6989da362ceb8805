"""pyhooks' log output: each message once, to TensorFlow's logging functions and Python's logging.

The built-in hooks log through :func:`info`, :func:`warning` and :func:`error`.
Each message goes two ways, once each:

1. TensorFlow's logging function of that level (``tf.compat.v1.logging.info``
   and so on, looked up at every call), as TensorFlow's own hooks call them:
   code that wraps or replaces those functions (TensorFlow's tests, tools that
   capture TensorFlow's log) sees pyhooks' messages. The record TensorFlow's
   function makes of it on the ``tensorflow`` logger is dropped there (a filter),
   because of 2.
2. One record of the ``"pyhooks"`` logger, if that logger is enabled for the
   level. Its parent is the ``tensorflow`` logger, so its level applies when
   pyhooks' logger has none (``tf.get_logger().setLevel("INFO")`` shows them,
   as it shows TensorFlow's hooks' lines) and its handlers get the record,
   then the root logger's.

Shown once. TensorFlow puts a stderr handler on its logger when the root
logger has none; a root handler added later (``logging.basicConfig()``, which
any ``logging.info()`` call makes behind the application's back, absl's
handler) would print every record that passes both a second time. A filter on
the ``"pyhooks"`` logger therefore hands each record to the handlers along
its way itself, as Python would, except that of several handlers writing to
the same stream only the one nearest the root logger (the application's)
writes it. Handlers without a stream (R's, files are streams of their own)
always get it; ``propagate = False`` on the ``"pyhooks"`` logger stops the
walk as usual. When nobody configured logging, :func:`ensure_visible_logging`
adds a stderr handler that steps aside once any other logger on the way has one.
"""

from __future__ import annotations

import logging
import sys
import threading

__all__ = ["LOGGER_NAME", "ensure_visible_logging", "error", "info", "log", "warning"]

LOGGER_NAME = "pyhooks"
_TF_LOGGING = "tensorflow.python.platform.tf_logging"
_TF_FUNCTION = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning",
                logging.ERROR: "error"}
_echo = threading.local()  # .msg: the message TensorFlow's function is logging for pyhooks


class _DropEcho(logging.Filter):
    """On the ``tensorflow`` logger: drops TensorFlow's record of the message being logged."""

    def filter(self, record):
        return record.msg is not getattr(_echo, "msg", None)


def _stream_of(handler):
    stream = getattr(handler, "stream", None)
    if stream is None:  # absl's handler writes through the Python handler it holds
        stream = getattr(getattr(handler, "python_handler", None), "stream", None)
    return stream


class _OncePerStream(logging.Filter):
    """On the ``"pyhooks"`` logger: calls the handlers itself (see the module docstring)."""

    def filter(self, record):
        chosen, found, node = {}, 0, logging.getLogger(LOGGER_NAME)
        while node is not None:
            for handler in node.handlers:
                found += 1
                if record.levelno >= handler.level:
                    stream = _stream_of(handler)
                    key = id(handler) if stream is None else id(stream)
                    chosen.pop(key, None)  # the one nearest the root writes, in its place
                    chosen[key] = handler
            node = node.parent if node.propagate else None
        if found == 0 and logging.lastResort and record.levelno >= logging.lastResort.level:
            chosen[0] = logging.lastResort
        for handler in chosen.values():
            handler.handle(record)
        return False  # handled: Python's own handler calls would repeat it


def _install():
    logger = logging.getLogger(LOGGER_NAME)
    logger.parent = logging.getLogger("tensorflow")
    if not any(isinstance(f, _OncePerStream) for f in logger.filters):
        logger.addFilter(_OncePerStream())
    tf_logger = logging.getLogger("tensorflow")
    if not any(isinstance(f, _DropEcho) for f in tf_logger.filters):
        tf_logger.addFilter(_DropEcho())
    return logger


_install()


def _log(level, msg, args, first_n=None):
    logger = _install()  # cheap: two short lists, and it survives a reset of either logger
    tf_logging = sys.modules.get(_TF_LOGGING)  # never imported here: `import pyhooks` stays light
    if tf_logging is not None:
        _echo.msg = msg
        try:
            if first_n is not None:
                tf_logging.log_first_n(level, msg, first_n, *args)
            else:
                getattr(tf_logging, _TF_FUNCTION[level])(msg, *args)
        finally:
            _echo.msg = None
    if logger.isEnabledFor(level):
        logger.log(level, msg, *args, stacklevel=3)  # the record names the hook's line


def log(level, msg, *args):
    """Logs ``msg % args`` at ``level`` (DEBUG, INFO, WARNING or ERROR)."""
    _log(level, msg, args)


def info(msg, *args):
    """Logs ``msg % args`` at INFO (see the module docstring)."""
    _log(logging.INFO, msg, args)


def warning(msg, *args, first_n=None):
    """Logs ``msg % args`` at WARNING; ``first_n``: TensorFlow's ``log_first_n`` is called."""
    _log(logging.WARNING, msg, args, first_n)


def error(msg, *args):
    """Logs ``msg % args`` at ERROR."""
    _log(logging.ERROR, msg, args)


class _VisibleHandler(logging.StreamHandler):
    """The handler pyhooks adds itself (recognised so it is added only once).

    It steps aside once the root logger or the ``tensorflow`` logger has a
    handler (the root gets one behind the user's back too: ``logging.info()``
    from any library calls ``basicConfig()``; TensorFlow adds its own): the
    record reaches that handler instead.
    """

    def emit(self, record):
        if logging.getLogger(LOGGER_NAME).propagate and (
                logging.getLogger().handlers or logging.getLogger("tensorflow").handlers):
            return
        super().emit(record)


def ensure_visible_logging() -> logging.Logger:
    """Makes INFO records of the ``"pyhooks"`` logger reach stderr if nothing else would.

    Does nothing if the root logger or the ``"pyhooks"`` logger already has a
    handler (the user configured logging). Otherwise attaches, once, a
    ``StreamHandler(sys.stderr)`` at level INFO and lowers the logger's level to
    INFO if it was unset.

    Returns:
        the ``"pyhooks"`` logger.

    Example:
        >>> log = ensure_visible_logging()
        >>> log.info("loss = 0.5")  # shown on stderr in a fresh interpreter
    """
    logger = _install()
    if logger.handlers or logging.getLogger().handlers:
        return logger
    handler = _VisibleHandler(sys.stderr)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return logger
