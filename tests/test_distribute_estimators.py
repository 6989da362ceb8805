"""Estimators trained under a tf.distribute strategy: run_config(train_distribute=)."""

import glob
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import pyhooks
from pyhooks.estimators import estimator, estimator_spec, run_config

from cluster_util import Cluster, cluster_spec

tf = pytest.importorskip("tensorflow")


def _data(rows=64):
    rng = np.random.default_rng(0)
    data = {"x1": rng.normal(size=rows), "x2": rng.normal(size=rows)}
    data["y"] = 3 * data["x1"] - 2 * data["x2"] + 1 + rng.normal(scale=0.1, size=rows)
    return data


def _mirrored(replicas):
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def _train_linear(tmp_path, name, strategy, batch_size):
    inp = pyhooks.input_fn(_data(), features=["x1", "x2"], response="y", batch_size=batch_size,
                           shuffle=False, num_epochs=2)
    fcs = pyhooks.feature_columns(pyhooks.column_numeric("x1"), pyhooks.column_numeric("x2"))
    config = run_config(model_dir=os.path.join(tmp_path, name), train_distribute=strategy)
    model = pyhooks.linear_regressor(fcs, config=config)
    seen, scalars = [], []
    shapes = pyhooks.LambdaHook(
        before_run=lambda context: pyhooks.SessionRunArgs(
            context.session.graph.get_collection("losses")[0]),
        after_run=lambda context, values: seen.append(list(values.results.shape)))
    history = model.train(inp, hooks=[pyhooks.HistorySaverHook(every_n_step=1), shapes,
                                      _training_loss_hook(scalars)])
    weights = {n: model.get_variable_value(n).ravel().tolist()
               for n in model.get_variable_names() if n.endswith("weights")}
    return {"history": history.to_dict(), "weights": weights, "shapes": seen,
            "training_loss": scalars}


def _training_loss_hook(scalars):
    """Records the scalar training loss NanTensorHook reads (collection pyhooks_training_loss)."""
    return pyhooks.LambdaHook(
        before_run=lambda context: pyhooks.SessionRunArgs(
            context.session.graph.get_collection("pyhooks_training_loss")[0]),
        after_run=lambda context, values: scalars.append(float(values.results)))


def _model_fn(features, labels, mode, params):
    from pyhooks.estimators import layers

    v1 = tf.compat.v1
    out = tf.reshape(layers.dense(features, 1, kernel_initializer=v1.zeros_initializer()), [-1])
    if mode == "infer":
        return estimator_spec(mode, predictions={"y": out})
    loss = v1.losses.mean_squared_error(labels, out)
    step = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step())
    return estimator_spec(mode, loss=loss, train_op=step)


def _train_model_fn(tmp_path, name, strategy):
    inp = pyhooks.input_fn(_data(), features=["x1", "x2"], response="y", batch_size=16,
                           shuffle=False)
    model = estimator(_model_fn, config=run_config(model_dir=os.path.join(tmp_path, name),
                                                   train_distribute=strategy))
    scalars = []
    history = model.train(inp, steps=4, hooks=[pyhooks.HistorySaverHook(every_n_step=1),
                                               _training_loss_hook(scalars)])
    return {"history": history.to_dict(), "training_loss": scalars,
            "kernel": model.get_variable_value("dense/kernel").ravel().tolist(),
            "eval_loss": model.evaluate(inp)["loss"]}


def _replicated_runs(out_dir):
    """Run in a new process (logical CPUs are set before TensorFlow starts): every run's results."""
    tf.config.set_logical_device_configuration(tf.config.list_physical_devices("CPU")[0],
                                               [tf.config.LogicalDeviceConfiguration()] * 3)
    runs = {"linear_plain_16": _train_linear(out_dir, "a", None, 16),
            "model_fn_plain": _train_model_fn(out_dir, "b", None),
            "model_fn_mirrored_2": _train_model_fn(out_dir, "c", _mirrored(2))}
    for replicas in (2, 3):
        runs[f"linear_mirrored_{replicas}"] = _train_linear(out_dir, f"d{replicas}",
                                                           _mirrored(replicas), 16)
    runs["linear_mirrored_v1"] = _train_linear(  # TensorFlow 1's class (R: tf$distribute)
        out_dir, "e", tf.compat.v1.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), 16)
    return runs


@pytest.fixture(scope="module")
def replicated(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("replicated")
    path = out_dir / "runs.json"
    done = subprocess.run([sys.executable, __file__, str(out_dir), str(path)], timeout=300,
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


@pytest.mark.parametrize("replicas", ["2", "3", "v1"])
def test_a_canned_estimator_under_mirrored_strategy_trains_as_without_it(replicated, replicas):
    plain, mirrored = replicated["linear_plain_16"], replicated[f"linear_mirrored_{replicas}"]
    assert mirrored["history"]["steps"] == plain["history"]["steps"] == list(range(1, 9))
    # the hooks see the whole batch's per-example losses (3 replicas: parts of 5, 5, 6 rows)
    assert mirrored["shapes"] == [[16]] * 8
    for column in ("mean_losses", "total_losses"):
        np.testing.assert_allclose(mirrored["history"][column], plain["history"][column],
                                   rtol=1e-4)
    # the scalar loss NanTensorHook reads: the whole batch's sum, as without the strategy
    np.testing.assert_allclose(mirrored["training_loss"], plain["training_loss"], rtol=1e-4)
    np.testing.assert_allclose(mirrored["training_loss"], plain["history"]["total_losses"],
                               rtol=1e-4)
    assert mirrored["weights"].keys() == plain["weights"].keys()
    for name, value in plain["weights"].items():
        np.testing.assert_allclose(mirrored["weights"][name], value, rtol=1e-4, atol=1e-6)
    losses = mirrored["history"]["mean_losses"]
    assert losses[-1] < losses[0]  # it learned


def test_a_model_fn_under_mirrored_strategy_gets_the_mean_loss_and_the_mean_gradient(replicated):
    plain, mirrored = replicated["model_fn_plain"], replicated["model_fn_mirrored_2"]
    # the reported loss is the replicas' mean: the batch's mean squared error
    np.testing.assert_allclose(mirrored["history"]["mean_losses"],
                               plain["history"]["mean_losses"], rtol=1e-5)
    np.testing.assert_allclose(mirrored["training_loss"], plain["training_loss"], rtol=1e-5)
    np.testing.assert_allclose(mirrored["training_loss"], mirrored["history"]["mean_losses"],
                               rtol=1e-5)
    np.testing.assert_allclose(mirrored["kernel"], plain["kernel"], rtol=1e-5)
    np.testing.assert_allclose(mirrored["eval_loss"], plain["eval_loss"], rtol=1e-5)
    assert mirrored["history"]["mean_losses"][-1] < mirrored["history"]["mean_losses"][0]


def test_train_distribute_refuses_what_is_not_a_usable_strategy():
    with pytest.raises(TypeError, match=r"`train_distribute` must be a tf.distribute strategy"):
        run_config(train_distribute="mirrored")

    class ParameterServerStrategyV2:  # a stand-in: the real one needs a running cluster
        extended = type("Extended", (), {"call_for_each_replica": None})()

        def scope(self):
            raise AssertionError("not used")

    with pytest.raises(ValueError, match=r"ParameterServerStrategyV2: parameter-server training "
                                         r"cannot train an estimator.*MultiWorkerMirroredStrategy"):
        run_config(train_distribute=ParameterServerStrategyV2())


def test_run_config_takes_how_often_the_workers_agree_and_refuses_other_values():
    assert run_config().agree_every_n_steps == "auto"
    assert run_config(agree_every_n_steps=10).agree_every_n_steps == 10
    assert run_config(agree_every_n_steps=None).agree_every_n_steps is None
    assert "agree_every_n_steps=10" in repr(run_config(agree_every_n_steps=10))
    import pandas as pd

    for bad in ("sometimes", 0, -1, 2.5, True, pd.DataFrame({"a": [1]}), np.array([5, 6])):
        with pytest.raises((TypeError, ValueError), match="`agree_every_n_steps`"):
            run_config(agree_every_n_steps=bad)


def test_several_workers_refuse_an_input_that_could_end_before_the_steps():
    from pyhooks.distribute import Worker
    from pyhooks.estimators.distributed import ReplicatedTraining

    training = object.__new__(ReplicatedTraining)  # what a 2-worker strategy's would hold
    training.strategy, training.multi_worker = _mirrored(1), True
    training.worker = Worker("worker", 1, False, 2, 1)
    inp = pyhooks.input_fn(_data(), features=["x1"], response="y", batch_size=16)  # 4 batches
    training.check_steps(inp, 4, None, 0)
    training.check_steps(pyhooks.input_fn(_data(), features=["x1"], response="y",
                                          num_epochs=None), 100, None, 0)
    for steps, max_steps, start in ((5, None, 0), (None, None, 0), (None, 10, 3)):
        with pytest.raises(ValueError, match=r"with 2 workers, every worker must train the same "
                                             r"number of steps, and this worker's input holds 4 "
                                             r"batch\(es\)"):
            training.check_steps(inp, steps, max_steps, start)


# --------------------------------------------------------------------------- two workers
def _run_workers(tmp_path, timeout=150, **config):
    with Cluster(tmp_path, "mwms_estimator", cluster_spec(worker=2), **config).start_all() as c:
        results = {key[1]: result for key, result in c.wait(timeout=timeout).items()}
    for task, (_, report, log) in results.items():
        assert report is not None, f"worker {task} reported nothing:\n{log}"
    return results


@pytest.mark.cluster
def test_two_workers_train_one_model_the_chief_keeps_the_checkpoints(tmp_path):
    results = _run_workers(tmp_path)
    assert results[0][0] == results[1][0] == 0, results
    chief, other = results[0][1], results[1][1]
    assert chief["steps"] == other["steps"] == 8
    assert (chief["chief_steps"], other["chief_steps"]) == (8, 0)
    assert chief["variables"] == other["variables"]  # one model, all-reduced updates
    # the same as one process training on both workers' batches side by side
    x = [np.linspace(-1, 1, 32) + task / 2 for task in (0, 1)]
    both = np.concatenate([np.concatenate([x[0][i:i + 4], x[1][i:i + 4]]) for i in range(0, 32, 4)])
    inp = pyhooks.input_fn({"x": both, "y": 2 * both + 1}, features=["x"], response="y",
                           batch_size=8, shuffle=False)
    reference = pyhooks.linear_regressor(pyhooks.feature_columns(pyhooks.column_numeric("x")),
                                         config=run_config(model_dir=str(tmp_path / "ref")))
    reference.train(inp, steps=8)
    # the workers report the graph's variables (the dense weights in one matrix), the
    # reference's checkpoint holds them by column
    for name, saved in (("linear/dense_weights", "linear/linear_model/x/weights"),
                        ("linear/linear_model/bias_weights",) * 2):
        np.testing.assert_allclose(chief["variables"][name],
                                   reference.get_variable_value(saved).ravel(), rtol=1e-5)
    # checkpoints only by the chief; the other worker's files below tmp_worker_1
    model_dir = tmp_path / "model"
    assert chief["checkpoint"] == str(model_dir / "model.ckpt-8")
    assert other["checkpoint"] is None and other["model_dir"] == str(model_dir / "tmp_worker_1")
    assert not glob.glob(str(model_dir / "tmp_worker_1" / "*.index"))
    assert len(glob.glob(str(model_dir / "events.out.tfevents.*"))) == 1
    assert len(glob.glob(str(model_dir / "tmp_worker_1" / "events.out.tfevents.*"))) == 1
    for path in (tmp_path / "history.csv", tmp_path / "tmp_worker_1" / "history.csv"):
        with open(path, encoding="utf-8") as stream:
            assert [row.split(",")[2] for row in stream.read().splitlines()] == [
                "steps", "2", "4", "6", "8"]
    # each worker's history: its own batches' per-example losses (the batches differ)
    assert chief["history"]["mean_losses"] != other["history"]["mean_losses"]


@pytest.mark.cluster
@pytest.mark.parametrize("every", [1, "auto"])
def test_a_stop_on_one_worker_ends_train_on_both_after_the_same_step(tmp_path, every):
    results = _run_workers(tmp_path, stop_at=[1, 3], custom=True, agree_every_n_steps=every)
    assert results[0][0] == results[1][0] == 0, results
    chief, other = results[0][1], results[1][1]
    assert chief["last_step"] == other["last_step"]
    # agreeing after every step stops at the step asked for; else at the next agreement
    assert chief["last_step"] == 3 if every == 1 else 3 <= chief["last_step"] <= 8
    assert chief["variables"] == other["variables"]
    assert chief["checkpoint"].endswith(f"model.ckpt-{chief['last_step']}")
    # a model_fn's loss as the hooks see it: the mean over every replica, the same on both
    assert chief["history"] == other["history"]


@pytest.mark.cluster
def test_an_infinite_loss_on_one_worker_fails_both_at_the_same_step(tmp_path):
    results = _run_workers(tmp_path, nan_at=[1, 3])
    assert results[0][0] == results[1][0] == 3, results
    for _, report, _ in results.values():
        assert report["error"] == "NanLossDuringTrainingError"
        assert report["last_step"] == 3
        assert "Model diverged with loss = inf at step 3" in report["message"]
        # the loss the hooks see is both workers': a note names the one whose loss it was
        assert "the loss was not finite in the batch of worker 1" in report["message"]
    # replicas cannot skip a step: its weights are not saved, the latest is the one at the start
    from pyhooks.hooks import _model_dir

    assert _model_dir.latest_checkpoint(str(tmp_path / "model")).endswith("model.ckpt-0")


@pytest.mark.cluster
def test_an_error_on_one_worker_fails_the_other_naming_the_worker_and_the_error(tmp_path):
    results = _run_workers(tmp_path, fail_at=[1, 3])
    assert results[0][0] == results[1][0] == 3, results
    chief, other = results[0][1], results[1][1]
    assert other["error"] == "ValueError" and other["last_step"] == 3
    assert ("Error reported from /job:worker/task:1: pyhooks: worker 1 failed in local step 3: "
            "ValueError: boom at step 3 (raised in LambdaHook.after_run())") in chief["message"]
    assert chief["last_step"] == 3



@pytest.mark.cluster
def test_an_error_before_the_first_step_fails_the_other_naming_the_worker_and_phase(tmp_path):
    results = _run_workers(tmp_path, custom=True, model_fn_fails_on=1)
    assert results[0][0] == results[1][0] == 3, results
    chief, other = results[0][1], results[1][1]
    assert other["error"] == "ValueError" and other["steps"] == 0
    # (TensorFlow quotes the model_fn's error as "in user code: ... ValueError: no model ...")
    assert ("Error reported from /job:worker/task:1: pyhooks: worker 1 failed in train() before "
            "its first step (input checks, building the model): ValueError:") in chief["message"]
    assert "no model on worker 1" in chief["message"]
    assert chief["steps"] == 0
    assert "could not tell the other workers" not in other["message"]


@pytest.mark.cluster
@pytest.mark.parametrize("hang_at", [3, -3], ids=["between steps", "in the step"])
def test_a_killed_worker_fails_the_other_with_an_error_naming_it(tmp_path, hang_at):
    # after its step 3 (the other then waits in step 4's all-reduce, between two agreements),
    # or before its step 3 (the other waits in step 3's all-reduce): graph collectives check no
    # peer's health, pyhooks' watch of the coordination service ends that wait
    with Cluster(tmp_path, "mwms_estimator", cluster_spec(worker=2),
                 hang_at=[1, hang_at]).start_all() as cluster:
        (code, report, log), = cluster.kill_when_hanging(("worker", 1), timeout=120).values()
    assert code == 3 and report["error"] == "UnavailableError", log
    assert report["last_step"] == (3 if hang_at > 0 else 2)
    assert "/job:worker/replica:0/task:1" in report["message"]
    waited = report["ended"] - cluster.killed_at  # ~10 s here: the heartbeat timeout
    print(f"worker 0 failed {waited:.1f} s after worker 1 was killed")
    assert waited < 60, waited  # not the step's wait for ever


if __name__ == "__main__":  # the replicated runs, in their own process (see `replicated`)
    results = _replicated_runs(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as stream:
        json.dump(results, stream)
