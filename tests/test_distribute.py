"""pyhooks.distribute in one process: the chief, per-worker paths, value combination.

MirroredStrategy over two logical CPUs needs a fresh TensorFlow runtime: that test
runs ``cluster_tasks.py mirrored`` in a process of its own.
"""

import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf

import pyhooks
from cluster_util import Cluster
from pyhooks import distribute


def worker(is_chief, task_type="worker", task_id=1):
    return distribute.Worker(task_type, task_id, is_chief, 1, 0)


def path_under(worker_, path, is_file=False):
    with distribute.worker_scope(worker_):
        return distribute.worker_path(path, is_file)


def test_worker_paths_follow_tensorflows_convention():
    assert path_under(worker(False), "/m/events") == os.path.join("/m/events", "tmp_worker_1")
    assert path_under(worker(False), "/m/h.csv", is_file=True) == os.path.join(
        "/m", "tmp_worker_1", "h.csv")
    assert path_under(worker(False, None, None), "/m") == os.path.join("/m", "tmp")
    for same in (worker(True), None):
        assert path_under(same, "/m/events") == "/m/events"
    assert path_under(worker(False), None) is None
    assert distribute.worker_path("/m/events") == "/m/events"  # no scope: no strategy


def test_find_worker_arguments():
    assert distribute.find_worker() is None
    assert distribute.find_worker(strategy=tf.distribute.get_strategy()).is_chief is True
    assert distribute.find_worker(is_chief=False).is_chief is False
    with pytest.raises(TypeError, match=r"`is_chief` must be True or False, got 'no' \(str\)"):
        distribute.find_worker(is_chief="no")
    with pytest.raises(TypeError, match="`strategy` must be a tf.distribute.Strategy, got 3"):
        distribute.find_worker(strategy=3)


def test_the_task_comes_from_tf_config_without_a_resolver(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"worker": ["localhost:1", "localhost:2"]},
        "task": {"type": "worker", "index": 1}}))
    found = distribute.find_worker(is_chief=False)
    assert (found.task_type, found.task_id, found.num_workers) == ("worker", 1, 1)


def eager_step():
    weight = tf.Variable(1.0)

    @tf.function
    def step():
        weight.assign_add(1.0)
        return {"loss": weight * 1.0, "losses": tf.fill([4], weight)}
    return step


@pytest.mark.parametrize("is_chief", [True, False])
def test_eager_chief_only_hooks_and_per_worker_files(tmp_path, monkeypatch, is_chief):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "b:2"]},
                                                "task": {"type": "worker", "index": 1}}))
    ran = []
    chief_only = [pyhooks.LambdaHook(after_run=lambda context, values: ran.append(1))]
    creator = pyhooks.EagerSessionCreator(eager_step(), is_chief=is_chief,
                                          chief_only_hooks=chief_only)
    hooks = [pyhooks.StopAtStepHook(last_step=3),
             pyhooks.HistorySaverHook(every_n_step=1, path=tmp_path / "history.csv"),
             pyhooks.StepCounterHook(every_n_steps=1, output_dir=str(tmp_path / "events")),
             pyhooks.CheckpointSaverHook(str(tmp_path / "ckpt"), save_steps=2,
                                         saver=tf.train.Checkpoint())]
    with pyhooks.MonitoredSession(creator, hooks=hooks) as session:
        while not session.should_stop():
            session.run()
    own = "" if is_chief else "tmp_worker_1"
    assert len(ran) == (3 if is_chief else 0)
    with open(tmp_path / own / "history.csv", encoding="utf-8") as stream:
        assert stream.read().splitlines()[1:] == ["2.0,8.0,1,1", "3.0,12.0,2,1", "4.0,16.0,3,1"]
    assert os.path.exists(tmp_path / "history.csv") == is_chief
    assert glob.glob(str(tmp_path / "events" / own / "events.out.tfevents.*"))
    assert bool(glob.glob(str(tmp_path / "events" / "events.out.*"))) == is_chief
    assert tf.train.latest_checkpoint(str(tmp_path / "ckpt" / own)).endswith("model.ckpt-3")
    assert (tf.train.latest_checkpoint(str(tmp_path / "ckpt")) is not None) == is_chief


def test_chief_only_hooks_need_to_know_the_chief():
    with pytest.raises(ValueError, match="`chief_only_hooks` needs `strategy=` or `is_chief=`"):
        pyhooks.EagerSessionCreator(eager_step(), chief_only_hooks=[pyhooks.LambdaHook()])
    with pytest.raises(TypeError, match=r"chief_only_hooks\[0\]"):
        pyhooks.EagerSessionCreator(eager_step(), is_chief=True, chief_only_hooks=[3])
    with pytest.raises(ValueError, match="`agree_every_n_steps` must be positive, got 0"):
        pyhooks.EagerSessionCreator(eager_step(), is_chief=True, agree_every_n_steps=0)


def test_keras_callback_runs_chief_only_hooks_on_the_chief_only(tmp_path):
    x = np.ones((8, 1), np.float32)
    counts = {}
    for is_chief in (True, False):
        model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        ran = []
        callback = pyhooks.keras_callback(
            [pyhooks.HistorySaverHook(every_n_step=1, path=tmp_path / "h.csv")], is_chief=is_chief,
            chief_only_hooks=[pyhooks.LambdaHook(after_run=lambda c, v: ran.append(1))])
        model.fit(x, x, batch_size=4, epochs=1, verbose=0, callbacks=[callback])
        counts[is_chief] = len(ran)
    assert counts == {True: 2, False: 0}
    assert os.path.exists(tmp_path / "h.csv") and os.path.exists(tmp_path / "tmp" / "h.csv")


def test_per_replica_values_are_summed_or_concatenated_or_refused():
    total = distribute._combine("loss", [tf.constant(1.0), tf.constant(4.0)])
    assert float(total) == 5.0  # each replica's share of the global mean: their sum
    assert float(distribute._combine("acc", [tf.constant(1.0), tf.constant(4.0)], "mean")) == 2.5
    joined = distribute._combine("losses", [tf.constant([1.0, 2.0]), tf.constant([3.0])])
    assert joined.numpy().tolist() == [1.0, 2.0, 3.0]
    summed = distribute._combine("grid", [tf.ones([2, 2]), tf.ones([2, 2])], "sum")
    assert summed.numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(distribute.PerReplicaOutputError,
                       match=r"Step output 'odd' has per-replica values of shapes \[\(1, 2\), "
                             r"\(1, 3\)\].*by 'concat'.*strategy.reduce\('SUM'"):
        distribute._combine("odd", [tf.zeros([1, 2]), tf.zeros([1, 3])])
    with pytest.raises(distribute.PerReplicaOutputError, match="'losses' .* by 'mean'"):
        distribute._combine("losses", [tf.constant([1.0, 2.0]), tf.constant([3.0])], "mean")
    with pytest.raises(distribute.PerReplicaOutputError, match="Step output 'names'"):
        distribute._combine("names", [tf.constant("a"), tf.constant("b")])
    assert distribute.reduce_output(None, "loss", 3.0) == 3.0  # not per-replica: as it is


def test_output_reductions_are_checked_naming_the_output():
    step = tf.function(lambda: {"loss": tf.constant(1.0)})
    with pytest.raises(ValueError, match=r"`output_reductions`\['acc'\] must be 'sum', 'mean' "
                                         r"or 'concat', got 'max'"):
        pyhooks.EagerSessionCreator(step, output_reductions={"acc": "max"})
    with pytest.raises(TypeError, match="`output_reductions` must be a dict"):
        pyhooks.EagerSessionCreator(step, output_reductions=["acc"])


@pytest.mark.cluster
def test_mirrored_strategy_eager_loop_sees_the_loss_of_one_replica_of_the_batch(tmp_path):
    """A loss scaled by the global batch (tf.nn.compute_average_loss) under MirroredStrategy on 2
    logical CPUs: every hook, the bar and run()'s value see what one replica of the batch
    computes; model.fit runs a chief-only hook."""
    with Cluster(tmp_path, "mirrored", {}, serving=()) as cluster:
        cluster.start("local", 0)
        (code, report, log), = cluster.wait(timeout=120).values()
    assert code == 0 and report is not None, log
    mirrored, single = report["runs"]["mirrored"], report["runs"]["single"]
    # rows 0..7 at w = 0: per-example losses 4 x^2, sum 560, mean 70 (replica shares 7 + 63)
    assert (mirrored["first"], mirrored["first_type"]) == (70.0, "float32")
    assert single["first"] == 70.0
    assert mirrored["history"]["total_losses"][0] == 560.0
    assert mirrored["history"]["mean_losses"][0] == 70.0
    assert mirrored["history"]["steps"] == [1.0, 2.0]
    loss, replica_mean, x, training = mirrored["seen"][0]
    assert (loss, replica_mean, training) == (70.0, 70.0, 70.0)  # "mean" declared: 14, 126
    assert x == list(range(8))  # concatenated, in order
    assert mirrored["seen"][1][2] == list(range(8, 16))
    for column in ("mean_losses", "total_losses"):
        np.testing.assert_allclose(mirrored["history"][column], single["history"][column],
                                   rtol=1e-5)
    for got, want in zip(mirrored["seen"], single["seen"]):
        np.testing.assert_allclose([got[0], got[1], got[3]], [want[0], want[1], want[3]],
                                   rtol=1e-5)
    assert mirrored["bar"][-1].startswith("Training 2/2 [")
    shown = [float(line.rsplit("loss: ", 1)[1]) for line in mirrored["bar"] if "loss: " in line]
    np.testing.assert_allclose(shown[-1], mirrored["seen"][-1][0], rtol=1e-3)
    assert "Step output 'odd' has per-replica values of shapes [(2, 1), (2, 2)]" in mirrored[
        "refused"]
    assert "Step output 'loss' is a per-replica value (PerReplica" in report["unreduced"]
    assert "pass `strategy=` to EagerSessionCreator" in report["unreduced"]
    assert report["fit_rows"] == 2 and report["chief"] is True


def test_remote_values_of_scheduled_steps_are_refused_naming_the_output():
    class Scheduled(tf.distribute.experimental.coordinator.RemoteValue):
        def fetch(self):
            raise AssertionError("not fetched")

        def get(self):
            raise AssertionError("not fetched")

    with pytest.raises(distribute.PerReplicaOutputError,
                       match=r"Step output 'loss' is a RemoteValue .*\{'loss': remote.fetch\(\)\}"):
        distribute.reduce_output(tf.distribute.get_strategy(), "loss", Scheduled())
    # a step returning schedule()'s RemoteValue itself, given without strategy=
    creator = pyhooks.EagerSessionCreator(lambda: Scheduled())
    with pyhooks.MonitoredSession(creator) as session:
        with pytest.raises(distribute.PerReplicaOutputError,
                           match=r"The step function returned a RemoteValue .*ScheduledSteps"):
            session.run()


def test_the_stop_agreement_holds_a_request_until_its_vote_then_all_stop_after_that_step():
    """One process standing for worker 0 of 2, agreeing every 3 steps: its vote recorded, worker
    1's flag added to the sum at the vote given in ``other_asks_at``."""
    from fakes import FakeCreator, FakeTensor

    def train(asks_at, other_asks_at):
        votes, steps = [], []

        def vote(flags):
            votes.append(flags.tolist())
            return flags + np.array([0, len(votes) == other_asks_at, 0, 0], np.float32)

        def after_run(context, values):
            steps.append(1)
            if len(steps) == asks_at:
                context.request_stop()

        agreement = distribute.StopAgreementHook(
            None, distribute.Worker("worker", 0, True, 2, 0), every_n_steps=3, vote=vote)
        with pyhooks.MonitoredSession(FakeCreator(), [pyhooks.LambdaHook(after_run=after_run),
                                                      agreement]) as session:
            while not session.should_stop():
                session.run(FakeTensor("t"))
        return len(steps), votes, agreement.stopped_by

    # asked in step 2: held until the vote after step 3, then everyone stops
    assert train(asks_at=2, other_asks_at=None) == (3, [[1.0, 0.0, 0.0, 0.0]], [0])
    # worker 1 asks before the third vote: this one stops after that step too
    assert train(asks_at=None, other_asks_at=3) == (9, [[0.0, 0.0, 0.0, 0.0]] * 3, [1])


def test_automatic_agreements_cost_a_share_of_the_step_and_meet_a_planned_stop():
    """Worker 0 of 2 with a clock the step moves by 10 ms and the vote by 2 ms: it proposes
    ceil(2 / (2% of 10)) = 10 steps, worker 1 (in the fake vote) 7; they take the smaller; the
    StopAtStepHook's last step 20 is agreed at step 20 itself."""
    now = [0.0]

    def step():
        now[0] += 0.010
        return {"loss": tf.constant(1.0)}

    proposals = []

    def vote(flags):
        now[0] += 0.002
        proposals.append(float(flags[2]))
        return flags + np.array([0, 0, 0, 7], np.float32)

    stop = pyhooks.StopAtStepHook(last_step=20)
    agreement = distribute.StopAgreementHook(None, distribute.Worker("worker", 0, True, 2, 0),
                                             vote=vote, hooks=[stop])
    agreement.clock = lambda: now[0]
    creator = pyhooks.EagerSessionCreator(step)
    with pyhooks.MonitoredSession(creator, hooks=[stop, agreement]) as session:
        while not session.should_stop():
            session.run()
    assert int(creator.global_step.numpy()) == 20  # no step past the planned stop
    assert agreement.vote_steps == [1, 2, 9, 16, 20]
    assert proposals == [1.0, 10.0, 10.0, 4.0, 10.0]  # 4: the steps left to step 20
    assert agreement.stopped_by == [0]


def test_agree_every_n_steps_takes_auto_a_count_or_none():
    step = eager_step()
    for every in ("auto", 3, None):
        pyhooks.EagerSessionCreator(step, is_chief=True, agree_every_n_steps=every)
    with pytest.raises(ValueError, match="`agree_every_n_steps` must be a positive whole "
                                         "number, 'auto' or None, got 'often'"):
        pyhooks.EagerSessionCreator(step, is_chief=True, agree_every_n_steps="often")
