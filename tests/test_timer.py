import pytest

from pyhooks import NeverTriggerTimer, SecondOrStepTimer
from pyhooks.timer import check_positive


def test_needs_exactly_one_period():
    with pytest.raises(ValueError, match="Either every_secs or every_steps should be provided."):
        SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps."):
        SecondOrStepTimer(every_secs=1, every_steps=1)


def test_steps_trigger():
    timer = SecondOrStepTimer(every_steps=3)
    now = [10.0]
    timer.clock = lambda: now[0]
    assert timer.should_trigger_for_step(1)
    assert timer.update_last_triggered_step(1) == (None, None)
    assert not timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(3)
    assert timer.should_trigger_for_step(4)
    now[0] = 12.5
    assert timer.update_last_triggered_step(4) == (2.5, 3)
    assert timer.last_triggered_step() == 4
    timer.reset()
    assert timer.should_trigger_for_step(4)


def test_seconds_trigger_with_fake_clock():
    now = [100.0]
    timer = SecondOrStepTimer(every_secs=2)
    timer.clock = lambda: now[0]
    timer.update_last_triggered_step(0)
    now[0] = 101.9
    assert not timer.should_trigger_for_step(5)
    now[0] = 102.0
    assert timer.should_trigger_for_step(5)
    assert timer.update_last_triggered_step(5) == (2.0, 5)


def test_a_resumed_step_timer_keeps_the_schedule_and_starts_its_own_clock():
    timer = SecondOrStepTimer(every_steps=3)
    timer.resume(7)
    assert timer.last_triggered_step() == 7
    assert not timer.should_trigger_for_step(9)
    assert timer.should_trigger_for_step(10)
    assert timer.update_last_triggered_step(10) == (None, None)  # no time from another process
    with pytest.raises(ValueError, match=r"resume\(\): only a timer of steps"):
        SecondOrStepTimer(every_secs=2).resume(7)


def test_step_timer_never_reads_clock():
    timer = SecondOrStepTimer(every_steps=2)

    def clock():
        raise AssertionError("clock read")

    timer.update_last_triggered_step(0)
    timer.clock = clock
    assert not timer.should_trigger_for_step(1)
    assert timer.should_trigger_for_step(2)


def test_never_trigger_timer():
    timer = NeverTriggerTimer()
    assert not timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(5) == (None, None)
    assert timer.last_triggered_step() is None


@pytest.mark.parametrize("value, expected", [(2, 2), (2.0, 2), (7, 7)])
def test_check_positive_accepts_whole_numbers(value, expected):
    result = check_positive("every_steps", value, integer=True)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value, error, message", [
    (2.5, ValueError, r"`every_steps` must be a whole number, got 2.5"),
    (0, ValueError, r"`every_steps` must be positive, got 0"),
    (-3, ValueError, r"`every_steps` must be positive, got -3"),
    ("3", TypeError, r"`every_steps` must be a whole number, got '3' \(str\)"),
    (True, TypeError, r"got True \(bool\)"),
    (float("nan"), ValueError, r"must be a finite number, got nan"),
])
def test_check_positive_rejects(value, error, message):
    with pytest.raises(error, match=message):
        check_positive("every_steps", value, integer=True)


def test_timer_validates_periods():
    with pytest.raises(ValueError, match="`every_steps` must be a whole number, got 2.5"):
        SecondOrStepTimer(every_steps=2.5)
    with pytest.raises(ValueError, match="`every_secs` must be positive, got -1"):
        SecondOrStepTimer(every_secs=-1)
    assert SecondOrStepTimer(every_secs=0.5)._every_secs == 0.5
