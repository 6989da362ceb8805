"""Keeping TensorFlow's own noise off the user's console, inside pyhooks' calls only.

Three sources of noise, three remedies, none of them global:

* Python deprecation notices (``tf_logging`` "... is deprecated and will be
  removed"): :func:`quiet` turns TensorFlow's deprecation printer off and lifts
  the ``tensorflow``/``absl`` loggers to ERROR for the duration of the block,
  then restores both.
* Python ``warnings`` raised by TensorFlow/Keras modules: ignored inside the
  block (``warnings.catch_warnings``); warnings of other modules (user hooks,
  pyhooks' own) are untouched.
* C++ one-time notices (oneDNN, ``cpu_feature_guard``, absl's "All log
  messages before absl::InitializeLog()", "MLIR V1 optimization pass is not
  enabled"): written to file descriptor 2 while TensorFlow is imported and when
  the process's first graph is optimized. :func:`native_stderr_filtered`
  captures fd 2 around exactly those moments (the import, building an
  estimator's graph and starting its session) and writes back every line that
  is not one of these known notices.

Only graph building and session set-up run under :func:`quiet`; the training
loop itself (where user hooks log) runs with the user's settings, so a
``LoggingTensorHook``'s output is never hidden.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
import warnings

__all__ = ["import_tensorflow", "native_stderr_filtered", "quiet"]

_NOISE = re.compile(
    r"oneDNN custom operations|cpu_feature_guard|This TensorFlow binary is optimized|"
    r"To enable the following instructions|rebuild TensorFlow with the appropriate compiler|"
    r"absl::InitializeLog|Unable to register cu(DNN|FFT|BLAS) factory|"
    r"TF-TRT Warning|Could not find cuda drivers|computation placer already registered|"
    r"cuda_(dnn|fft|blas|executor)\.cc|TensorFloat-32|MLIR V1 optimization pass is not enabled|"
    r"mlir_graph_optimization_pass")

_tf = None


@contextlib.contextmanager
def native_stderr_filtered():
    """Captures file descriptor 2 for the block; writes back the lines that are not known noise.

    For the few places where TensorFlow's C++ runtime logs its one-time notices
    (import, the first graph optimization of the process); never around the
    training loop.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real fd 2 (embedded interpreters)
        yield
        return
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode("utf-8", "replace")
            kept = [line for line in text.splitlines(keepends=True) if not _NOISE.search(line)]
            if kept:
                try:
                    sys.stderr.write("".join(kept))
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass


def import_tensorflow():
    """``import tensorflow``, without TensorFlow's C++ start-up notices on stderr."""
    global _tf
    if _tf is None:
        if "tensorflow" in sys.modules:
            import tensorflow as tf
        else:
            with native_stderr_filtered():
                import tensorflow as tf
        _tf = tf
    return _tf


@contextlib.contextmanager
def quiet():
    """Silences TensorFlow's deprecation notices and warnings for the block only."""
    tf_logger = logging.getLogger("tensorflow")
    absl_logger = logging.getLogger("absl")
    levels = (tf_logger.level, absl_logger.level)
    deprecation = sys.modules.get("tensorflow.python.util.deprecation")
    printing = getattr(deprecation, "_PRINT_DEPRECATION_WARNINGS", None)
    tf_logger.setLevel(logging.ERROR)
    absl_logger.setLevel(logging.ERROR)
    if printing is not None:
        deprecation._PRINT_DEPRECATION_WARNINGS = False  # noqa: SLF001
    try:
        with warnings.catch_warnings():
            for module in ("tensorflow", "keras", "tf_keras", "absl", "google.protobuf"):
                warnings.filterwarnings("ignore", module=module)
            yield
    finally:
        tf_logger.setLevel(levels[0])
        absl_logger.setLevel(levels[1])
        if printing is not None:
            deprecation._PRINT_DEPRECATION_WARNINGS = printing  # noqa: SLF001
