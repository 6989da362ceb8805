"""TF1 parameter-server training with pyhooks: 1 ps + 2 worker processes on localhost."""

import glob
import os

import pytest

from cluster_util import Cluster, cluster_spec

pytestmark = pytest.mark.cluster


def test_ps_and_two_workers_with_chief_only_hooks_and_a_waiting_worker(tmp_path):
    checkpoint_dir = str(tmp_path / "model")
    with Cluster(tmp_path, "tf1_ps_workers", cluster_spec(ps=1, worker=2), last_step=40,
                 wait_until=5, checkpoint_dir=checkpoint_dir).start_all() as cluster:
        results = cluster.wait(timeout=150)
    for key, (code, report, log) in results.items():
        assert code == 0 and report is not None, f"{key} failed:\n{log}"
    chief, other = results["worker", 0][1], results["worker", 1][1]
    # both trained; every step of each counted once in the shared global step
    assert chief["steps"] > 0 and other["steps"] > 0
    final = max(chief["global_step"], other["global_step"])
    assert final >= 40
    assert chief["steps_of_workers"][0] == chief["steps"]
    assert other["steps_of_workers"][1] == other["steps"]
    # GlobalStepWaiterHook held worker 1 back until the chief reached step 5
    assert other["first_step"] >= 5
    # chief-only hooks and the default hooks ran on the chief only
    assert chief["history_rows"] >= 1
    assert os.path.exists(tmp_path / "history_0.csv")
    assert not os.path.exists(tmp_path / "history_1.csv")
    assert len(glob.glob(os.path.join(checkpoint_dir, "events.out.tfevents.*"))) == 1
    assert glob.glob(os.path.join(checkpoint_dir, "model.ckpt-*.index"))


def test_a_killed_worker_restarted_rejoins_and_trains(tmp_path):
    with Cluster(tmp_path, "tf1_ps_workers", cluster_spec(ps=1, worker=2), last_step=40,
                 wait_until=0, checkpoint_dir=str(tmp_path / "model"), die_at=3,
                 worker_1_steps=6) as cluster:
        cluster.start_all()
        died = cluster.processes["worker", 1][0]
        assert died.wait(timeout=120) == 1, cluster.log(("worker", 1))
        cluster.kill(("worker", 1))
        cluster.start("worker", 1, extra_env={"PYHOOKS_TEST_RESTARTED": "1"})
        results = cluster.wait(timeout=150)
    for key, (code, report, log) in results.items():
        assert code == 0 and report is not None, f"{key} failed:\n{log}"
    chief, other = results["worker", 0][1], results["worker", 1][1]
    assert other["steps"] >= 3  # the restarted worker trained (3 before it died)
    assert chief["steps_of_workers"][1] >= 6 and chief["global_step"] >= 40
