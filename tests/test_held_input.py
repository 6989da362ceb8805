"""In-memory data held in the session: each batch one gather of its row numbers.

The held path (plain and permuted orders on data above ``SMALL_VALUES``) must
give the batches the tf.data path gives: the same rows in the same order, the
same batch sizes, the same end of the input.
"""

import numpy as np
import pytest

import pyhooks
import pyhooks.estimators.pipeline as pipeline

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

N = 3000  # rows: x (float), k (whole numbers, 2 per row), t (text): above SMALL_VALUES


def _data():
    rows = np.arange(N)
    return {"x": rows.astype(np.float32), "k": np.stack([rows, -rows], 1).astype(np.int64),
            "t": np.array(["a", "b", "c"])[rows % 3]}


@pytest.fixture(scope="module")
def reader():
    data = _data()
    feeds = {"x": pipeline.aligned(data["x"]), "k": pipeline.aligned(data["k"]),
             "t": pipeline.Coded(*pipeline.coded(data["t"]))}
    graph = tf.Graph()
    with graph.as_default():
        pipe = pipeline.InputPipeline(tf, pipeline.signature_of(feeds))
    session = v1.Session(graph=graph)

    def read(batch_size, num_epochs, shuffle, seed=None, held=True):
        """The batches of one call, to the end of the input (or 40 batches without one)."""
        pipeline._HELD = held
        try:
            made = pyhooks.input_fn(data, features=["x", "k", "t"], batch_size=batch_size,
                                    num_epochs=num_epochs, shuffle=shuffle, seed=seed)
            pipe.start(session, feeds, made, True)
            batches = []
            for _ in range(40 if num_epochs is None else 10**6):
                try:
                    batches.append(session.run(pipe.batch))
                except tf.errors.OutOfRangeError:
                    break
            return batches
        finally:
            pipeline._HELD = True

    yield read
    session.close()


def _rows(batches):
    return np.concatenate([b["x"] for b in batches]).astype(np.int64)


def test_each_row_keeps_its_values_across_columns(reader):
    for batch in reader(256, 1, True, seed=5):
        rows = batch["x"].astype(np.int64)
        assert np.array_equal(batch["k"], np.stack([rows, -rows], 1))
        assert list(batch["t"]) == [b"abc"[r % 3:r % 3 + 1] for r in rows]


def test_without_shuffle_rows_come_in_order_and_two_epochs_end_after_2n(reader):
    batches = reader(256, 2, False)
    assert np.array_equal(_rows(batches), np.concatenate([np.arange(N), np.arange(N)]))
    # batches run on across the epochs; only the last one is smaller
    assert [len(b["x"]) for b in batches] == [256] * 23 + [6000 - 23 * 256]


def test_each_shuffled_epoch_is_a_permutation_of_all_rows(reader):
    rows = _rows(reader(256, 3, True, seed=7))
    epochs = rows.reshape(3, N)
    for epoch in epochs:
        assert np.array_equal(np.sort(epoch), np.arange(N))
    assert not np.array_equal(epochs[0], epochs[1])


@pytest.mark.parametrize("batch_size, num_epochs, shuffle", [
    (256, 2, True), (256, 2, False), (2999, 2, True), (3000, 3, True), (7, 1, True),
    (5000, 2, True)])  # a batch larger than the data: the tf.data path
def test_the_same_batches_as_the_tf_data_path(reader, batch_size, num_epochs, shuffle):
    held = reader(batch_size, num_epochs, shuffle, seed=3)
    plain = reader(batch_size, num_epochs, shuffle, seed=3, held=False)
    assert [len(b["x"]) for b in held] == [len(b["x"]) for b in plain]
    for mine, theirs in zip(held, plain):
        for name in ("x", "k", "t"):
            assert np.array_equal(mine[name], theirs[name])


def test_forever_runs_on_and_a_fixed_seed_repeats_its_order(reader):
    first = _rows(reader(256, None, True, seed=11))
    assert len(first) == 40 * 256
    assert np.array_equal(np.sort(first[:N]), np.arange(N))
    assert np.array_equal(first, _rows(reader(256, None, True, seed=11)))
    assert not np.array_equal(first, _rows(reader(256, None, True, seed=12)))


def test_steps_per_execution_loop_reads_to_the_end_of_held_data(tmp_path):
    data = _data()
    y = (data["x"] > N / 2).astype(np.int64)
    fcs = pyhooks.feature_columns(pyhooks.column_numeric("x"))
    est = pyhooks.linear_classifier(fcs, model_dir=str(tmp_path),
                                    config=pyhooks.run_config(steps_per_execution=10))
    x = {f"x{i}": data["x"] for i in range(2)}  # 3000 rows x 3 columns: held
    made = pyhooks.input_fn({**x, "x": data["x"], "y": y}, response="y",
                            features=["x", "x0", "x1"], batch_size=256, num_epochs=2)
    est.train(made)
    # 6000 rows in batches of 256: 24 steps, the last call running 4
    assert est.latest_checkpoint().endswith("model.ckpt-24")
