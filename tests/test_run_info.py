"""``pyhooks.RunInfo``: what a loop's driver tells its hooks, on every backend.

Drivers (an estimator's ``train()``, ``keras_callback``, a user's own loop) never
write to the hooks they are given: a ``ProgressBarHook`` without a ``total``
reads the steps from ``run_info()``, a ``CheckpointSaverHook`` calls the run's
saving listeners besides its own. The guard below fails any write to a hook's
attributes that does not come from the hook's own code.
"""

from __future__ import annotations

import io
import os
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from pyhooks import estimators as est

v1 = tf.compat.v1
HOOK_CODE = os.path.join(os.path.dirname(pyhooks.__file__), "hooks") + os.sep


def guarded(hook):
    """``hook`` with a class whose ``__setattr__`` fails a write from outside pyhooks/hooks/."""
    cls = type(hook)

    def __setattr__(self, name, value):
        caller = sys._getframe(1).f_code.co_filename  # noqa: SLF001
        if not (caller.startswith(HOOK_CODE) or caller == __file__):
            raise AssertionError(f"{caller} wrote {cls.__name__}.{name}")
        object.__setattr__(self, name, value)

    hook.__class__ = type(f"Guarded{cls.__name__}", (cls,), {"__setattr__": __setattr__})
    return hook


class Seen(pyhooks.SessionRunHook):
    """Records the run info it is given in begin() and its steps at end()."""

    def begin(self):
        self.info = pyhooks.run_info()
        self.at_begin = self.info.steps

    def end(self, session):
        self.at_end = self.info.steps


class Listener(pyhooks.CheckpointSaverListener):
    def __init__(self):
        self.saved = []

    def after_save(self, session, global_step_value):
        self.saved.append(global_step_value)


def test_outside_any_driver_the_info_is_empty():
    info = pyhooks.run_info()
    assert (info.steps, info.saving_listeners, info.mode) == (None, (), None)


def test_nested_infos_restore_the_outer_one():
    with pyhooks.RunInfo(steps=3, mode="train") as outer:
        with pyhooks.RunInfo(steps=1, mode="eval"):
            assert pyhooks.run_info().mode == "eval"
        assert pyhooks.run_info() is outer
    assert pyhooks.run_info().steps is None


def test_steps_must_be_a_count():
    with pytest.raises(TypeError, match=r"`steps` must be a whole number >= 0 or None, got 2.5"):
        pyhooks.RunInfo(steps=2.5)


def graph_loop(hooks, steps):
    with tf.Graph().as_default():
        step = v1.train.get_or_create_global_step()
        w = v1.get_variable("w", [], initializer=v1.ones_initializer())
        loss = tf.square(w)
        v1.add_to_collection("losses", loss)
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with pyhooks.RunInfo(steps=steps, mode="train"):
            with pyhooks.MonitoredSession(hooks=hooks) as session:
                for _ in range(steps):
                    session.run(train)


def eager_loop(hooks, steps):
    w = tf.Variable(1.0)

    @tf.function
    def step():
        w.assign_sub(0.1 * w)
        return {"loss": tf.square(w)}

    with pyhooks.RunInfo(steps=steps, mode="train"):
        with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step), hooks=hooks) as session:
            for _ in range(steps):
                session.run()


def keras_fit(hooks, steps):  # 2 epochs of steps / 2 batches
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    x = np.arange(steps * 4, dtype=np.float32).reshape(-1, 1) / 10
    model.fit(x, 2 * x, batch_size=8, epochs=2, verbose=0,
              callbacks=[pyhooks.keras_callback(hooks)])


def estimator_train(hooks, steps):
    data = est.load_mtcars()
    model = est.linear_regressor(est.feature_columns(est.column_numeric("drat")))
    model.train(est.input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None),
                steps=steps, hooks=hooks)


BACKENDS = {"graph": graph_loop, "eager": eager_loop, "keras": keras_fit,
            "estimator": estimator_train}


@pytest.mark.parametrize("backend", BACKENDS)
def test_progress_bar_shows_the_drivers_steps_and_is_left_as_given(backend):
    out = io.StringIO()
    bar = guarded(pyhooks.ProgressBarHook(writer=out, mode="plain"))
    seen = Seen()
    BACKENDS[backend]([bar, seen], 4)
    assert out.getvalue().splitlines()[-1].startswith("Training 4/4 [")
    assert bar.total is None  # the hook as the caller made it
    assert seen.at_end == 4
    if backend != "keras":  # Keras knows its batches at the first epoch, after begin()
        assert seen.at_begin == 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bar_with_its_own_total_keeps_it(backend):
    out = io.StringIO()
    BACKENDS[backend]([pyhooks.ProgressBarHook(total=10, writer=out, mode="plain")], 4)
    assert " 4/10 [" in out.getvalue()


def test_estimator_lends_no_listener_to_the_callers_saver(tmp_path):
    data = est.load_mtcars()
    model = est.linear_regressor(est.feature_columns(est.column_numeric("drat")),
                                 model_dir=str(tmp_path / "m"))
    own, lent = Listener(), Listener()
    saver = guarded(pyhooks.CheckpointSaverHook(str(tmp_path / "m"), save_steps=2,
                                                listeners=[own]))
    bar, history = guarded(pyhooks.ProgressBarHook(writer=io.StringIO())), guarded(
        pyhooks.HistorySaverHook(every_n_step=1))
    nan = guarded(pyhooks.NanTensorHook("training_loss:0"))
    model.train(est.input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=4,
                hooks=[saver, bar, history, nan], saving_listeners=[lent])
    assert own.saved == lent.saved == [0, 2, 4]
    assert saver._listeners == [own]  # noqa: SLF001
    # a second call without listeners: the earlier call's listener is not called again
    model.train(est.input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=2,
                hooks=[saver])
    assert lent.saved == [0, 2, 4] and own.saved[-1] == 6


def test_a_users_hook_reads_the_estimators_listeners():
    seen = Seen()
    listener = Listener()
    data = est.load_mtcars()
    model = est.linear_regressor(est.feature_columns(est.column_numeric("drat")))
    model.train(est.input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=3,
                hooks=[seen], saving_listeners=[listener])
    # the caller's, then the estimator's own: it saves the hooks' state beside each checkpoint
    assert seen.info.saving_listeners[0] is listener and seen.info.mode == "train"
    assert [type(other).__name__ for other in seen.info.saving_listeners[1:]] == ["_Listener"]
    assert listener.saved[-1] == 3
