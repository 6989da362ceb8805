"""In-memory data held in the session: each batch one gather of its row numbers.

The held path (plain and permuted orders on data above ``SMALL_VALUES``) must
give the batches the tf.data path gives: the same rows in the same order, the
same batch sizes, the same end of the input.
"""

import io

import numpy as np
import pytest

import pyhooks
import pyhooks.estimators.pipeline as pipeline
from pyhooks.estimators.held_input import HeldInput

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1

N = 3000  # rows: x (float), k (whole numbers, 2 per row), t (text): above SMALL_VALUES


def _data():
    rows = np.arange(N)
    return {"x": rows.astype(np.float32), "k": np.stack([rows, -rows], 1).astype(np.int64),
            "t": np.array(["a", "b", "c"])[rows % 3],
            "y": (rows % 7).astype(np.int64).reshape(-1, 1)}  # one value, shape [1] (a label)


@pytest.fixture(scope="module")
def reader():
    data = _data()
    feeds = {"x": pipeline.aligned(data["x"]), "k": pipeline.aligned(data["k"]),
             "t": pipeline.Coded(*pipeline.coded(data["t"])), "y": pipeline.aligned(data["y"])}
    pipes = {}
    for held, kind in ((True, HeldInput), (False, pipeline.StreamedInput)):
        graph = tf.Graph()
        with graph.as_default():
            pipes[held] = (kind(tf, pipeline.signature_of(feeds)), v1.Session(graph=graph))

    def read(batch_size, num_epochs, shuffle, seed=None, held=True):
        """The batches of one call, to the end of the input (or 40 batches without one): held
        where the estimator would hold them, else through tf.data."""
        made = pyhooks.input_fn(data, features=["x", "k", "t"], batch_size=batch_size,
                                num_epochs=num_epochs, shuffle=shuffle, seed=seed)
        pipe, session = pipes[held and pipeline.reads_held(feeds, made, True)]
        pipe.start(session, feeds, made, True)
        batches = []
        for _ in range(40 if num_epochs is None else 10**6):
            try:
                batches.append(session.run(pipe.batch))
            except tf.errors.OutOfRangeError:
                break
        return batches

    yield read
    for _, session in pipes.values():
        session.close()


def _rows(batches):
    return np.concatenate([b["x"] for b in batches]).astype(np.int64)


def test_each_row_keeps_its_values_across_columns(reader):
    for batch in reader(256, 1, True, seed=5):
        rows = batch["x"].astype(np.int64)
        assert np.array_equal(batch["k"], np.stack([rows, -rows], 1))
        assert list(batch["t"]) == [b"abc"[r % 3:r % 3 + 1] for r in rows]
        assert np.array_equal(batch["y"], (rows % 7).reshape(-1, 1))


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
        for name in ("x", "k", "t", "y"):
            assert mine[name].shape == theirs[name].shape
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


def _feeds(offset):
    data = _data()
    return {"x": pipeline.aligned(data["x"] + offset), "k": pipeline.aligned(data["k"]),
            "t": pipeline.Coded(*pipeline.coded(data["t"]))}


def test_a_call_reads_its_own_input_whatever_the_session_held_before():
    """The held matrices are loaded again only when they hold other arrays: every call reads
    its own input (another input, the same one again, a new session)."""
    first, second = _feeds(0), _feeds(10_000)
    graph = tf.Graph()
    with graph.as_default():
        pipe = HeldInput(tf, pipeline.signature_of(first))
    loads = []

    class Recording(v1.Session):
        def run(self, fetches, *args, **kwargs):
            if isinstance(fetches, list):
                loads.append(any(op is pipe._load for op in fetches))  # noqa: SLF001
            return super().run(fetches, *args, **kwargs)

    def read(session, feeds):
        made = pyhooks.input_fn(_data(), features=["x", "k", "t"], batch_size=512,
                                num_epochs=1, shuffle=False)
        pipe.start(session, feeds, made, True)
        return session.run(pipe.batch)["x"][:3].tolist()

    with Recording(graph=graph) as session:
        assert read(session, first) == [0, 1, 2]
        assert read(session, first) == [0, 1, 2]
        assert read(session, second) == [10_000, 10_001, 10_002]
        assert read(session, first) == [0, 1, 2]
        assert loads == [True, False, True, True]
    with Recording(graph=graph) as session:  # a new session holds nothing yet
        assert read(session, first) == [0, 1, 2]
    assert loads[-1] is True


def test_the_held_input_is_not_kept_alive_by_the_pipeline():
    import gc
    import weakref

    data = _data()
    # two float columns: the matrix is a copy (TensorFlow may keep a lone column's fed array
    # as the matrix itself)
    feeds = {"x": pipeline.aligned(data["x"]), "y": pipeline.aligned(data["x"] * 2)}
    graph = tf.Graph()
    with graph.as_default():
        pipe = HeldInput(tf, pipeline.signature_of(feeds))
    with v1.Session(graph=graph) as session:
        made = pyhooks.input_fn({**data, "y": data["x"]}, features=["x", "y"], batch_size=512)
        pipe.start(session, feeds, made, True)
        gone = [weakref.ref(array) for array in feeds.values()]
        del feeds
        gc.collect()
        assert [ref() for ref in gone] == [None, None]


def test_columns_of_one_value_keep_their_shape_when_held():
    """A label of shape [1] beside plain columns (every column one word a row) is [batch, 1]
    held as through tf.data."""
    data = _data()
    feeds = {"x": pipeline.aligned(data["x"]), "y": pipeline.aligned(data["y"], np.float32)}
    made = pyhooks.input_fn(data, features=["x", "y"], batch_size=128, shuffle=False)
    assert pipeline.reads_held(feeds, made, True)
    seen = []
    for kind in (HeldInput, pipeline.StreamedInput):
        graph = tf.Graph()
        with graph.as_default():
            pipe = kind(tf, pipeline.signature_of(feeds))
        with v1.Session(graph=graph) as session:
            pipe.start(session, feeds, made, True)
            seen.append(session.run(pipe.batch))
    held, streamed = seen
    assert held["y"].shape == streamed["y"].shape == (128, 1)
    assert np.array_equal(held["y"], streamed["y"]) and np.array_equal(held["x"], streamed["x"])


def _estimators():
    """Canned estimators over every kind of column the held matrix carries (float, a float of
    shape 2, text, whole numbers, a weight), with their labels."""
    p = pyhooks
    numeric = [p.column_numeric("a"), p.column_numeric("b"), p.column_numeric("pair", shape=2)]
    colour = p.column_categorical_with_vocabulary_list("colour", ["red", "green", "blue"])
    count = p.column_categorical_with_identity("count", num_buckets=5)
    seed = p.run_config(tf_random_seed=7)
    return {
        "linear_regressor": (lambda d: p.linear_regressor(
            numeric + [colour, count], model_dir=d), "score"),
        "linear_regressor, one value a row": (lambda d: p.linear_regressor(
            numeric[:2], model_dir=d), "score"),
        "linear_regressor, 30 steps a call": (lambda d: p.linear_regressor(
            numeric, model_dir=d, config=p.run_config(steps_per_execution=30)), "score"),
        "linear_regressor, 2 labels": (lambda d: p.linear_regressor(
            numeric, label_dimension=2, model_dir=d), ["score", "score2"]),
        "linear_classifier, weighted": (lambda d: p.linear_classifier(
            numeric + [colour], weight_column="w", model_dir=d), "label"),
        "linear_classifier, 3 classes": (lambda d: p.linear_classifier(
            numeric + [count], n_classes=3, model_dir=d), "label3"),
        "dnn_classifier": (lambda d: p.dnn_classifier(
            [8], numeric + [p.column_indicator(colour)], model_dir=d, config=seed), "label"),
        "dnn_regressor, numeric only": (lambda d: p.dnn_regressor(
            [8], numeric, model_dir=d, config=seed), "score"),
        "wide and deep": (lambda d: p.dnn_linear_combined_classifier(
            linear_feature_columns=[colour, count], dnn_feature_columns=numeric,
            dnn_hidden_units=[4], model_dir=d, config=seed), "label"),
    }


@pytest.mark.parametrize("name", list(_estimators()))
def test_estimators_learn_the_same_from_held_data_as_through_tf_data(name, tmp_path,
                                                                    monkeypatch):
    """Held in the session or read through tf.data, the same batches make the same model:
    the same weights, metrics and predictions (trained on a permutation per epoch, fixed by
    the seed; evaluated and predicted in input order). 30 steps a call read 1.5 epochs."""
    rng = np.random.default_rng(3)
    n = 2000
    a, b = rng.normal(size=n).astype(np.float32), rng.normal(size=n).astype(np.float32)
    data = {"a": a, "b": b, "pair": rng.normal(size=(n, 2)).astype(np.float32),
            "colour": rng.choice(["red", "green", "blue"], n), "count": rng.integers(0, 5, n),
            "w": rng.uniform(0.5, 2, n).astype(np.float32), "score": 3 * a - b,
            "score2": a + b, "label": (a > b).astype(np.int64),
            "label3": np.digitize(a, [-0.5, 0.5])}
    make, response = _estimators()[name]
    features = ["a", "b", "pair", "colour", "count", "w"]
    results = []
    for held in (True, False):
        monkeypatch.setattr(pipeline, "_HELD", held)
        made = pyhooks.input_fn(data, features=features, response=response, batch_size=100,
                                seed=5, num_epochs=2)
        assert pipeline.reads_held(
            {k: data[k] for k in data if k != "label3"}, made, True) is held
        model = make(str(tmp_path / str(held)))
        model.train(made, hooks=[pyhooks.ProgressBarHook(writer=io.StringIO())])
        names = [v for v in model.get_variable_names() if "Ftrl" not in v and "Adagrad" not in v]
        results.append(({v: model.get_variable_value(v) for v in names},
                        model.evaluate(made), model.predict(made, as_dict=True)))
    (w1, m1, p1), (w2, m2, p2) = results
    assert w1.keys() == w2.keys() and w1
    for key in w1:
        np.testing.assert_allclose(w1[key], w2[key], rtol=1e-5, atol=1e-6, err_msg=key)
    assert m1 == pytest.approx(m2, rel=1e-5)
    for key in p1:
        if p1[key].dtype.kind in "biuf":
            np.testing.assert_allclose(p1[key], p2[key], rtol=1e-5, atol=1e-6, err_msg=key)
        else:  # class names
            assert np.array_equal(p1[key], p2[key]), key


def test_no_step_copies_the_window_of_row_numbers():
    """A gather from a resource variable puts it in TensorFlow's "copy on read" mode, after
    which each read of it copies it whole: a batch sliced from the window of row numbers
    would copy all of it at every step (1,000,000 rows: 1-2 ms a step). A step's
    allocations stay batch-sized, before and after a new epoch."""
    from tensorflow.core.protobuf import config_pb2

    data = _data()
    feeds = {"x": pipeline.aligned(data["x"]), "y": pipeline.aligned(data["y"], np.float32)}
    made = pyhooks.input_fn(data, features=["x", "y"], batch_size=256, num_epochs=None, seed=1)
    assert pipeline.reads_held(feeds, made, True)
    graph = tf.Graph()
    with graph.as_default():
        pipe = HeldInput(tf, pipeline.signature_of(feeds))
    options = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE)

    def largest_allocation():
        metadata = config_pb2.RunMetadata()
        session.run(pipe.batch, options=options, run_metadata=metadata)
        return max(memory.total_bytes for device in metadata.step_stats.dev_stats
                   for node in device.node_stats for memory in node.memory)

    with v1.Session(graph=graph) as session:
        pipe.start(session, feeds, made, True)
        session.run(pipe.batch)  # makes the first epoch's order
        before = largest_allocation()
        for _ in range(N // 256):  # into the second epoch, made by a step
            session.run(pipe.batch)
        after = largest_allocation()
    assert before < N * 4 / 2 and after < N * 4 / 2, (before, after)  # the window: 4 B a row


def test_a_model_fn_learns_the_same_from_held_data_as_through_tf_data(tmp_path, monkeypatch):
    """A custom estimator's features (float64 and int64, held as two words each) are the same
    held or read through tf.data: the same weights and predictions."""
    from pyhooks.estimators import estimator, estimator_spec, layers

    def model_fn(features, labels, mode):
        inputs = tf.stack([tf.cast(features["a"], tf.float32),
                           tf.cast(features["n"], tf.float32)], 1)
        predictions = tf.reshape(layers.dense(inputs, 1), [-1])
        if mode == "infer":
            return estimator_spec(mode, predictions={"y": predictions})
        loss = v1.losses.mean_squared_error(tf.cast(labels, tf.float32), predictions)
        train_op = v1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=train_op)

    rng = np.random.default_rng(4)
    data = {"a": rng.normal(size=3000), "n": rng.integers(-5, 5, 3000)}
    data["y"] = 2 * data["a"] - data["n"]
    results = []
    for held in (True, False):
        monkeypatch.setattr(pipeline, "_HELD", held)
        made = pyhooks.input_fn(data, features=["a", "n"], response="y", batch_size=64, seed=2,
                                num_epochs=1)
        model = estimator(model_fn, model_dir=str(tmp_path / str(held)),
                          config=pyhooks.run_config(tf_random_seed=3))
        history = model.train(made, hooks=[pyhooks.ProgressBarHook(writer=io.StringIO())])
        assert history.to_dict()["steps"][-1] == 47  # 3000 rows in batches of 64
        assert {held} == {h for _, h in model._states}  # noqa: SLF001 (the source it read)
        results.append(({v: model.get_variable_value(v) for v in model.get_variable_names()},
                        model.predict(made, as_dict=True)["y"]))
    (w1, p1), (w2, p2) = results
    for key in w1:
        np.testing.assert_allclose(w1[key], w2[key], rtol=1e-5, atol=1e-6, err_msg=key)
    np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-6)


def test_hooks_see_the_last_call_of_a_steps_loop_that_reads_the_last_batches(tmp_path):
    """At 30 steps a call over 40 batches, the second call runs the 10 left and its hooks see
    it (held input readies a call's batches before its loop); the input's end ends train()."""
    rng = np.random.default_rng(5)
    data = {"a": rng.normal(size=2000).astype(np.float32),
            "b": rng.normal(size=2000).astype(np.float32)}
    data["y"] = data["a"] - data["b"]
    made = pyhooks.input_fn(data, features=["a", "b"], response="y", batch_size=100,
                            num_epochs=2)
    calls = []
    model = pyhooks.linear_regressor(
        [pyhooks.column_numeric("a"), pyhooks.column_numeric("b")], model_dir=str(tmp_path),
        config=pyhooks.run_config(steps_per_execution=30))
    history = model.train(made, hooks=[
        pyhooks.ProgressBarHook(writer=io.StringIO()),
        pyhooks.LambdaHook(after_run=lambda context, values: calls.append(1))])
    assert len(calls) == 2 and history.to_dict()["steps"][-1] == 40
    assert model.latest_checkpoint().endswith("model.ckpt-40")
