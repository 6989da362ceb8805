"""MultiWorkerMirroredStrategy with pyhooks' eager backend: 2 worker processes on localhost."""

import glob

import pytest

from cluster_util import Cluster, cluster_spec

pytestmark = pytest.mark.cluster


def run_workers(tmp_path, timeout=120, **config):
    with Cluster(tmp_path, "mwms_eager", cluster_spec(worker=2), **config).start_all() as cluster:
        return {key[1]: result for key, result in cluster.wait(timeout=timeout).items()}


def reports(results):
    for task, (code, report, log) in results.items():
        assert report is not None, f"worker {task} reported nothing:\n{log}"
    return results[0][1], results[1][1]


def test_a_stop_on_one_worker_stops_both_at_the_same_step_and_files_are_per_worker(tmp_path):
    results = run_workers(tmp_path, nan_at=[1, 7])  # NanTensorHook asks to stop on worker 1 only
    chief, other = reports(results)
    assert results[0][0] == results[1][0] == 0, results
    assert (chief["num_workers"], chief["is_chief"], other["is_chief"]) == (2, True, False)
    assert chief["steps"] == other["steps"] == 7
    assert chief["chief_steps"] == 7 and other["chief_steps"] == 0
    with open(tmp_path / "history.csv", encoding="utf-8") as stream:
        chief_rows = stream.read().splitlines()
    with open(tmp_path / "tmp_worker_1" / "history.csv", encoding="utf-8") as stream:
        other_rows = stream.read().splitlines()
    assert [row.split(",")[2] for row in chief_rows] == ["steps", "5", "7"]
    assert [row.split(",")[2] for row in other_rows] == ["steps", "5", "7"]
    assert other_rows[-1].split(",")[0] == "nan" != chief_rows[-1].split(",")[0]
    assert len(glob.glob(str(tmp_path / "events" / "events.out.tfevents.*"))) == 1
    assert len(glob.glob(str(tmp_path / "events" / "tmp_worker_1" / "events.out.tfevents.*"))) == 1


def test_agreeing_every_3_steps_stops_both_at_the_next_agreement(tmp_path):
    chief, other = reports(run_workers(tmp_path, nan_at=[1, 7], agree_every_n_steps=3))
    assert chief["steps"] == other["steps"] == 9
    (tmp_path / "b").mkdir()
    chief, other = reports(run_workers(tmp_path / "b", last_step=10, agree_every_n_steps=4))
    assert chief["steps"] == other["steps"] == 12  # StopAtStepHook at 10: agreed at 12


def test_automatic_agreements_stop_both_at_the_planned_step_or_at_the_same_step(tmp_path):
    chief, other = reports(run_workers(tmp_path, last_step=30, agree_every_n_steps="auto"))
    assert chief["steps"] == other["steps"] == 30  # StopAtStepHook's step: agreed at that step
    assert chief["error"] is other["error"] is None
    (tmp_path / "b").mkdir()
    # Asked on worker 1 only: both stop together, at the next agreement, which comes within
    # MAX_WAIT_SECS (1 s) of steps whatever the machine's speed: far before the planned stop.
    # (With a planned stop near, a slow vote may rightly put the next agreement at it.)
    chief, other = reports(run_workers(tmp_path / "b", nan_at=[1, 7], last_step=5000,
                                       agree_every_n_steps="auto"))
    assert chief["steps"] == other["steps"] >= 7
    assert chief["steps"] < 5000


def test_an_error_on_one_worker_fails_the_other_naming_the_worker_and_the_error(tmp_path):
    results = run_workers(tmp_path, fail_at=[1, 5], last_step=200)
    chief, other = reports(results)
    assert results[0][0] == results[1][0] == 3
    assert other["error"] == "ValueError" and other["steps"] == 5
    assert "pyhooks: worker 1 failed in local step 5: ValueError: boom at step 5" in chief["message"]
    assert "raised in LambdaHook.after_run()" in chief["message"]
    assert chief["steps"] <= 6


def test_an_error_in_a_hooks_begin_on_one_worker_fails_the_other_naming_the_worker(tmp_path):
    results = run_workers(tmp_path, timeout=90, begin_fails_on=1, last_step=200)
    chief, other = reports(results)
    assert results[0][0] == results[1][0] == 3
    assert other["error"] == "ValueError" and other["steps"] == 0
    assert ("pyhooks: worker 1 failed in a hook's begin() before its first step: ValueError: "
            "no begin on worker 1 (raised in LambdaHook.begin())") in chief["message"]
    assert chief["steps"] == 0
    assert "could not tell the other workers" not in other["message"]


def test_a_killed_worker_fails_the_other_with_an_error_naming_it(tmp_path):
    with Cluster(tmp_path, "mwms_eager", cluster_spec(worker=2), hang_at=[1, 5],
                 last_step=100000).start_all() as cluster:
        # never a spin
        (code, report, log), = cluster.kill_when_hanging(("worker", 1), timeout=120).values()
    assert code == 3 and report["error"] == "UnavailableError", log
    assert report["steps"] == 5
    assert "/job:worker/replica:0/task:1" in report["message"]
    assert "stopped sending heartbeats" in report["message"]


def test_input_ending_on_one_worker_ends_both_at_the_same_step(tmp_path):
    results = run_workers(tmp_path, finite=True, last_step=100)  # 16 and 12 batches
    chief, other = reports(results)
    assert results[0][0] == results[1][0] == 0, results
    # TensorFlow gives worker 1 empty batches once its input is over, until every worker's
    # is; the loss of an empty batch is NaN, so NanTensorHook asks to stop: both stop at 13
    assert chief["steps"] == other["steps"] == 13
