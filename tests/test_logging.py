"""pyhooks' log messages: TensorFlow's logging functions see each one, Python's logging
shows each one once, whatever handlers TensorFlow, absl, Keras or the application added.

In-process tests replace TensorFlow's logging functions (as TensorFlow's own tests
and log-capturing tools do); the subprocess tests count the lines a fresh
interpreter writes to stderr in an eager loop, a graph run and ``model.fit``.
"""

import logging
import subprocess
import sys
import textwrap
from unittest import mock

import pytest

from hooktest_util import counter_graph, run_loop

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks import _logging  # noqa: E402
from tensorflow.python.platform import tf_logging  # noqa: E402


def through(monkeypatch, name, prefix="x"):
    """Replaces TensorFlow's ``name`` function with one that records the messages starting
    with ``prefix`` (TensorFlow logs its own too), then logs as before."""
    calls, real = [], getattr(tf_logging, name)

    def recording(*args, **kwargs):
        if str(args[0] % args[1:] if len(args) > 1 else args[0]).startswith(prefix):
            calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(tf_logging, name, recording)
    return calls


def ours(caplog, level=logging.INFO):
    return [r.getMessage() for r in caplog.records if r.name == "pyhooks" and r.levelno == level]


def test_tensorflows_info_sees_each_message_and_python_logging_one_record(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    monkeypatch.setattr(logging.getLogger("tensorflow"), "level", logging.INFO)
    calls = through(monkeypatch, "info")
    g = counter_graph()
    with g.graph.as_default():
        run_loop([pyhooks.LoggingTensorHook({"x": g.loss}, every_n_iter=1)], g.train_op,
                 max_steps=3)
    assert [(args[0] % args[1:]).split(" (")[0] for args in calls] == ["x = 1.0", "x = 2.0",
                                                                       "x = 3.0"]
    assert [m.split(" (")[0] for m in ours(caplog)] == ["x = 1.0", "x = 2.0", "x = 3.0"]
    # TensorFlow's own record of them was dropped: the "pyhooks" record is the only one
    assert not [r for r in caplog.records
                if r.name == "tensorflow" and r.getMessage().startswith("x =")]


def test_a_formatters_text_is_what_tensorflows_info_gets(monkeypatch):
    calls = through(monkeypatch, "info")
    g = counter_graph()
    with g.graph.as_default():
        run_loop([pyhooks.LoggingTensorHook({"x": g.loss}, every_n_iter=1,
                                            formatter=lambda v: f"x is {v['x']:.0f}%")],
                 g.train_op, max_steps=2)
    assert calls == [("x is 1%",), ("x is 2%",)]


def test_a_replaced_function_that_logs_nothing_leaves_the_record_to_python(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="pyhooks")
    silent = mock.MagicMock()
    monkeypatch.setattr(tf_logging, "warning", silent)
    with tf.Graph().as_default():
        item = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(1)).get_next()
        hook = pyhooks.FinalOpsHook(item + 0)
        with pytest.raises(tf.errors.OutOfRangeError):
            with pyhooks.MonitoredSession(hooks=[hook]) as sess:
                sess.run(item)
    assert silent.call_count == 1
    assert "dependency back to some input source" in str(silent.call_args)
    [message] = ours(caplog, logging.WARNING)
    assert "dependency back to some input source" in message


def test_the_step_counters_warning_goes_through_log_first_n(monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="pyhooks")
    first_n = mock.MagicMock()
    monkeypatch.setattr(tf_logging, "log_first_n", first_n)
    g = counter_graph()
    with g.graph.as_default():
        run_loop([pyhooks.StepCounterHook(every_n_steps=1)], g.loss, max_steps=3)  # no step
    assert first_n.call_count == 2
    level, message, n = first_n.call_args[0][:3]
    assert (level, n) == (logging.WARNING, 5)
    assert "global step has not been increased" in message
    assert len(ours(caplog, logging.WARNING)) == 2


def test_a_handler_on_tensorflows_logger_gets_each_record_once(monkeypatch):
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("x ="):
                seen.append((record.name, record.getMessage()))
    tf_logger = logging.getLogger("tensorflow")
    monkeypatch.setattr(tf_logger, "handlers", [Keep()])
    monkeypatch.setattr(tf_logger, "level", logging.INFO)
    monkeypatch.setattr(logging.getLogger(), "handlers", [Keep()])  # and the root's, once more
    monkeypatch.setattr(logging.getLogger("pyhooks"), "level", logging.NOTSET)
    g = counter_graph()
    with g.graph.as_default():
        run_loop([pyhooks.LoggingTensorHook({"x": g.loss}, every_n_iter=2)], g.train_op,
                 max_steps=3)
    # two handlers without a stream of their own: each gets each record, once
    assert [m.split(" (")[0] for _, m in seen] == ["x = 1.0", "x = 1.0", "x = 3.0", "x = 3.0"]
    assert {name for name, _ in seen} == {"pyhooks"}  # TensorFlow's own copy was dropped


def test_handlers_writing_to_one_stream_write_each_record_once(monkeypatch, capsys):
    tf_handler = logging.StreamHandler(sys.stderr)  # what TensorFlow adds, and basicConfig
    tf_handler.setFormatter(logging.Formatter("TF %(name)s %(message)s"))
    root_handler = logging.StreamHandler(sys.stderr)
    root_handler.setFormatter(logging.Formatter("ROOT %(name)s %(message)s"))
    monkeypatch.setattr(logging.getLogger("tensorflow"), "handlers", [tf_handler])
    monkeypatch.setattr(logging.getLogger(), "handlers", [root_handler])
    monkeypatch.setattr(logging.getLogger("pyhooks"), "level", logging.INFO)
    _logging.info("hello %s", "there")
    assert capsys.readouterr().err == "ROOT pyhooks hello there\n"  # the application's format
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    _logging.info("now %d", 2)
    assert capsys.readouterr().err == "TF pyhooks now 2\n"


def test_r_style_handler_without_propagation_gets_each_record_once(monkeypatch):
    seen = []

    class RLike(logging.Handler):
        def emit(self, record):
            seen.append(self.format(record))
    handler = RLike()
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logger = logging.getLogger("pyhooks")
    monkeypatch.setattr(logger, "handlers", [handler])
    monkeypatch.setattr(logger, "propagate", False)
    monkeypatch.setattr(logger, "level", logging.INFO)
    monkeypatch.setattr(logging.getLogger("tensorflow"), "handlers",
                        [logging.StreamHandler(sys.stderr)])
    g = counter_graph()
    with g.graph.as_default():
        run_loop([pyhooks.LoggingTensorHook({"x": g.loss}, every_n_iter=1)], g.train_op,
                 max_steps=2)
    assert [line.split(" (")[0] for line in seen] == ["INFO:pyhooks:x = 1.0",
                                                      "INFO:pyhooks:x = 2.0"]


# --------------------------------------------------------------------------- fresh interpreters
PRELUDE = """
import logging, os, sys, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
import pyhooks
model_dir = tempfile.mkdtemp()
"""

SCRIPTS = {
    # issue 28: an eager loop with a Keras model; lines doubled after the first checkpoint
    "eager loop, Keras model": """
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.SGD(0.01)
        x, y = tf.ones((8, 3)), tf.zeros((8, 1))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return {"loss": loss}

        hooks = [pyhooks.CheckpointSaverHook(model_dir, save_steps=2,
                                             saver=tf.train.Checkpoint(model=model)),
                 pyhooks.LoggingTensorHook(["loss"], every_n_iter=2),
                 pyhooks.StopAtStepHook(last_step=5)]
        with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), hooks=hooks) as s:
            while not s.should_stop():
                s.run()
        """,
    # TensorFlow's handler first, then a root handler made behind the program's back
    "graph run, basicConfig midway": """
        tf.get_logger()
        with tf.Graph().as_default():
            step = tf.compat.v1.train.get_or_create_global_step()
            train = tf.compat.v1.assign_add(step, 1)
            hooks = [pyhooks.CheckpointSaverHook(model_dir, save_steps=2),
                     pyhooks.StopAtStepHook(last_step=5),
                     pyhooks.LoggingTensorHook({"step": step}, every_n_iter=2)]
            with pyhooks.MonitoredSession(hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    logging.info("a library logs through the root logger")  # basicConfig()
        """,
    # Keras fit, with absl's handler on the root logger as well as TensorFlow's
    "Keras fit, absl handler": """
        import absl.logging
        tf.get_logger()
        logging.root.addHandler(absl.logging.get_absl_handler())
        absl.logging.use_python_logging()
        logging.getLogger("pyhooks").setLevel("INFO")  # root's WARNING would hide them
        model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        hooks = [pyhooks.LoggingTensorHook(["loss"], every_n_iter=2,
                                           formatter=lambda v: "logged the loss"),
                 pyhooks.StepCounterHook(every_n_steps=2)]
        model.fit(tf.ones((16, 3)), tf.zeros((16, 1)), batch_size=2, epochs=1, verbose=0,
                  callbacks=[pyhooks.keras_callback(hooks)])
        """,
}
EXPECTED = {
    "eager loop, Keras model": {"Saving checkpoints for 0 ": 1, "Saving checkpoints for 2 ": 1,
                                "Saving checkpoints for 4 ": 1, "Saving checkpoints for 5 ": 1,
                                "loss = ": 3},
    "graph run, basicConfig midway": {"Saving checkpoints for 0 ": 1,
                                      "Saving checkpoints for 2 ": 1,
                                      "Saving checkpoints for 4 ": 1,
                                      "Saving checkpoints for 5 ": 1, "step = ": 3},
    "Keras fit, absl handler": {"logged the loss": 4, "global_step/sec: ": 3},
}


@pytest.mark.parametrize("case", list(SCRIPTS))
def test_each_message_is_written_once_to_stderr(case):
    script = PRELUDE + textwrap.dedent(SCRIPTS[case])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    counts = {text: sum(text in line for line in lines) for text in EXPECTED[case]}
    assert counts == EXPECTED[case], done.stderr
