import logging
import os
import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

from hooktest_util import FakeClock, counter_graph, make_session, run_loop
from pyhooks import _logging
from pyhooks.hooks.logging_tensor import LoggingTensorHook

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "pyhooks"]


@pytest.fixture
def info_logs(caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    return caplog


@pytest.mark.parametrize("kwargs, error, message", [
    ({}, ValueError,
     "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."),
    ({"every_n_iter": 1, "every_n_secs": 1}, ValueError,
     "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided."),
    ({"every_n_iter": 0}, ValueError, "invalid every_n_iter=0: `every_n_iter` must be positive, got 0."),
    ({"every_n_iter": 2.5}, ValueError, "`every_n_iter` must be a whole number, got 2.5."),
    ({"every_n_secs": -1.0}, ValueError, "`every_n_secs` must be positive, got -1.0."),
    ({"every_n_iter": 1, "formatter": "{}"}, TypeError, "`formatter` must be callable, got '{}'."),
    ({"every_n_iter": 1, "at_end": "yes"}, TypeError, "`at_end` must be True or False"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error) as info:
        LoggingTensorHook(["loss"], **kwargs)
    assert str(info.value).startswith(message)


def test_bad_tensors():
    with pytest.raises(TypeError, match="`tensors` must be a dict"):
        LoggingTensorHook(None, every_n_iter=1)
    with pytest.raises(ValueError, match="`tensors` must name at least one tensor"):
        LoggingTensorHook({}, every_n_iter=1)
    LoggingTensorHook("loss", every_n_iter=2.0)  # one name, whole float: fine


def test_every_n_iter_with_elapsed_time(info_logs):
    g = counter_graph()
    with g.graph.as_default():
        hook = LoggingTensorHook({"x": g.loss, "delta": "delta"}, every_n_iter=2)
        hook._timer.clock = FakeClock(tick=1.5)
        run_loop([hook], g.train_op, max_steps=5)
    assert lines(info_logs) == ["delta = 1.0, x = 1.0", "delta = 1.0, x = 3.0 (1.500 sec)",
                                "delta = 1.0, x = 5.0 (1.500 sec)"]


def test_list_of_names_keeps_order_and_at_end(info_logs):
    g = counter_graph()
    with g.graph.as_default():
        hook = LoggingTensorHook(["loss", g.delta], every_n_secs=3600, at_end=True)
        run_loop([hook], g.train_op, max_steps=3)
    assert lines(info_logs)[0] == "loss = 1.0, delta:0 = 1.0"
    assert lines(info_logs)[1].startswith("loss = 4.0, delta:0 = 1.0 (")  # end() runs loss again


def test_only_at_end(info_logs):
    g = counter_graph()
    with g.graph.as_default():
        run_loop([LoggingTensorHook({"x": g.x}, at_end=True)], g.train_op, max_steps=3)
    assert lines(info_logs) == ["x = 3.0"]


def test_formatters_with_one_or_two_arguments(info_logs):
    g = counter_graph()
    seen = []

    def two(values, elapsed_secs):
        seen.append(elapsed_secs)
        return f"two {values['x']}"

    with g.graph.as_default():
        hooks = [LoggingTensorHook({"x": g.loss}, every_n_iter=1,
                                   formatter=lambda values: f"one {values['x']}"),
                 LoggingTensorHook({"x": g.loss}, every_n_iter=1, formatter=two)]
        hooks[1]._timer.clock = FakeClock(tick=2.0)
        run_loop(hooks, g.train_op, max_steps=2)
    assert lines(info_logs) == ["one 1.0", "two 1.0", "one 2.0", "two 2.0"]
    assert seen == [None, 2.0]


@pytest.mark.parametrize("formatter, two", [
    (lambda values: "", False), (lambda values, elapsed_secs: "", True),
    (lambda values, sep=", ": "", False), (lambda *args: "", False), (str, False),
])
def test_formatter_arity(formatter, two):
    from pyhooks.hooks.logging_tensor import _takes_elapsed

    assert _takes_elapsed(formatter) is two


def test_bad_graph_elements():
    g = counter_graph()
    other = counter_graph()
    with g.graph.as_default():
        pair = tf.unique(tf.constant([1, 1, 2]), name="pair")  # noqa: F841 - two outputs
        with pytest.raises(ValueError, match="Name pair is ambiguous, as this `Operation` has "
                                             r"multiple outputs \(at least 2\)\."):
            make_session([LoggingTensorHook(["pair"], every_n_iter=1)])
    with g.graph.as_default():
        with pytest.raises(ValueError, match="should have graph attribute that is equal to current"):
            LoggingTensorHook([other.loss], every_n_iter=1).begin()


def test_under_tensorflow_monitored_session(info_logs):
    g = counter_graph()
    with g.graph.as_default():
        run_loop([LoggingTensorHook({"x": g.loss}, every_n_iter=2)], g.train_op, max_steps=3,
                 runner="tf")
    assert [m.split(" (")[0] for m in lines(info_logs)] == ["x = 1.0", "x = 3.0"]


def test_records_reach_tensorflows_logger_at_its_level(monkeypatch):
    """As TensorFlow's hooks' records: tf.get_logger().setLevel("INFO") shows them there
    (logging configured by the user: the root logger has a handler, pyhooks' has no level)."""
    tf_logger, ours = logging.getLogger("tensorflow"), logging.getLogger("pyhooks")
    levels = tf_logger.level, ours.level
    ours.setLevel(logging.NOTSET)  # setLevel: loggers cache what they are enabled for
    monkeypatch.setattr(logging.getLogger(), "handlers", [logging.NullHandler()])
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.name == "pyhooks":
                seen.append(record.getMessage())
    monkeypatch.setattr(tf_logger, "handlers", [Keep()])
    try:
        for level, expected in ((logging.INFO, ["x = 1.0", "x = 3.0"]), (logging.WARNING, [])):
            tf_logger.setLevel(level)
            seen.clear()
            g = counter_graph()
            with g.graph.as_default():
                run_loop([LoggingTensorHook({"x": g.loss}, every_n_iter=2)], g.train_op,
                         max_steps=3)
            assert [m.split(" (")[0] for m in seen] == expected
    finally:
        tf_logger.setLevel(levels[0])
        ours.setLevel(levels[1])


def test_ensure_visible_logging_attaches_one_handler(monkeypatch, capsys):
    logger = logging.getLogger("pyhooks")
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    _logging.ensure_visible_logging()
    _logging.ensure_visible_logging()
    assert len(logger.handlers) == 1 and logger.handlers[0].level == logging.INFO
    logger.info("loss = 1.0")
    assert capsys.readouterr().err == "INFO:pyhooks:loss = 1.0\n"


def test_logging_configured_later_shows_each_record_once(monkeypatch, capsys):
    logger = logging.getLogger("pyhooks")
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    _logging.ensure_visible_logging()
    logger.info("before")
    logging.info("a library logs through the root logger")  # calls basicConfig(): a root handler
    assert len(root.handlers) == 1
    logger.info("after")
    monkeypatch.setattr(logger, "propagate", False)  # the root handler no longer sees them
    logger.info("not propagated")
    assert capsys.readouterr().err == (
        "INFO:pyhooks:before\nINFO:pyhooks:after\nINFO:pyhooks:not propagated\n")


def test_configured_logging_left_alone(monkeypatch):
    logger = logging.getLogger("pyhooks")
    monkeypatch.setattr(logging.getLogger(), "handlers", [logging.NullHandler()])
    monkeypatch.setattr(logger, "handlers", [])
    _logging.ensure_visible_logging()
    assert logger.handlers == []


def test_visible_by_default_in_a_fresh_interpreter():
    script = textwrap.dedent("""
        import tensorflow as tf
        import pyhooks
        with tf.Graph().as_default():
            loss = tf.constant(0.5, name="loss")
            with pyhooks.MonitoredSession(hooks=[pyhooks.LoggingTensorHook(
                    ["loss"], every_n_iter=1)]) as sess:
                sess.run(loss)
    """)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    assert "INFO:pyhooks:loss = 0.5" in done.stderr.splitlines()


def test_a_resource_variable_named_logs_its_value(caplog):
    import logging as _logging

    import tensorflow as tf

    import pyhooks

    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        increment = step.assign_add(1)
        hook = pyhooks.LoggingTensorHook({"step": "global_step"}, every_n_iter=1)
        with caplog.at_level(_logging.INFO, logger="pyhooks"):
            with pyhooks.MonitoredSession(hooks=[hook]) as sess:
                sess.run(increment)
    assert any(record.getMessage().startswith("step = ") and record.getMessage()[7] in "01"
               for record in caplog.records), [r.getMessage() for r in caplog.records]
