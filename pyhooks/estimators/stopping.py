"""Why a ``train()`` stopped: :class:`StopReason`, on its history and on its exception."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pyhooks.errors import NanLossDuringTrainingError

__all__ = ["REASONS", "StopReason", "stop_reason"]

REASONS = {
    "steps": "steps reached",
    "end_of_input": "input exhausted",
    "hook": "stopped by a hook",
    "nan": "loss not finite",
    "interrupt": "interrupted",
    "error": "error",
}


@dataclass(frozen=True)
class StopReason:
    """Why a ``train()`` call stopped.

    ``train()`` returns a history whose ``stop`` is one; an exception raised by
    ``train()`` carries it as ``error.pyhooks_stop``; ``Estimator.last_stop`` is
    that of the model's last call.

    Attributes:
        reason: ``"steps"`` (``steps``/``max_steps`` reached), ``"end_of_input"``,
            ``"hook"`` (a hook's ``request_stop()``), ``"nan"`` (a loss that was not
            finite: ``NanTensorHook``), ``"interrupt"`` (Ctrl-C, an R interrupt) or
            ``"error"``.
        step: the global step the model reached (for ``"nan"``: the step whose loss
            was not finite).
        hook: the hook that requested the stop or raised the error (its class name,
            ``session_run_hook()`` for an R hook), or None.
        method: the hook's method that raised (``"error"``, ``"interrupt"``), or None.
        value: the loss that was not finite (``"nan"``), or None.
        message: the error's type and message (``"error"``, ``"interrupt"``), or None.
    """

    reason: str
    step: int
    hook: str | None = None
    method: str | None = None
    value: float | None = None
    message: str | None = None

    def as_dict(self):
        return asdict(self)

    def __str__(self):
        text = f"{REASONS[self.reason]} at step {self.step}"
        if self.reason == "nan" and self.value is not None:
            text += f" (loss = {self.value})"
        if self.hook is not None:
            text += f": {self.hook}" + (f".{self.method}()" if self.method else "")
        if self.message is not None and self.reason == "error":
            text += f" ({self.message})"
        return text


def _name(hook):
    return getattr(hook, "hook_name", None) or type(hook).__name__


def stop_reason(step, exhausted=False, stopped_by=None, own_stop=None, error=None):
    """The :class:`StopReason` of a loop that reached ``step``.

    Args:
        step: the global step reached.
        exhausted: whether the input ran out.
        stopped_by: the hook whose ``after_run`` requested the stop, or None.
        own_stop: the ``StopAtStepHook`` ``train()`` added for its ``steps``.
        error: the exception the loop ended with, or None.
    """
    if error is not None:
        hook, method = getattr(error, "_pyhooks_raised_in", (None, None))
        message = f"{type(error).__name__}: {error}"
        if isinstance(error, NanLossDuringTrainingError):
            return StopReason("nan", step if error.step is None else error.step, hook, method,
                              error.value, message)
        if isinstance(error, KeyboardInterrupt):
            return StopReason("interrupt", step, hook, method, message=message)
        return StopReason("error", step, hook, method, message=message)
    if exhausted:
        return StopReason("end_of_input", step)
    if stopped_by is None or stopped_by is own_stop:
        return StopReason("steps", step)
    nan = getattr(stopped_by, "nan", None)
    if nan is not None and type(stopped_by).__name__ == "NanTensorHook":
        return StopReason("nan", nan[0], _name(stopped_by), value=nan[1])
    return StopReason("hook", step, _name(stopped_by))
