"""Early stopping on evaluation results (tf.estimator's stop_if_* hooks).

The rules are checked on evaluations written as estimators write them
(``write_metrics``), read back from real event files, in a real session; then
through ``train_and_evaluate()`` on one process and on a two-worker cluster.
"""

import os
import warnings

import numpy as np
import pytest

from hooktest_util import FakeClock, counter_graph

tf = pytest.importorskip("tensorflow")

import pyhooks  # noqa: E402
from pyhooks.estimators import (eval_spec, load_mtcars, run_config, train_and_evaluate,  # noqa: E402
                                train_spec)
from pyhooks.errors import PyhooksWarning  # noqa: E402
from pyhooks.estimators.tensorboard import write_metrics  # noqa: E402
from pyhooks.hooks import read_eval_metrics  # noqa: E402

# steps, loss, accuracy: the loss is lowest at 3000, the accuracy highest at 3000
EVALUATIONS = [(1000, 0.8, 0.5), (2000, 0.7, 0.6), (3000, 0.4, 0.7), (3500, 0.41, 0.68)]


@pytest.fixture()
def model(tmp_path):
    """An estimator whose model_dir/eval holds EVALUATIONS."""
    fcs = pyhooks.feature_columns(pyhooks.column_numeric("drat"))
    est = pyhooks.linear_regressor(fcs, config=run_config(model_dir=str(tmp_path / "model")))
    for step, loss, accuracy in EVALUATIONS:
        write_metrics(est.model_dir, None, {"loss": loss, "accuracy": accuracy}, step)
    return est


def stops(hook, runs=1):
    """Whether ``runs`` runs of a real session with ``hook`` end with a stop requested.

    A rule whose ``min_steps`` is past every evaluation of EVALUATIONS had none to act on:
    its warning is expected (any other PyhooksWarning fails the test, see pyproject.toml).
    """
    rule = hook.should_stop_fn
    unused = getattr(rule, "min_steps", 0) > EVALUATIONS[-1][0]
    g = counter_graph()
    with g.graph.as_default(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PyhooksWarning)
        with pyhooks.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(runs):
                sess.run(g.train_op)
            stopped = sess.should_stop()
    said = [str(w.message) for w in caught if issubclass(w.category, PyhooksWarning)]
    assert said == ([f"{rule.hook_name}: {rule.eval_dir} has no evaluation from step "
                     f"{rule.min_steps} on, so it could not stop training. It reads the "
                     "evaluations that train_and_evaluate() writes after checkpoint saves "
                     "(save_checkpoints_steps or save_checkpoints_secs of run_config() set how "
                     "often; 600 seconds by default); train() alone writes none."]
                    if unused else [])
    return stopped


def test_read_eval_metrics_reads_what_evaluate_writes(model):
    found = read_eval_metrics(os.path.join(model.model_dir, "eval"))
    assert list(found) == [1000, 2000, 3000, 3500]
    assert found[3000] == pytest.approx({"loss": 0.4, "accuracy": 0.7})


def test_read_eval_metrics_of_a_missing_or_empty_directory(tmp_path):
    assert read_eval_metrics(tmp_path / "nothing") == {}
    assert read_eval_metrics(tmp_path) == {}


def test_a_damaged_event_file_is_read_up_to_the_damage(model, caplog):
    eval_dir = os.path.join(model.model_dir, "eval")
    [path] = [os.path.join(eval_dir, p) for p in os.listdir(eval_dir)]
    with open(path, "ab") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00garbage")  # a record cut short
    assert list(read_eval_metrics(eval_dir)) == [1000, 2000, 3000, 3500]
    assert "cannot be read" in caplog.text


@pytest.mark.parametrize("threshold, min_steps, expected", [
    (0.8, 0, False), (0.6, 4000, False), (0.6, 0, True), (0.69, 3100, False)])
def test_stop_if_higher(model, threshold, min_steps, expected):
    assert stops(pyhooks.stop_if_higher_hook(model, "accuracy", threshold,
                                             min_steps=min_steps)) is expected


@pytest.mark.parametrize("threshold, min_steps, expected", [
    (0.3, 0, False), (0.5, 4000, False), (0.5, 0, True), (0.405, 3100, False)])
def test_stop_if_lower(model, threshold, min_steps, expected):
    assert stops(pyhooks.stop_if_lower_hook(model, "loss", threshold,
                                            min_steps=min_steps)) is expected


@pytest.mark.parametrize("max_steps, min_steps, expected", [
    (1500, 0, False), (500, 4000, False), (500, 0, True), (501, 0, False), (0, 3500, True)])
def test_stop_if_no_increase(model, max_steps, min_steps, expected):
    assert stops(pyhooks.stop_if_no_increase_hook(model, "accuracy", max_steps,
                                                  min_steps=min_steps)) is expected


@pytest.mark.parametrize("max_steps, min_steps, expected", [
    (1500, 0, False), (500, 4000, False), (500, 0, True), (501, 0, False)])
def test_stop_if_no_decrease(model, max_steps, min_steps, expected):
    assert stops(pyhooks.stop_if_no_decrease_hook(model, "loss", max_steps,
                                                  min_steps=min_steps)) is expected


def test_a_named_evaluation_is_read_from_its_eval_dir(model):
    write_metrics(model.model_dir, "test", {"loss": 0.1}, 100)
    named = os.path.join(model.model_dir, "eval_test")
    assert stops(pyhooks.stop_if_lower_hook(model, "loss", 0.2, eval_dir=named))
    assert not stops(pyhooks.stop_if_lower_hook(model, "loss", 0.2))  # model_dir/eval


def test_a_metric_the_evaluations_lack_is_an_error_naming_it(model):
    with pytest.raises(KeyError, match='no metric "auc"; it has accuracy, loss') as info:
        stops(pyhooks.stop_if_higher_hook(model, "auc", 0.5))
    assert str(info.value).startswith("stop_if_higher_hook: the evaluation at step 1000")


def test_checked_every_n_steps_from_the_first_run():
    calls = []
    hook = pyhooks.EarlyStoppingHook(lambda: calls.append(1) or len(calls) == 3,
                                     run_every_secs=None, run_every_steps=4)
    g = counter_graph()
    with g.graph.as_default(), pyhooks.MonitoredSession(hooks=[hook]) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(g.train_op)
            runs += 1
    assert (len(calls), runs) == (3, 9)  # asked at steps 1, 5 and 9


def test_checked_every_n_seconds():
    calls = []
    hook = pyhooks.EarlyStoppingHook(lambda: calls.append(1) or False, run_every_secs=60)
    clock = hook._timer.clock = FakeClock()
    g = counter_graph()
    with g.graph.as_default(), pyhooks.MonitoredSession(hooks=[hook]) as sess:
        sess.run(g.train_op)
        sess.run(g.train_op)
        clock.advance(59)
        sess.run(g.train_op)
        clock.advance(1)
        sess.run(g.train_op)
    assert len(calls) == 2


@pytest.mark.parametrize("kwargs, error, match", [
    ({"run_every_steps": 10}, ValueError, "Exactly one of `run_every_secs` and `run_every_steps`"),
    ({"run_every_secs": None}, ValueError, "Exactly one of"),
    ({"run_every_secs": 0}, ValueError, "`run_every_secs` must be positive"),
    ({"run_every_secs": None, "run_every_steps": 2.5}, ValueError, "`run_every_steps` must be "
                                                                  "a whole number"),
    ({"min_steps": -1}, ValueError, "`min_steps` must be zero or more"),
    ({"eval_dir": 3}, TypeError, "`eval_dir` must be a directory path"),
])
def test_arguments_checked_at_construction(model, kwargs, error, match):
    with pytest.raises(error, match=match):
        pyhooks.stop_if_no_decrease_hook(model, "loss", 10, **kwargs)


@pytest.mark.parametrize("call, match", [
    (lambda m: pyhooks.stop_if_lower_hook(object(), "loss", 1), "`estimator` must be a pyhooks"),
    (lambda m: pyhooks.stop_if_lower_hook(m, "", 1), "`metric_name` must be"),
    (lambda m: pyhooks.stop_if_lower_hook(m, "loss", "1"), "`threshold` must be a number"),
    (lambda m: pyhooks.stop_if_lower_hook(m, "loss", True), "`threshold` must be a number"),
    (lambda m: pyhooks.stop_if_lower_hook(m, "loss", float("nan")), "got NaN"),
    (lambda m: pyhooks.stop_if_no_increase_hook(m, "auc", -5), "`max_steps_without_increase`"),
    (lambda m: pyhooks.make_early_stopping_hook(m, "not a function"), "`should_stop_fn` must"),
])
def test_bad_values_name_the_argument(model, call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call(model)


def test_construction_reads_and_writes_nothing(tmp_path):
    class Model:
        model_dir = str(tmp_path / "not yet")

        def evaluate(self):
            pass
    pyhooks.stop_if_no_decrease_hook(Model(), "loss", 10)
    assert not os.path.exists(tmp_path / "not yet")


# --------------------------------------------------------------------------- the backends
def _stop_after(n):
    calls = []
    return pyhooks.EarlyStoppingHook(lambda: calls.append(1) or len(calls) >= n,
                                     run_every_secs=None, run_every_steps=1)


def test_the_same_stop_in_an_eager_loop_and_in_keras_fit():
    step = tf.Variable(0.0)
    creator = pyhooks.EagerSessionCreator(tf.function(lambda: {"loss": step.assign_add(1.0)}))
    with pyhooks.MonitoredSession(creator, hooks=[_stop_after(3)]) as sess:
        eager_runs = 0
        while not sess.should_stop():
            sess.run()
            eager_runs += 1
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(np.ones((40, 1)), np.ones((40, 1)), batch_size=4, epochs=1, verbose=0,
                        callbacks=[pyhooks.keras_callback([_stop_after(3)])])
    assert eager_runs == 3
    assert model.optimizer.iterations.numpy() == 3 and len(history.history["loss"]) == 1


# --------------------------------------------------------------------------- train_and_evaluate
def _mtcars_model(tmp_path, name):
    data = load_mtcars()
    features = ["drat", "cyl"]
    fcs = pyhooks.feature_columns(*(pyhooks.column_numeric(f) for f in features))
    model = pyhooks.linear_regressor(fcs, config=run_config(model_dir=str(tmp_path / name),
                                                            save_checkpoints_steps=10))
    train = pyhooks.input_fn(data, features=features, response="mpg", batch_size=8,
                             num_epochs=None)
    test = pyhooks.input_fn(data, features=features, response="mpg", batch_size=32,
                            num_epochs=1, shuffle=False)
    return model, train, test


def test_train_and_evaluate_stops_once_the_evaluated_loss_is_low_enough(tmp_path):
    model, train, test = _mtcars_model(tmp_path, "stopped")
    hook = pyhooks.stop_if_lower_hook(model, "average_loss", 80, run_every_secs=None,
                                      run_every_steps=5)
    metrics, history = train_and_evaluate(model, train_spec(train, max_steps=1000, hooks=[hook]),
                                          eval_spec(test, steps=None, start_delay_secs=0,
                                                    throttle_secs=0))
    evaluations = read_eval_metrics(os.path.join(model.model_dir, "eval"))
    crossed = min(s for s, m in evaluations.items() if m["average_loss"] < 80)
    stopped = metrics["global_step"]
    # the first check after the evaluation that crossed: within the 5 steps between checks
    assert crossed < stopped <= crossed + 5
    assert history.to_dict()["steps"][-1] == stopped
    assert max(evaluations) == stopped  # the final checkpoint was evaluated, as usual


def test_train_and_evaluate_without_a_stop_trains_to_max_steps(tmp_path):
    model, train, test = _mtcars_model(tmp_path, "full")
    hook = pyhooks.stop_if_lower_hook(model, "average_loss", 0.001, run_every_secs=None,
                                      run_every_steps=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyhooksWarning)  # it had evaluations: no warning
        metrics, _ = train_and_evaluate(model, train_spec(train, max_steps=60, hooks=[hook]),
                                        eval_spec(test, steps=None, start_delay_secs=0,
                                                  throttle_secs=0))
    assert metrics["global_step"] == 60


@pytest.mark.parametrize("make", [
    lambda model: pyhooks.stop_if_lower_hook(model, "average_loss", 1e9, run_every_secs=None,
                                             run_every_steps=1),
    lambda model: pyhooks.stop_if_no_decrease_hook(model, "loss", 0, min_steps=5),
])
def test_a_rule_without_evaluations_says_it_could_not_stop_training(tmp_path, make):
    """train() alone writes no evaluation: the hook warns at the end instead of saying nothing;
    an evaluation at an earlier step (evaluate() between train() calls) is one to act on."""
    model, train, test = _mtcars_model(tmp_path, "alone")
    with pytest.warns(PyhooksWarning, match=r"eval has no evaluation( from step 5 on)?, so it "
                                            r"could not stop training.*train\(\) alone"):
        model.train(train, steps=10, hooks=[make(model)])
    model.evaluate(test)  # at step 10
    with warnings.catch_warnings():
        warnings.simplefilter("error", PyhooksWarning)
        model.train(train, steps=10, hooks=[pyhooks.stop_if_lower_hook(
            model, "average_loss", -1.0, run_every_secs=None, run_every_steps=100)])


@pytest.mark.cluster
def test_every_worker_stops_after_the_same_step(tmp_path):
    from cluster_util import Cluster, cluster_spec

    with Cluster(tmp_path, "mwms_early_stopping", cluster_spec(worker=2), max_steps=60,
                 threshold=0.3).start_all() as cluster:
        results = cluster.wait(timeout=300)
    (code0, chief, log0), (code1, other, log1) = (results[("worker", 0)], results[("worker", 1)])
    assert code0 == code1 == 0, log0 + log1
    crossed = min(int(s) for s, value in chief["evaluations"].items() if value < 0.3)
    # the hook asks after the step whose evaluation crossed; both workers stop at the next
    # agreement of run_config(agree_every_n_steps = "auto"), long before max_steps
    last = chief["last_step"]
    assert other["last_step"] == last and crossed + 1 <= last < 60, (crossed, chief, other)
    assert chief["final_step"] == last  # the chief evaluated its last checkpoint
