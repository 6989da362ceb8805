"""``NanTensorHook``: stop or fail when the loss diverges (NaN, and by default ±Inf)."""

from __future__ import annotations

import warnings
from math import isfinite

import numpy as np

from pyhooks import _logging
from pyhooks.errors import NanLossDuringTrainingError, NanLossWarning
from pyhooks.hook import SessionRunArgs, SessionRunHook
from pyhooks.hooks._common import (check_bool, global_step_read, one_of,
                                   to_numpy)
from pyhooks.hooks._lookup import graph_element

__all__ = ["NanLossWarning", "NanTensorHook"]

_SCALARS = frozenset({float, np.float32, np.float64, np.float16})


class NanTensorHook(SessionRunHook):
    """Watches the loss at every step; fails or stops when it diverges.

    The loss diverges when it is NaN, or (unless ``fail_on_inf=False``, which
    restores TensorFlow's NaN-only check) +Inf or -Inf; for a non-scalar loss,
    when any element does. The step reported is the global step (read from
    the session once the loss diverged) if the graph has one, else the
    number of runs so far.

    Args:
        loss_tensor: the loss tensor (or its name) to watch.
        fail_on_nan_loss: raise :class:`pyhooks.NanLossDuringTrainingError`
            (True) or warn with :class:`NanLossWarning`, log and request a stop.
        fail_on_inf: also treat ±Inf as divergence.

    Raises:
        TypeError: ``loss_tensor`` is None or a flag is not a boolean.

    Example:
        >>> hook = NanTensorHook(loss)
        >>> with pyhooks.MonitoredSession(hooks=[hook]) as sess:
        ...     sess.run(train_op)  # raises NanLossDuringTrainingError on divergence
    """

    def __init__(self, loss_tensor, fail_on_nan_loss=True, fail_on_inf=True):
        if loss_tensor is None or one_of(loss_tensor, ("",)) or isinstance(loss_tensor, bool):
            raise TypeError(f"`loss_tensor` must be a tensor or a tensor name, got "
                            f"{loss_tensor!r}.")
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = check_bool("fail_on_nan_loss", fail_on_nan_loss)
        self._fail_on_inf = check_bool("fail_on_inf", fail_on_inf)
        self.nan = None

    def begin(self):
        self._global_step_tensor = global_step_read("NanTensorHook", required=False)
        self._runs = 0
        self.nan = None  # (step, value) of the loss that stopped the loop (fail_on_nan_loss=False)
        # resolved now on every backend: a bad loss is named here, not by the session's run
        self._args = SessionRunArgs(graph_element(self._loss_tensor, "`loss_tensor`",
                                                  "NanTensorHook"))

    def before_run(self, run_context):
        return self._args

    def after_run(self, run_context, run_values):
        self._runs += 1
        loss = run_values.results
        if type(loss) not in _SCALARS and hasattr(loss, "_numpy_internal"):
            loss = to_numpy(loss, copy=False)  # a log value Keras left a tensor: read only
        if type(loss) in _SCALARS or (getattr(loss, "ndim", 0) == 0
                                      and not isinstance(loss, (list, tuple))):
            value = float(loss)  # a scalar, the usual case: no array work
            if isfinite(value) if self._fail_on_inf else value == value:
                return
        else:
            loss = np.asarray(loss)
            bad = np.isnan(loss) | (np.isinf(loss) if self._fail_on_inf else False)
            if not np.any(bad):
                return
            value = loss.flat[int(np.argmax(np.ravel(bad)))].item()
        step = self._runs
        if self._global_step_tensor is not None:  # read back: value + 1 may overshoot
            step = int(run_context.session.run(self._global_step_tensor))
        message = f"Model diverged with loss = {value} at step {step}."
        if self._fail_on_nan_loss:
            _logging.error("%s", message)
            raise NanLossDuringTrainingError(message, step=step, value=value)
        self.nan = (step, value)  # what stopped the loop: train()'s StopReason
        _logging.warning("%s Stopping training.", message)
        warnings.warn(f"{message} Stopping training.", NanLossWarning, stacklevel=2)
        run_context.request_stop()
