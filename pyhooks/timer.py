"""When a periodic hook fires: every N steps or every N seconds.

Same semantics and messages as TensorFlow's ``SecondOrStepTimer``; the clock is
an attribute (``timer.clock``) that tests replace. ``should_trigger_for_step``
compares step counts first and reads the clock only when it must.
"""

from __future__ import annotations

import time

__all__ = ["NeverTriggerTimer", "SecondOrStepTimer", "check_positive"]


def check_positive(name, value, *, integer, allow_none=True, allow_zero=False):
    """Validates a count or a period: a positive number (a whole one if ``integer``).

    Whole floats such as ``2.0`` (what R sends for ``2``) are accepted as
    integers; ``2.5``, ``0``, negatives, NaN, bools and strings are not.

    Returns:
        the value as ``int`` (if ``integer``) or ``float``; ``None`` stays ``None``.
    Raises:
        TypeError / ValueError naming ``name`` and the value.
    """
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"`{name}` is required, got None.")
    kind = "a whole number" if integer else "a number"
    if isinstance(value, (bool, str, bytes)):
        raise TypeError(f"`{name}` must be {kind}, got {value!r} ({type(value).__name__}).")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be {kind}, got {value!r} ({type(value).__name__}).") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"`{name}` must be a finite number, got {value!r}.")
    if integer:
        if not number.is_integer():
            raise ValueError(f"`{name}` must be a whole number, got {value!r}.")
        result = int(value) if isinstance(value, int) else int(number)
    else:
        result = number
    if result < 0 or (result == 0 and not allow_zero):
        bound = "zero or more" if allow_zero else "positive"
        raise ValueError(f"`{name}` must be {bound}, got {value!r}.")
    return result


class SecondOrStepTimer:
    """Triggers at most once every ``every_secs`` seconds or every ``every_steps`` steps.

    Args:
        every_secs: period in seconds, or None.
        every_steps: period in steps, or None. Exactly one of the two.

    Example:
        >>> timer = SecondOrStepTimer(every_steps=10)
        >>> timer.should_trigger_for_step(0)
        True
    """

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = check_positive("every_secs", every_secs, integer=False)
        self._every_steps = check_positive("every_steps", every_steps, integer=True)
        self.clock = time.time
        self.reset()

    def reset(self):
        """Forgets the last trigger: the next step triggers."""
        self._last_triggered_step = None
        self._last_triggered_time = None

    def resume(self, step):
        """Continues a schedule of steps whose last trigger was at ``step`` (in a process
        that ended): the next trigger is due ``every_steps`` after it, and, as a first
        trigger, returns no elapsed time (the clock of that process is not this one's).

        Raises:
            ValueError: the timer counts seconds, whose schedule is its clock.
        """
        if self._every_steps is None:
            raise ValueError("SecondOrStepTimer.resume(): only a timer of steps can resume "
                             "(this one triggers every N seconds).")
        self._last_triggered_step = step
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """True if ``step`` is due (always true before the first trigger)."""
        last = self._last_triggered_step
        if last is None:
            return True
        if last == step:
            return False
        if self._every_steps is not None:
            return step >= last + self._every_steps
        return self.clock() >= self._last_triggered_time + self._every_secs

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``.

        Returns:
            ``(elapsed_secs, elapsed_steps)`` since the previous trigger, or
            ``(None, None)`` for the first one.
        """
        now = self.clock()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


class NeverTriggerTimer:
    """A timer that never triggers (for hooks that only act at the end)."""

    def reset(self):
        pass

    def should_trigger_for_step(self, step):
        return False

    def update_last_triggered_step(self, step):
        return (None, None)

    def last_triggered_step(self):
        return None
