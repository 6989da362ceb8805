"""pyhooks' log output: through TensorFlow's logger, and visible when nobody configured logging.

Hooks whose whole purpose is output (``LoggingTensorHook``) log to the
``"pyhooks"`` logger at INFO. Python hides INFO records unless logging is
configured, which is how TensorFlow's hooks came to print nothing. When nobody
has configured logging, :func:`ensure_visible_logging` attaches one stderr
handler to the ``"pyhooks"`` logger; a configured application is left alone.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["LOGGER_NAME", "ensure_visible_logging"]

LOGGER_NAME = "pyhooks"


class _VisibleHandler(logging.StreamHandler):
    """The handler pyhooks adds itself (recognised so it is added only once).

    It steps aside once the root logger has a handler, which happens behind
    the user's back too (``logging.info()`` from any library calls
    ``basicConfig()``), or once the ``tensorflow`` logger has one (TensorFlow adds
    its own): the record reaches that handler, and is shown once.
    """

    def emit(self, record):
        if logging.getLogger(LOGGER_NAME).propagate and (
                logging.getLogger().handlers or logging.getLogger("tensorflow").handlers):
            return
        super().emit(record)


# pyhooks' records go where TensorFlow's hooks' go: through the ``tensorflow`` logger
# (its level and handlers: tf.get_logger().setLevel("INFO") shows them), then the root's.
logging.getLogger(LOGGER_NAME).parent = logging.getLogger("tensorflow")


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
    logger = logging.getLogger(LOGGER_NAME)
    if logger.handlers or logging.getLogger().handlers:
        return logger
    handler = _VisibleHandler(sys.stderr)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return logger
