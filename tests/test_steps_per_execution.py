"""Several steps per call: run_config(steps_per_execution=), EagerSessionCreator(steps_per_execution=),
Keras compile(steps_per_execution=) under keras_callback; and the hooks' count."""

import io
import os
import re

import numpy as np
import pytest

import pyhooks
from pyhooks.hooks._common import global_step_read

tf = pytest.importorskip("tensorflow")


def _columns(n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = {f"x{i}": rng.normal(size=n).astype("float32") for i in range(3)}
    return x, (x["x0"] > 0).astype("int64")


def _estimator(tmp_path, spe, kind="dnn", **config):
    x, _ = _columns()
    fcs = pyhooks.feature_columns(*[pyhooks.column_numeric(k) for k in x])
    config = pyhooks.run_config(steps_per_execution=spe, **config)
    if kind == "dnn":
        return pyhooks.dnn_classifier([8], fcs, model_dir=str(tmp_path), config=config)
    return pyhooks.linear_classifier(fcs, model_dir=str(tmp_path), config=config)


def _input(batch_size=32, num_epochs=None):
    x, y = _columns()
    return pyhooks.input_fn({**x, "y": y}, response="y", features=list(x),
                            batch_size=batch_size, num_epochs=num_epochs)


def _checkpoints(model_dir):
    return sorted(int(m.group(1)) for f in os.listdir(model_dir)
                  if (m := re.fullmatch(r"model\.ckpt-(\d+)\.index", f)))


def _event_steps(model_dir, tag_end):
    steps = []
    for name in sorted(os.listdir(model_dir)):
        if name.startswith("events.out"):
            for event in tf.compat.v1.train.summary_iterator(os.path.join(model_dir, name)):
                steps += [event.step for v in event.summary.value if v.tag.endswith(tag_end)]
    return steps


class _StepsSeen(pyhooks.SessionRunHook):
    """Records the global step after every call (read from the session)."""

    def begin(self):
        self.read = tf.compat.v1.train.get_global_step()
        self.steps = []

    def after_run(self, run_context, run_values):
        self.steps.append(int(run_context.session.run(self.read)))


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_calls_run_n_steps_and_the_last_call_stops_at_the_exact_step(tmp_path, kind):
    est = _estimator(tmp_path, 10, kind, save_checkpoints_steps=20)
    seen = _StepsSeen()
    history = est.train(_input(), steps=35, hooks=[seen, pyhooks.HistorySaverHook(every_n_step=10)])
    assert seen.steps == [10, 20, 30, 35]
    assert history.to_dict()["steps"] == [10, 20, 30, 35]
    assert _checkpoints(tmp_path) == [0, 20, 35]
    # the next call continues from 35 and runs 10 more, the last call 5
    seen = _StepsSeen()
    est.train(_input(), steps=15, hooks=[seen])
    assert seen.steps == [45, 50]
    assert est.latest_checkpoint().endswith("model.ckpt-50")


def test_one_step_per_call_is_unchanged(tmp_path):
    seen = _StepsSeen()
    _estimator(tmp_path, 1).train(_input(), steps=3, hooks=[seen])
    assert seen.steps == [1, 2, 3]


def test_checkpoints_come_at_the_first_call_reaching_their_step(tmp_path):
    est = _estimator(tmp_path, 10, save_checkpoints_steps=15)
    est.train(_input(), steps=50)
    assert _checkpoints(tmp_path) == [0, 20, 40, 50]


def test_step_counter_measures_at_the_calls_reaching_its_period(tmp_path):
    est = _estimator(tmp_path, 5, log_step_count_steps=None, save_summary_steps=None)
    out = tmp_path / "counter"
    est.train(_input(), steps=40, hooks=[pyhooks.StepCounterHook(every_n_steps=10,
                                                                 output_dir=str(out))])
    # the first call (step 5) starts the clock; then every call reaching 10 more steps
    assert _event_steps(str(out), "/sec") == [15, 25, 35]


def test_a_users_stop_at_step_hook_stops_after_the_call_reaching_its_step(tmp_path):
    seen = _StepsSeen()
    _estimator(tmp_path, 10).train(_input(), steps=100,
                                   hooks=[seen, pyhooks.StopAtStepHook(last_step=25)])
    assert seen.steps == [10, 20, 30]


def test_progress_bar_counts_the_steps_of_each_call(tmp_path):
    text = io.StringIO()
    bar = pyhooks.ProgressBarHook(writer=text)
    _estimator(tmp_path, 10).train(_input(), steps=25, hooks=[bar])
    assert bar.steps == 25
    assert "25/25" in text.getvalue()


def test_finite_epochs_bound_the_last_call(tmp_path):
    seen = _StepsSeen()
    # 600 rows, batch 32, 1 epoch: 19 batches
    _estimator(tmp_path, 10).train(_input(num_epochs=1), hooks=[seen])
    assert seen.steps == [10, 19]


def test_hooks_told_through_run_info_in_a_plain_loop(tmp_path):
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = step.assign_add(5)
        hooks = [pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=10),
                 pyhooks.StopAtStepHook(last_step=20)]
        with pyhooks.RunInfo(steps_per_run=5):
            with pyhooks.MonitoredSession(hooks=hooks) as session:
                while not session.should_stop():
                    session.run(train_op)
        assert _checkpoints(tmp_path) == [0, 10, 20]


def test_bad_values_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="steps_per_execution"):
        pyhooks.run_config(steps_per_execution=0)
    with pytest.raises(ValueError, match="steps_per_execution"):
        pyhooks.run_config(steps_per_execution=2.5)
    with pytest.raises(TypeError, match="steps_per_run"):
        pyhooks.RunInfo(steps_per_run=0)
    with pytest.raises(ValueError, match="steps_per_run"):
        pyhooks.StepCounterHook()._set_steps_per_run(0)


def test_custom_estimators_refuse_several_steps_per_call(tmp_path):
    def model_fn(features, labels, mode):
        raise AssertionError("not built")

    est = pyhooks.estimator(model_fn, config=pyhooks.run_config(steps_per_execution=2))
    with pytest.raises(ValueError, match="steps_per_execution"):
        est.train(_input(), steps=2)


# --------------------------------------------------------------------------- eager backend
def _eager_step(batches=None, seed=0):
    """A tf.function training a linear model on 32-row batches (``batches``: one pass of
    that many, else forever), and the variable counting its calls."""
    x, y = _columns(seed=seed)
    data = tf.data.Dataset.from_tensor_slices((np.stack(list(x.values()), 1),
                                               y.astype("float32")[:, None])).batch(32)
    data = data.repeat().take(batches) if batches else data.repeat()
    iterator = iter(data)
    w, calls = tf.Variable(tf.zeros([3, 1])), tf.Variable(0, dtype=tf.int64)

    @tf.function
    def step():
        features, labels = next(iterator)
        with tf.GradientTape() as tape:
            per_example = tf.squeeze((features @ w - labels) ** 2, 1)
            loss = tf.reduce_sum(per_example)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return {"loss": loss, "losses": per_example, "calls": calls.assign_add(1)}

    return step, w


class _EagerStepsSeen(pyhooks.SessionRunHook):
    """The global step before every run (fetched) and after it (read), and the run's outputs."""

    def begin(self):
        self.read = global_step_read("_EagerStepsSeen")  # the eager backend's
        self.before, self.after, self.calls = [], [], []

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs((self.read, "calls"))

    def after_run(self, run_context, run_values):
        self.before.append(int(run_values.results[0]))
        self.calls.append(int(run_values.results[1]))
        self.after.append(int(run_context.session.run(self.read)))


def _eager_train(tmp_path, spe, stop, batches=None, more=()):
    step, w = _eager_step(batches)
    creator = pyhooks.EagerSessionCreator(step, steps_per_execution=spe)
    saver = tf.train.Checkpoint(w=w, step=creator.global_step)
    seen = _EagerStepsSeen()
    hooks = dict(
        seen=seen, history=pyhooks.HistorySaverHook(every_n_step=10),
        checkpoint=pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=10, saver=saver),
        counter=pyhooks.StepCounterHook(every_n_steps=10, output_dir=str(tmp_path / "counter")),
        bar=pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain"), stop=stop)
    with pyhooks.MonitoredSession(creator, hooks=[*hooks.values(), *more]) as session:
        while not session.should_stop():
            session.run()
    return creator, hooks


def _eager_summary(creator, hooks, tmp_path):
    return dict(step=int(creator.global_step.numpy()),
                history=hooks["history"].history.to_dict()["steps"],
                checkpoints=_checkpoints(tmp_path), bar=hooks["bar"].steps,
                counted=_event_steps(str(tmp_path / "counter"), "/sec"))


@pytest.mark.parametrize("stop", ["last_step", "num_steps"])
def test_eager_calls_run_n_steps_and_the_hooks_count_as_with_one_step_per_call(tmp_path, stop):
    make_stop = lambda: pyhooks.StopAtStepHook(**{stop: 35})  # noqa: E731
    one = _eager_summary(*_eager_train(tmp_path / "1", 1, make_stop()), tmp_path / "1")
    creator, hooks = _eager_train(tmp_path / "10", 10, make_stop())
    ten = _eager_summary(creator, hooks, tmp_path / "10")
    seen = hooks["seen"]
    assert seen.before == [0, 10, 20, 30] and seen.after == [10, 20, 30, 35]  # the last: exact
    assert seen.calls == [10, 20, 30, 35]  # the outputs are the last step's of the call
    assert one["step"] == ten["step"] == 35
    assert one["history"] == ten["history"] == [10, 20, 30, 35]
    assert one["checkpoints"] == ten["checkpoints"] == [0, 10, 20, 30, 35]
    assert one["bar"] == ten["bar"] == 35
    # the first measurement starts the clock; then every call reaching 10 more steps
    assert one["counted"] == [11, 21, 31] and ten["counted"] == [20, 30]


def test_eager_calls_stop_at_the_first_stop_at_step_hooks_step(tmp_path):
    creator, hooks = _eager_train(tmp_path, 10, pyhooks.StopAtStepHook(last_step=100),
                                  more=[pyhooks.StopAtStepHook(last_step=17)])
    assert hooks["seen"].after == [10, 17] and int(creator.global_step.numpy()) == 17


def test_eager_input_running_out_inside_a_call_keeps_its_steps(tmp_path):
    creator, hooks = _eager_train(tmp_path, 10, pyhooks.StopAtStepHook(last_step=100),
                                  batches=25)
    # the third call ran 5 steps and raised OutOfRangeError: the loop ends, end() is called
    assert hooks["seen"].after == [10, 20] and int(creator.global_step.numpy()) == 25
    assert _checkpoints(tmp_path)[-1] == 25


def test_eager_steps_per_execution_follows_a_step_moving_its_own_global_step(tmp_path):
    step, w = _eager_step()
    counter = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def own():
        outputs = step()
        counter.assign_add(1)
        return outputs

    creator = pyhooks.EagerSessionCreator(own, global_step=counter, steps_per_execution=4)
    seen = _EagerStepsSeen()
    with pyhooks.MonitoredSession(creator, hooks=[seen, pyhooks.StopAtStepHook(last_step=10)]) \
            as session:
        while not session.should_stop():
            session.run()
    assert seen.after == [4, 8, 10] and int(counter.numpy()) == 10


def test_eager_steps_per_execution_refuses_what_it_cannot_loop():
    step, _ = _eager_step()
    with pytest.raises(TypeError, match="steps_per_execution.*tf.function"):
        pyhooks.EagerSessionCreator(lambda: step(), steps_per_execution=2)
    with pytest.raises(ValueError, match="steps_per_execution"):
        pyhooks.EagerSessionCreator(step, steps_per_execution=0)
    with pytest.raises(ValueError, match="steps_per_execution"):
        pyhooks.EagerSessionCreator(step, steps_per_execution=2.5)
    with pytest.raises(ValueError, match="steps_per_execution.*strategy"):
        pyhooks.EagerSessionCreator(step, steps_per_execution=2,
                                    strategy=tf.distribute.get_strategy())
    creator = pyhooks.EagerSessionCreator(step, steps_per_execution=2)
    with pyhooks.RunInfo(steps_per_run=3), pytest.raises(ValueError, match="steps_per_run=3"):
        pyhooks.MonitoredSession(creator, hooks=[pyhooks.StopAtStepHook(1)])


# --------------------------------------------------------------------------- Keras fit
def _keras_fit(tmp_path, spe, last_step, epochs=2):
    """``model.fit`` of 8 batches an epoch with the everyday hooks; what they recorded."""
    keras = pytest.importorskip("keras")
    keras.utils.set_random_seed(0)
    x, y = _columns(256)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=spe)
    model.optimizer.build(model.trainable_variables)
    hooks = dict(
        seen=_KerasStepsSeen(), history=pyhooks.HistorySaverHook(every_n_step=2),
        checkpoint=pyhooks.CheckpointSaverHook(str(tmp_path), save_steps=4,
                                               saver=tf.train.Checkpoint(model=model)),
        counter=pyhooks.StepCounterHook(every_n_steps=4, output_dir=str(tmp_path / "counter")),
        bar=pyhooks.ProgressBarHook(writer=io.StringIO(), mode="plain"),
        stop=pyhooks.StopAtStepHook(last_step=last_step))
    model.fit(np.stack(list(x.values()), 1), y.astype("float32"), batch_size=32, epochs=epochs,
              verbose=0, callbacks=[pyhooks.keras_callback(list(hooks.values()))])
    return dict(step=int(model.optimizer.iterations.numpy()), before=hooks["seen"].before,
                after=hooks["seen"].after,
                history=hooks["history"].history.to_dict()["steps"],
                checkpoints=_checkpoints(tmp_path), bar=hooks["bar"].steps,
                counted=_event_steps(str(tmp_path / "counter"), "/sec"))


class _KerasStepsSeen(_EagerStepsSeen):
    """The global step after every call (Keras' logs have no ``calls``)."""

    def before_run(self, run_context):
        return pyhooks.SessionRunArgs(self.read)

    def after_run(self, run_context, run_values):
        self.before.append(int(run_values.results))
        self.after.append(int(run_context.session.run(self.read)))


def test_keras_steps_per_execution_hooks_count_the_steps_each_call_made(tmp_path):
    one = _keras_fit(tmp_path / "1", 1, last_step=100)
    three = _keras_fit(tmp_path / "3", 3, last_step=100)
    # 8 batches an epoch in calls of 3, 3 and 2 (Keras reports the last as batches 6-8)
    assert three["before"] == [0, 3, 6, 8, 11, 14] and three["after"] == [3, 6, 8, 11, 14, 16]
    assert one["step"] == three["step"] == 16 and one["bar"] == three["bar"] == 16
    assert one["history"] == list(range(2, 17, 2))
    assert three["history"] == [3, 6, 8, 11, 14, 16]  # the first call reaching each row
    assert one["checkpoints"] == [0, 4, 8, 12, 16] and three["checkpoints"] == [0, 6, 11, 16]
    assert one["counted"] == [5, 9, 13] and three["counted"] == [8, 14]


def test_keras_steps_per_execution_stops_after_the_call_reaching_the_step(tmp_path):
    result = _keras_fit(tmp_path, 3, last_step=13)
    assert result["after"] == [3, 6, 8, 11, 14] and result["step"] == 14
    assert result["checkpoints"][-1] == 14 and result["bar"] == 14


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_every_kind_of_column_trains_as_with_one_step_per_call(tmp_path, kind):
    # Lookup tables (vocabularies) live in the graph itself, not in the steps loop's body.
    rng = np.random.default_rng(1)
    n = 400
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("a\nb\nc\n")
    data = {"x": rng.normal(size=n).astype("float32"), "w": rng.uniform(size=n).astype("float32"),
            "s": rng.choice(["a", "b", "c", "d"], n), "i": rng.integers(0, 4, n)}
    data["t"] = data["u"] = data["s"]
    y = (data["x"] > 0).astype("int64")
    categorical = [pyhooks.column_categorical_with_vocabulary_list("s", ["a", "b", "c"]),
                   pyhooks.column_categorical_with_vocabulary_file("t", str(vocab_file)),
                   pyhooks.column_categorical_with_identity("i", 4),
                   pyhooks.column_categorical_with_hash_bucket("u", 5),
                   pyhooks.column_bucketized(pyhooks.column_numeric("x"), [-1.0, 0.0, 1.0]),
                   pyhooks.column_crossed(["s", "i"], 7)]
    weighted = pyhooks.column_categorical_weighted(
        pyhooks.column_categorical_with_identity("i", 4), "w")
    if kind == "dnn":
        columns = [pyhooks.column_indicator(c) for c in categorical]
        columns.append(pyhooks.column_embedding(categorical[0], 2))
    else:
        columns = [*categorical, weighted]
    results = []
    for spe in (1, 5):
        config = pyhooks.run_config(steps_per_execution=spe, tf_random_seed=3)
        fcs = pyhooks.feature_columns(pyhooks.column_numeric("x"), *columns)
        model_dir = str(tmp_path / f"spe{spe}")
        est = (pyhooks.dnn_classifier([4], fcs, model_dir=model_dir, config=config)
               if kind == "dnn" else pyhooks.linear_classifier(fcs, model_dir=model_dir,
                                                                config=config))
        data_fn = pyhooks.input_fn({**data, "y": y}, response="y", features=list(data),
                                   batch_size=16, shuffle=False, num_epochs=None)
        history = est.train(data_fn, steps=12)
        assert history.to_dict()["steps"][-1] == 12
        results.append(est.evaluate(pyhooks.input_fn({**data, "y": y}, response="y",
                                                     features=list(data), batch_size=64,
                                                     shuffle=False, num_epochs=1))["loss"])
    assert results[1] == pytest.approx(results[0], rel=1e-5)
