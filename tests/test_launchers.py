"""Workers launched by a cluster tool: Ray Train's TensorflowTrainer sets each worker's TF_CONFIG.

Each test runs a driver process (``cluster_tasks.ray_launch``) that starts a local Ray on
loopback (2 CPUs, a small object store), fits 2-worker trainers whose workers run the
scenarios of the hand-started cluster tests, and shuts Ray down; the driver's process
group is killed at exit and after its time limit.
"""

import glob
import json
import os
import shutil

import pytest

from cluster_util import Cluster

pytest.importorskip("ray")

R_WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "r-package", "tests", "testthat", "distributed-worker.R")


def _launch(tmp_path, runs, timeout=400, **config):
    """Ray's errors of each run (None: it ended well) and each run's directory."""
    with Cluster(tmp_path, "ray_launch", {"driver": ["127.0.0.1:0"]}, runs=runs,
                 **config).start_all() as cluster:
        (code, report, log), = cluster.wait(timeout=timeout).values()
    assert code == 0 and report is not None, log
    return report["errors"], [tmp_path / str(n) for n in range(len(runs))]


def _reports(run_dir):
    """What each worker's scenario reported (``worker_<i>.json``)."""
    reports = []
    for i in (0, 1):
        with open(run_dir / f"worker_{i}.json", encoding="utf-8") as stream:
            reports.append(json.load(stream))
    return reports


@pytest.mark.cluster
def test_ray_workers_train_an_estimator_chief_only_files_agreed_stop_failure_named(tmp_path):
    errors, (stopped, failed) = _launch(tmp_path, [
        # agreeing at every step: the chief learns of worker 1's stop or failure at once,
        # before Ray ends the other workers of a failed group (the default's later
        # agreement: test_distribute_estimators)
        {"scenario": "mwms_estimator", "stop_at": [1, 3], "agree_every_n_steps": 1},
        {"scenario": "mwms_estimator", "fail_at": [1, 3], "agree_every_n_steps": 1}])
    chief, other = _reports(stopped)
    assert errors[0] is None, (errors, chief, other)
    # Ray's TF_CONFIG made task 0 the chief; a stop asked on worker 1 ends both after step 3
    assert (chief["chief_steps"], other["chief_steps"]) == (3, 0)
    assert chief["last_step"] == other["last_step"] == 3
    assert chief["variables"] == other["variables"]
    # only the chief writes checkpoints into model_dir; worker 1 writes below tmp_worker_1
    assert chief["checkpoint"] == str(stopped / "model" / "model.ckpt-3")
    assert other["checkpoint"] is None
    assert other["model_dir"] == str(stopped / "model" / "tmp_worker_1")
    assert not glob.glob(str(stopped / "model" / "tmp_worker_1" / "*.index"))
    assert os.path.exists(stopped / "history.csv")
    assert os.path.exists(stopped / "tmp_worker_1" / "history.csv")
    # a hook's error on worker 1: the chief's error names it; Ray's error carries both
    chief, other = _reports(failed)
    assert other["error"] == "ValueError" and other["last_step"] == 3
    assert ("pyhooks: worker 1 failed in local step 3: ValueError: boom at step 3 "
            "(raised in LambdaHook.after_run())") in chief["message"]
    assert errors[1] is not None and "worker 1 failed" in errors[1]


@pytest.mark.cluster
def test_ray_workers_run_an_eager_loop_chief_only_hooks_agreed_stop_failure_named(tmp_path):
    errors, (stopped, failed) = _launch(tmp_path, [
        {"scenario": "mwms_eager", "nan_at": [1, 3]},
        {"scenario": "mwms_eager", "fail_at": [1, 3]}])
    chief, other = _reports(stopped)
    assert errors[0] is None, (errors, chief, other)
    assert (chief["is_chief"], other["is_chief"]) == (True, False)
    assert chief["num_workers"] == other["num_workers"] == 2
    # NanTensorHook on worker 1 asked to stop at step 3: both stopped after it
    assert chief["last_step"] == other["last_step"] == 3
    assert (chief["chief_steps"], other["chief_steps"]) == (3, 0)
    assert os.path.exists(stopped / "history.csv")
    assert os.path.exists(stopped / "tmp_worker_1" / "history.csv")
    # StepCounterHook's events: the chief's in events/, worker 1's in events/tmp_worker_1
    assert len(glob.glob(str(stopped / "events" / "events.out.tfevents.*"))) == 1
    assert len(glob.glob(str(stopped / "events" / "tmp_worker_1" / "events.out.tfevents.*"))) == 1
    chief, other = _reports(failed)
    assert other["error"] == "ValueError"
    assert ("pyhooks: worker 1 failed in local step 3: ValueError: boom at step 3"
            in chief["message"]), chief
    assert errors[1] is not None


@pytest.mark.cluster
def test_ray_workers_run_rscript_training_an_r_estimator(tmp_path):
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed (make setup installs it)")
    errors, (stopped, failed) = _launch(tmp_path, [
        {"scenario": "rscript", "r_args": ["3", "NA", "none", "1"]},  # agreeing every step,
        {"scenario": "rscript", "r_args": ["NA", "3", "none", "1"]}], r_worker=R_WORKER)  # as above
    assert errors[0] is None, errors
    reports = []
    for run in (stopped, failed):
        reports.append([])
        for i in (0, 1):
            with open(run / f"worker_{i}.txt", encoding="utf-8") as stream:
                lines = stream.read().splitlines()
            reports[-1].append(dict(line.split(" ", 1) for line in lines))
    chief, other = reports[0]
    assert chief["steps"] == other["steps"] == "2,3"  # worker 1's stop, after step 3 on both
    assert chief["weights"] == other["weights"]
    assert (chief["chief_runs"], other["chief_runs"]) == ("3", "0")
    assert (chief["checkpoint"], other["checkpoint"]) == ("model.ckpt-3", "none")
    assert other["model_dir"] == str(stopped / "model" / "tmp_worker_1")
    assert not glob.glob(str(stopped / "model" / "tmp_worker_1" / "*.index"))
    # an R error in worker 1's hook: the chief's R error names worker 1 and the error
    chief, other = reports[1]
    assert "boom at step 3" in other["error"], other
    assert "worker 1 failed in local step 3" in chief["error"], chief
    assert "boom at step 3" in chief["error"], chief
