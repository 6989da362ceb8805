"""ParameterServerStrategy with a ClusterCoordinator: a chief, 2 workers and a ps on localhost."""

import pytest

from cluster_util import Cluster, cluster_spec

pytestmark = pytest.mark.cluster


def test_hooks_get_the_values_of_executed_steps_one_step_behind(tmp_path):
    with Cluster(tmp_path, "pss_eager", cluster_spec(chief=1, worker=2, ps=1),
                 serving=("ps", "worker"), last_step=10).start_all() as cluster:
        results = cluster.wait(timeout=150)
    (code, report, log), = results.values()
    assert code == 0 and report is not None, log
    assert report["history"]["steps"] == list(range(1, 11))
    losses = report["history"]["mean_losses"]
    # numbers, not RemoteValues; training (the first two steps run at once, in either order)
    assert all(0 < loss <= 4.0 for loss in losses) and losses[-1] < 3.9
    # every executed step seen once (the counter each step returned), and the one more step
    # scheduled when the loop stopped was executed too
    assert report["global_step"] == 10
    seen = report["seen_executed"]  # (two workers: the last two steps may run in either order)
    assert len(set(seen)) == 10 and set(seen) <= set(range(1, 12))
    assert report["executed"] == 11
    assert report["is_chief"] is True and report["num_workers"] == 1
