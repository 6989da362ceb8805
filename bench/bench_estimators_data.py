"""Estimators on real-sized data: pyhooks vs tf.estimator 2.15, Keras model.fit and a hand-written graph.

Run: ``.venv/bin/python bench/bench_estimators_data.py`` (``--quick``: fewer
repeats; ``--sweep``: also examples/s against batch size on (a), written to
``bench/batch_size.csv`` for ``bench/plot_batch_size.R``).

Workloads (the same synthetic data in every system, made from fixed seeds):

* (a) a DNN classifier, hidden units [64, 32], Adagrad 0.05, on 100,000 rows x
  20 numeric columns, batch 256;
* (a custom) the same network as a custom estimator: one ``model_fn`` (see
  ``custom_model_fn``: ``input_layer``, ``dense`` x 3, sigmoid cross-entropy,
  Adagrad 0.05) for pyhooks' ``estimator()`` and ``tf.estimator.Estimator``;
  Keras and the floor train the same layers as (a);
* (a wide & deep) ``dnn_linear_combined_classifier`` / ``DNNLinearCombined
  Classifier`` with the 20 columns on both sides (FTRL and Adagrad, the
  defaults); the floor adds a linear part trained by FTRL (one backward pass
  for both optimizers), Keras adds a ``Dense(1)`` of the inputs to the logit
  (one optimizer, Adagrad, for both);
* (b) 1,000,000 rows: two numeric columns, ``user`` (50,000 distinct strings,
  hashed into 1,000 buckets) and ``color`` (a vocabulary list of 8 strings);
  (b lin) a linear classifier (Ftrl) on all four, (b dnn) a DNN classifier
  [64, 32] with an 8-dimensional embedding of the hashed ``user`` and
  ``color`` one-hot; batch 256;
* ``evaluate()`` and ``predict()`` of (a)'s model over its 100,000 rows.

Systems, each in its own process (alive for the whole run):

* pyhooks ``dnn_classifier`` / ``linear_classifier`` with ``input_fn()`` on a
  dict of columns, its default hooks on (NaN check, history, progress bar);
* tf.estimator 2.15 (``.venv-bench-tf215``, created by ``bench_estimators.py``'s
  helper): ``DNNClassifier`` / ``LinearClassifier``, ``input_fn`` returning
  ``Dataset.from_tensor_slices((dict of columns, labels)).shuffle(buffer).repeat()
  .batch(b).prefetch(AUTOTUNE)``, its default hooks;
* Keras 3 ``model.fit`` with the same layers on ``from_tensor_slices((X, y))``
  (preprocessing layers ``Hashing``/``StringLookup`` in the dataset for (b));
* the floor: the same model written by hand with ``tf.compat.v1`` in a private
  ``tf.Graph``: ``from_tensor_slices`` of one ``[n, 20]`` matrix (or the (b)
  columns), ``shuffle``, ``repeat``, ``batch``, ``prefetch``, and a plain
  ``Session.run(train_op)`` loop;
* "floor, batched": the same graph fed whole batches (each epoch a random
  permutation gathers the data, ``rebatch`` cuts it);
* "pyhooks, TF pool": pyhooks with each step's ops in TensorFlow's inter-op
  thread pool (``kept_session.RUN_INLINE = False``), the side-by-side behind that choice.

Every system shuffles with a buffer holding all rows (pyhooks' default); (a)
is also run with a buffer of 1,000 rows. tf.estimator 2.15 builds a graph
holding the data at every call: it takes part in SLOW_ROUNDS measured rounds
only, without a warm-up call. Last, peak RSS of (b) for pyhooks and three
peers, each in a fresh process. Training throughput is measured
inside a training call, over STEPS steps after WARMUP steps (a hook, callback
or loop counter reads the clock), so graph building and restoring are left
out. Rounds alternate between the systems (the order changes each round) so
that all see the same machine load; the tables show medians. Not a test:
numbers vary with the machine and its load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
WARMUP, STEPS = (int(n) for n in os.environ.get("BENCH_STEPS", "50,400").split(","))
SYSTEMS = ("pyhooks", "pyhooks, TF pool", "tf.estimator 2.15", "Keras model.fit", "floor",
           "floor, batched")
SWEEP = (32, 64, 128, 256, 512, 1024, 2048, 4096)
# tf.estimator 2.15 builds a graph holding the data at every call (~10-40 s on 1M rows):
# it takes part in this many measured rounds only (stated beside each table)
SLOW, SLOW_ROUNDS = "tf.estimator 2.15", 3
RSS_SYSTEMS = ("pyhooks", "tf.estimator 2.15", "Keras model.fit", "floor")
A_ROWS, A_COLS, B_ROWS = 100_000, 20, 1_000_000
COLORS = ["red", "green", "blue", "black", "white", "yellow", "purple", "orange"]
LR_DNN = 0.05


# --------------------------------------------------------------------------- data (all sides)
def data_a():
    import numpy as np

    rng = np.random.default_rng(18)
    x = rng.normal(size=(A_ROWS, A_COLS)).astype(np.float32)
    w = rng.normal(size=A_COLS)
    y = (x @ w + rng.normal(size=A_ROWS) > 0).astype(np.int64)
    return x, y


def data_b():
    import numpy as np

    rng = np.random.default_rng(19)
    users = rng.integers(0, 50_000, B_ROWS)
    color = rng.integers(0, len(COLORS), B_ROWS)
    x1, x2 = rng.normal(size=B_ROWS), rng.normal(size=B_ROWS)
    score = x1 - 0.5 * x2 + (users % 7 - 3) * 0.3 + (color - 3.5) * 0.2
    return {"x1": x1, "x2": x2,
            "user": np.char.add("u", users.astype(str)),
            "color": np.array(COLORS)[color],
            "label": (score + rng.normal(size=B_ROWS) > 0).astype(np.int64)}


def data_key(workload):
    """Which data set a workload trains on: "a" for (a) and its custom and wide & deep models."""
    return "a" if workload.startswith("a") else "b"


def columns_a():
    x, y = data_a()
    columns = {f"x{i}": x[:, i] for i in range(A_COLS)}
    columns["label"] = y
    return columns


def custom_model_fn(tf, dense, input_layer, estimator_spec):
    """(a)'s model as a tfestimators user writes a custom estimator's ``model_fn``.

    The same function for pyhooks' ``estimator()`` and ``tf.estimator.Estimator``;
    only where ``dense``, ``input_layer`` and ``estimator_spec`` come from differs.
    """
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        net = input_layer(features, params["columns"])
        net = dense(net, 64, activation=tf.nn.relu)
        net = dense(net, 32, activation=tf.nn.relu)
        logits = tf.reshape(dense(net, 1), [-1])
        predictions = {"probabilities": tf.sigmoid(logits)}
        if mode == "infer":
            return estimator_spec(mode, predictions=predictions)
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        train_op = v1.train.AdagradOptimizer(LR_DNN).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, predictions=predictions, loss=loss, train_op=train_op)
    return model_fn


class Clock:
    """Reads the clock after step WARMUP and after step WARMUP + STEPS."""

    def __init__(self):
        self.count = 0
        self.start = self.end = None

    def tick(self):
        self.count += 1
        if self.count == WARMUP:
            self.start = time.perf_counter()
        elif self.count == WARMUP + STEPS:
            self.end = time.perf_counter()

    def rate(self, batch):
        return STEPS * batch / (self.end - self.start)


def _buffer(buffer, rows):
    return rows if buffer is None else buffer


# --------------------------------------------------------------------------- pyhooks
def side_pyhooks(preloaded=None):
    import numpy as np

    import pyhooks
    from pyhooks import estimators as E
    from pyhooks.estimators import _quiet, layers

    tf = _quiet.import_tensorflow()
    models, inputs, cache = {}, {}, dict(preloaded or {})

    def sink(text):
        pass

    class Timer(pyhooks.SessionRunHook):
        def __init__(self):
            self.clock = Clock()

        def after_run(self, run_context, run_values):
            self.clock.tick()

    def model_for(workload):
        if workload not in models:
            fcs = E.feature_columns(*[E.column_numeric(f"x{i}") for i in range(A_COLS)])
            if workload == "a":
                models[workload] = E.dnn_classifier([64, 32], fcs)
            elif workload == "a_custom":
                models[workload] = E.estimator(
                    custom_model_fn(tf, layers.dense, E.input_layer, E.estimator_spec),
                    params={"columns": fcs})
            elif workload == "a_wide_deep":
                models[workload] = E.dnn_linear_combined_classifier(fcs, fcs, [64, 32])
            elif workload == "b_lin":
                models[workload] = E.linear_classifier(E.feature_columns(
                    E.column_numeric("x1"), E.column_numeric("x2"),
                    E.column_categorical_with_hash_bucket("user", 1000),
                    E.column_categorical_with_vocabulary_list("color", COLORS)))
            else:
                models[workload] = E.dnn_classifier([64, 32], E.feature_columns(
                    E.column_numeric("x1"), E.column_numeric("x2"),
                    E.column_embedding(E.column_categorical_with_hash_bucket("user", 1000), 8),
                    E.column_indicator(E.column_categorical_with_vocabulary_list("color",
                                                                                COLORS))))
        return models[workload]

    def data(workload):
        key = data_key(workload)
        if key not in cache:
            cache[key] = columns_a() if key == "a" else data_b()
        return cache[key]

    def train(workload, batch, buffer):
        key = (workload, batch, buffer)
        if key not in inputs:
            columns = data(workload)
            features = [k for k in columns if k != "label"]
            inputs[key] = E.input_fn(columns, features, "label", batch_size=batch,
                                     shuffle=True, num_epochs=None, queue_capacity=buffer)
        timer = Timer()
        model_for(workload).train(inputs[key], steps=WARMUP + STEPS,
                                  hooks=[timer, pyhooks.ProgressBarHook(writer=sink)])
        return timer.clock.rate(batch)

    def evaluate(kind):
        model = model_for("a")
        columns = data("a")
        features = [k for k in columns if k != "label"]
        if model.latest_checkpoint() is None:
            train("a", 256, None)
        key = ("eval", kind)
        if key not in inputs:
            inputs[key] = E.input_fn(columns, features, "label" if kind == "evaluate" else None,
                                     batch_size=1024)
        start = time.perf_counter()
        if kind == "evaluate":
            model.evaluate(inputs[key])
        else:
            out = model.predict(inputs[key], as_dict=True)
            assert len(out["class_ids"]) == A_ROWS
        return A_ROWS / (time.perf_counter() - start)

    del np
    return train, evaluate


# --------------------------------------------------------------------------- tf.estimator 2.15
def side_tf_estimator(preloaded=None):
    import tempfile

    import numpy as np
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    fc = tf.feature_column
    models, cache = {}, dict(preloaded or {})

    class Timer(tf.estimator.SessionRunHook):
        def __init__(self):
            self.clock = Clock()

        def after_run(self, run_context, run_values):
            self.clock.tick()

    def data(workload):
        key = data_key(workload)
        if key not in cache:
            cache[key] = columns_a() if key == "a" else data_b()
        return cache[key]

    def model_for(workload):
        if workload not in models:
            model_dir = tempfile.mkdtemp(prefix="bench_tfest_")
            config = tf.estimator.RunConfig(log_step_count_steps=100)
            cols = [fc.numeric_column(f"x{i}") for i in range(A_COLS)]
            if workload == "a":
                models[workload] = tf.estimator.DNNClassifier(  # default: Adagrad 0.05
                    [64, 32], cols, model_dir=model_dir, config=config)
            elif workload == "a_custom":
                models[workload] = tf.estimator.Estimator(
                    custom_model_fn(tf, tf.compat.v1.layers.dense,
                                    tf.compat.v1.feature_column.input_layer,
                                    tf.estimator.EstimatorSpec),
                    model_dir=model_dir, config=config, params={"columns": cols})
            elif workload == "a_wide_deep":
                models[workload] = tf.estimator.DNNLinearCombinedClassifier(
                    model_dir=model_dir, linear_feature_columns=cols, dnn_feature_columns=cols,
                    dnn_hidden_units=[64, 32], config=config)
            else:
                user = fc.categorical_column_with_hash_bucket("user", 1000)
                color = fc.categorical_column_with_vocabulary_list("color", COLORS)
                numeric = [fc.numeric_column("x1"), fc.numeric_column("x2")]
                if workload == "b_lin":
                    models[workload] = tf.estimator.LinearClassifier(
                        numeric + [user, color], model_dir=model_dir, config=config)
                else:
                    models[workload] = tf.estimator.DNNClassifier(
                        [64, 32], numeric + [fc.embedding_column(user, 8),
                                            fc.indicator_column(color)],
                        model_dir=model_dir, config=config)
        return models[workload]

    def make_input(columns, batch, buffer, repeat=True, labels=True):
        features = {k: v for k, v in columns.items() if k != "label"}
        n = len(columns["label"])

        def input_fn():
            pieces = (features, columns["label"]) if labels else features
            dataset = tf.data.Dataset.from_tensor_slices(pieces)
            if repeat:
                dataset = dataset.shuffle(_buffer(buffer, n)).repeat()
            return dataset.batch(batch).prefetch(tf.data.AUTOTUNE)
        return input_fn

    def train(workload, batch, buffer):
        timer = Timer()
        model_for(workload).train(make_input(data(workload), batch, buffer),
                                  steps=WARMUP + STEPS, hooks=[timer])
        return timer.clock.rate(batch)

    def evaluate(kind):
        model = model_for("a")
        if model.latest_checkpoint() is None:
            train("a", 256, None)
        start = time.perf_counter()
        if kind == "evaluate":
            model.evaluate(make_input(data("a"), 1024, None, repeat=False))
        else:
            out = list(model.predict(make_input(data("a"), 1024, None, repeat=False,
                                                labels=False)))
            assert len(out) == A_ROWS
        return A_ROWS / (time.perf_counter() - start)

    del np
    return train, evaluate


# --------------------------------------------------------------------------- Keras
def side_keras(preloaded=None):
    import numpy as np
    import tensorflow as tf
    import keras

    models, cache = {}, dict(preloaded or {})

    class Timer(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.clock = Clock()

        def on_train_batch_end(self, batch, logs=None):
            self.clock.tick()

    def dense_stack(inputs):
        net = keras.layers.Dense(64, activation="relu")(inputs)
        net = keras.layers.Dense(32, activation="relu")(net)
        return keras.layers.Dense(1)(net)

    def model_for(workload):
        if workload in models:
            return models[workload]
        if data_key(workload) == "a":  # a_custom: the same layers; a_wide_deep: plus a linear part
            inputs = keras.Input((A_COLS,))
            logit = dense_stack(inputs)
            if workload == "a_wide_deep":
                logit = keras.layers.Add()([keras.layers.Dense(1)(inputs), logit])
            model = keras.Model(inputs, logit)
            optimizer = keras.optimizers.Adagrad(LR_DNN)
        else:
            numeric = keras.Input((2,), name="numeric")
            user = keras.Input((), dtype="int64", name="user")
            color = keras.Input((), dtype="int64", name="color")
            inputs = [numeric, user, color]
            if workload == "b_lin":
                logit = keras.layers.Add()([
                    keras.layers.Dense(1)(numeric),
                    keras.layers.Embedding(1000, 1)(user),
                    keras.layers.Embedding(len(COLORS) + 1, 1)(color)])
                model = keras.Model(inputs, logit)
                optimizer = keras.optimizers.Ftrl(0.2)
            else:
                net = keras.layers.Concatenate()([
                    numeric, keras.layers.Embedding(1000, 8)(user),
                    keras.layers.CategoryEncoding(len(COLORS) + 1, "one_hot")(color)])
                model = keras.Model(inputs, dense_stack(net))
                optimizer = keras.optimizers.Adagrad(LR_DNN)
        model.compile(optimizer, keras.losses.BinaryCrossentropy(from_logits=True))
        models[workload] = model
        return model

    def dataset(workload, batch, buffer):
        key = (workload, batch, buffer)
        if key in cache:
            return cache[key]
        if data_key(workload) == "a":
            x, y = data_a()
            pieces, n, prepare = (x, y), len(y), None
        else:
            if "b" not in cache:
                cache["b"] = data_b()
            b = cache["b"]
            n = len(b["label"])
            pieces = ({"numeric": np.stack([b["x1"], b["x2"]], 1).astype(np.float32),
                       "user": b["user"], "color": b["color"]}, b["label"])
            hashing = keras.layers.Hashing(1000)
            lookup = keras.layers.StringLookup(vocabulary=COLORS)

            def prepare(features, labels):
                return ({"numeric": features["numeric"], "user": hashing(features["user"]),
                         "color": lookup(features["color"])}, labels)
        data = tf.data.Dataset.from_tensor_slices(pieces).shuffle(_buffer(buffer, n)).repeat()
        data = data.batch(batch)
        if prepare is not None:
            data = data.map(prepare, num_parallel_calls=tf.data.AUTOTUNE)
        cache[key] = data.prefetch(tf.data.AUTOTUNE)
        return cache[key]

    def train(workload, batch, buffer):
        timer = Timer()
        model_for(workload).fit(dataset(workload, batch, buffer), epochs=1,
                                steps_per_epoch=WARMUP + STEPS, verbose=0, callbacks=[timer])
        return timer.clock.rate(batch)

    def evaluate(kind):
        model = model_for("a")
        x, y = data_a()
        start = time.perf_counter()
        if kind == "evaluate":
            model.evaluate(x, y, batch_size=1024, verbose=0)
        else:
            assert len(model.predict(x, batch_size=1024, verbose=0)) == A_ROWS
        return A_ROWS / (time.perf_counter() - start)

    return train, evaluate


# --------------------------------------------------------------------------- the floor
def side_floor(batched=False, preloaded=None):
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    runs, cache = {}, dict(preloaded or {})

    def dense_stack(net):
        for i, width in enumerate((64, 32, 1)):
            kernel = v1.get_variable(f"k{i}", [net.shape[1], width],
                                     initializer=v1.glorot_uniform_initializer())
            bias = v1.get_variable(f"b{i}", [width], initializer=v1.zeros_initializer())
            net = tf.nn.bias_add(tf.matmul(net, kernel), bias)
            if width != 1:
                net = tf.nn.relu(net)
        return net[:, 0]

    def b_features(batch_features):
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(COLORS),
                                                tf.range(len(COLORS), dtype=tf.int64)), -1)
        user = tf.strings.to_hash_bucket_fast(batch_features["user"], 1000)
        color = table.lookup(batch_features["color"])
        numeric = tf.stack([batch_features["x1"], batch_features["x2"]], 1)
        return numeric, user, color

    def graph_for(workload, batch, buffer, mode="train"):
        key = (workload, batch, buffer, mode)
        if key in runs:
            return runs[key]
        graph = tf.Graph()
        with graph.as_default():
            if data_key(workload) == "a":
                x, y = data_a()
                pieces = (x, y) if mode != "predict" else x
            else:
                if "b" not in cache:
                    cache["b"] = data_b()
                b = cache["b"]
                pieces = ({"x1": b["x1"].astype(np.float32), "x2": b["x2"].astype(np.float32),
                           "user": b["user"], "color": b["color"]}, b["label"])
            n = A_ROWS if data_key(workload) == "a" else B_ROWS
            arrays = tf.nest.flatten(pieces)
            holders = [v1.placeholder(tf.as_dtype(a.dtype) if a.dtype.kind != "U" else tf.string,
                                      a.shape) for a in arrays]
            held = tf.nest.pack_sequence_as(pieces, holders)
            if batched and mode == "train":
                if buffer is not None:
                    raise ValueError("the batched floor permutes all rows (no bounded buffer)")

                def permuted(epoch):  # a new permutation of all rows each epoch, gathered
                    order = tf.random.shuffle(tf.range(n, dtype=tf.int64))
                    return tf.nest.map_structure(lambda t: tf.gather(t, order), held)
                data = tf.data.Dataset.counter().map(permuted).rebatch(batch)
            else:
                data = tf.data.Dataset.from_tensor_slices(held)
                if mode == "train":
                    data = data.shuffle(_buffer(buffer, n)).repeat()
                data = data.batch(batch)
            data = data.prefetch(tf.data.AUTOTUNE)
            iterator = v1.data.make_initializable_iterator(data)
            batch_tensors = iterator.get_next()
            features, labels = batch_tensors if mode != "predict" else (batch_tensors, None)
            if data_key(workload) == "a":
                logits = dense_stack(features)
                if workload == "a_wide_deep":  # a linear part trained by FTRL, as the estimators
                    weights = v1.get_variable("wide", [A_COLS, 1], initializer=v1.zeros_initializer())
                    bias = v1.get_variable("wide_bias", [1], initializer=v1.zeros_initializer())
                    logits += (tf.matmul(features, weights) + bias)[:, 0]
            else:
                numeric, user, color = b_features(features)
                if workload == "b_lin":
                    weights_user = v1.get_variable("wu", [1000, 1], initializer=v1.zeros_initializer())
                    weights_color = v1.get_variable("wc", [len(COLORS), 1],
                                                    initializer=v1.zeros_initializer())
                    weights_num = v1.get_variable("wn", [2, 1], initializer=v1.zeros_initializer())
                    bias = v1.get_variable("bias", [1], initializer=v1.zeros_initializer())
                    logits = (tf.matmul(numeric, weights_num) + tf.gather(weights_user, user)
                              + tf.gather(weights_color, color) + bias)[:, 0]
                else:
                    embedding = v1.get_variable("emb", [1000, 8])
                    net = tf.concat([numeric, tf.gather(embedding, user),
                                     tf.one_hot(color, len(COLORS))], 1)
                    logits = dense_stack(net)
            if mode == "predict":
                op = tf.sigmoid(logits)
            else:
                loss = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(
                    labels=tf.cast(labels, tf.float32), logits=logits))
                if mode == "train" and workload == "a_wide_deep":  # one backward pass, two updates
                    wide = [v for v in v1.trainable_variables() if v.name.startswith("wide")]
                    deep = [v for v in v1.trainable_variables() if not v.name.startswith("wide")]
                    grads = tf.gradients(loss, wide + deep)
                    op = tf.group(
                        v1.train.FtrlOptimizer(0.2).apply_gradients(zip(grads[:2], wide)),
                        v1.train.AdagradOptimizer(LR_DNN).apply_gradients(zip(grads[2:], deep)))
                elif mode == "train":
                    optimizer = (v1.train.FtrlOptimizer(0.2) if workload == "b_lin"
                                 else v1.train.AdagradOptimizer(LR_DNN))
                    op = optimizer.minimize(loss)
                else:
                    op = loss
            session = v1.Session(graph=graph)
            feed = dict(zip(holders, arrays))
            session.run([v1.global_variables_initializer(), v1.tables_initializer()])
            session.run(iterator.initializer, feed)
        runs[key] = (session, op, lambda: session.run(iterator.initializer, feed))
        return runs[key]

    def train(workload, batch, buffer):
        session, op, _ = graph_for(workload, batch, buffer)
        clock = Clock()
        for _ in range(WARMUP + STEPS):
            session.run(op)
            clock.tick()
        return clock.rate(batch)

    def evaluate(kind):
        session, op, initializer = graph_for("a", 1024, None, kind)
        start = time.perf_counter()
        initializer()  # one pass over the data per call
        run_once = session.make_callable(op)
        try:
            while True:
                run_once()
        except tf.errors.OutOfRangeError:
            pass
        return A_ROWS / (time.perf_counter() - start)

    return train, evaluate


# --------------------------------------------------------------------------- peak memory
def peak_rss(workload, system="pyhooks"):
    """Peak RSS growth of a fresh process of ``system`` training on (b), vs the data's size."""

    def status(field):
        with open("/proc/self/status", encoding="ascii") as stream:
            for line in stream:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
        return 0

    import tensorflow  # noqa: F401 - its import is not counted

    base = status("VmRSS")
    data = data_b()
    size = sum(v.nbytes for v in data.values())
    with open("/proc/self/clear_refs", "w", encoding="ascii") as stream:
        stream.write("5")  # resets the peak: making the data's temporaries are not counted
    train, _ = SIDES[system](preloaded={"b": data})
    start = time.perf_counter()
    train(workload, 256, None)
    return {"base": base, "data": size, "peak": status("VmHWM") - base,
            "seconds": time.perf_counter() - start}


# --------------------------------------------------------------------------- driver
def side_pyhooks_pool(preloaded=None):
    """pyhooks with each step's ops run by TensorFlow's inter-op thread pool."""
    from pyhooks.estimators import kept_session

    kept_session.RUN_INLINE = False  # the side-by-side the module docstring cites
    return side_pyhooks(preloaded)


SIDES = {"pyhooks": side_pyhooks, "pyhooks, TF pool": side_pyhooks_pool,
         "tf.estimator 2.15": side_tf_estimator,
         "Keras model.fit": side_keras, "floor": side_floor,
         "floor, batched": lambda **kwargs: side_floor(batched=True, **kwargs)}


def serve(name):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, ROOT)
    train = evaluate = None  # a side measuring memory starts from nothing
    if "--bare" not in sys.argv:
        train, evaluate = SIDES[name]()
    print(json.dumps({"ready": True}), flush=True)
    global WARMUP, STEPS
    for line in sys.stdin:
        command = json.loads(line)
        WARMUP, STEPS = command.get("warmup", WARMUP), command.get("steps", STEPS)
        try:
            if command["op"] == "train":
                value = train(command["workload"], command["batch"], command["buffer"])
            elif command["op"] == "rss":
                value = peak_rss(command["workload"], name)
            else:
                value = evaluate(command["op"])
        except Exception as error:  # noqa: BLE001 - reported in the table, not fatal
            value = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"}
        print(json.dumps({"value": value}), flush=True)


class Side:
    def __init__(self, name, python, bare=False):
        self.name = name
        self.seconds = 0.0  # time spent answering
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)
        self.process = subprocess.Popen([python, os.path.abspath(__file__), "--serve", name]
                                        + (["--bare"] if bare else []),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env)
        self.ask(None)

    def ask(self, command):
        start = time.perf_counter()
        try:
            return self._ask(command)
        finally:
            self.seconds += time.perf_counter() - start

    def _ask(self, command):
        if command is not None:
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} side ended")
            if line.startswith("{"):
                return json.loads(line).get("value")

    def close(self):
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # TensorFlow's threads can hold up its exit
            self.process.kill()
            self.process.wait()


def start_sides(names=SYSTEMS):
    from bench_estimators import _bench_python, ensure_bench_venv

    sides = {}
    why_not = ensure_bench_venv()
    for name in names:
        if name.startswith("tf.estimator") and why_not is not None:
            print(f"tf.estimator side unavailable: {why_not}")
            continue
        python = _bench_python() if name.startswith("tf.estimator") else sys.executable
        sides[name] = Side(name, python)
    return sides


def alternate(sides, command, repeats, results, caps=None):
    """``repeats`` rounds of ``command`` on every side, each round in another order.

    ``caps``: ``{side: rounds}`` for sides that take part in the first rounds only.
    """
    names = list(sides)
    for i in range(repeats):
        order = names[i % len(names):] + names[:i % len(names)]
        for name in (order if i % 2 == 0 else order[::-1]):
            if caps and i >= caps.get(name, repeats):
                continue
            value = sides[name].ask(command)
            results.setdefault(name, []).append(value)


def median(values):
    numbers = [v for v in values if isinstance(v, (int, float))]
    if not numbers:
        errors = [v["error"] for v in values if isinstance(v, dict) and "error" in v]
        return None, errors[0] if errors else "-"
    return statistics.median(numbers), None


def table(title, rows, columns):
    """rows: {row label: {system: [values]}}; prints examples/s and ratios to the others."""
    print(f"\n{title}", flush=True)
    head = f"{'':34}" + "".join(f"{c:>20}" for c in columns)
    print(head)
    print("-" * len(head))
    for label, by_system in rows.items():
        cells = []
        for name in columns:
            value, error = median(by_system.get(name, []))
            cells.append(f"{value:>20,.0f}" if value is not None else f"{'n/a':>20}")
        print(f"{label:34}" + "".join(cells))
        mine, _ = median(by_system.get("pyhooks", []))
        if mine:
            ratios = []
            for name in columns:
                value, _ = median(by_system.get(name, []))
                ratios.append(f"{mine / value:>19.2f}x" if value else f"{'':>20}")
            print(f"{'  pyhooks / system':34}" + "".join(ratios))
    for label, by_system in rows.items():
        for name in columns:
            _, error = median(by_system.get(name, []))
            if error and error != "-":
                print(f"  ({label}, {name}: {error})")
    sys.stdout.flush()


def sweep(repeats):
    """Examples/s against batch size on (a), into bench/batch_size.csv (and a table)."""
    sides = start_sides([name for name in SYSTEMS if name != "pyhooks, TF pool"])
    names = list(sides)
    rates = {}
    try:
        for batch in SWEEP:
            steps = max(20, 50_000 // batch)
            command = {"op": "train", "workload": "a", "batch": batch, "buffer": None,
                       "warmup": max(5, steps // 10), "steps": steps}
            alternate(sides, command, 1,
                      rates.setdefault(batch, {}))
    finally:
        for side in sides.values():
            side.close()
    path = os.path.join(HERE, "batch_size.csv")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write("system,batch_size,examples_per_s\n")
        for batch, by_system in rates.items():
            for name, values in by_system.items():
                value, _ = median(values)
                if value is not None:
                    stream.write(f"\"{name}\",{batch},{value:.0f}\n")
    table("(a) examples/s against batch size (buffer all rows; ~50,000 examples per "
          "measurement)", {f"batch {b}": v for b, v in rates.items()}, names)
    print(f"(written to {os.path.relpath(path, ROOT)}; plot: Rscript bench/plot_batch_size.R)")


def memory(systems):
    """Peak RSS of (b), each system and model in a fresh process; a table."""
    from bench_estimators import _bench_python, ensure_bench_venv

    print("\nPeak memory of (b): RSS growth of a fresh process over its RSS after importing "
          "TensorFlow, the data (numpy arrays, made before the peak is reset) included; one "
          f"train() call of {WARMUP + STEPS} steps", flush=True)
    print(f"{'':22}" + "".join(f"{w:>28}" for w in ("b_lin", "b_dnn")))
    for name in systems:
        python = sys.executable
        if name.startswith("tf.estimator"):
            if ensure_bench_venv() is not None:
                continue
            python = _bench_python()
        cells = []
        for workload in ("b_lin", "b_dnn"):
            side = Side(name, python, bare=True)
            try:
                value = side.ask({"op": "rss", "workload": workload})
            finally:
                side.close()
            if "error" in value:
                cells.append(f"{'error':>28}")
                print(f"  ({name}, {workload}: {value['error']})")
                continue
            cells.append(f"{value['peak'] / 2**20:>12,.0f} MiB = {value['peak'] / value['data']:.2f}x")
        print(f"{name:22}" + "".join(f"{c:>28}" for c in cells), flush=True)
    print(f"(data: {sum(v.nbytes for v in data_b().values()) / 2**20:,.0f} MiB; the target for "
          "pyhooks: <= 2x)")


def main(argv):
    if "--serve" in argv:
        serve(argv[argv.index("--serve") + 1])
        return 0
    repeats = 3 if "--quick" in argv else 5
    if "--steps" in argv:  # warm-up and measured steps, e.g. --steps 10,40 (for the sides too)
        os.environ["BENCH_STEPS"] = argv[argv.index("--steps") + 1]
        global WARMUP, STEPS
        WARMUP, STEPS = (int(n) for n in os.environ["BENCH_STEPS"].split(","))
    only = argv[argv.index("--only") + 1].split(",") if "--only" in argv else None
    started = time.perf_counter()
    sides = start_sides() if not only or set(only) - {"rss"} else {}
    columns = [name for name in SYSTEMS if name in sides]
    workloads = [("a", "(a) DNN 100k x 20, buffer all rows", 256, None),
                 ("a", "(a) DNN 100k x 20, buffer 1,000", 256, 1000),
                 ("a_custom", "(a) custom estimator(model_fn)", 256, None),
                 ("a_wide_deep", "(a) wide & deep", 256, None),
                 ("b_lin", "(b) linear, 1M rows, categorical", 256, None),
                 ("b_dnn", "(b) DNN + embedding, 1M rows", 256, None)]
    rows = {}
    try:
        for workload, label, batch, buffer in workloads:
            if only and workload not in only:
                continue
            command = {"op": "train", "workload": workload, "batch": batch, "buffer": buffer}
            # first call: graphs, data, compilation (not for the slow side: it builds all
            # of these again at every call, before the steps whose time is measured)
            alternate(sides, command, 1, {}, {SLOW: 0})
            times = repeats if data_key(workload) == "a" else max(2, repeats - 2)
            caps = {SLOW: min(times, SLOW_ROUNDS)}
            alternate(sides, command, times, rows.setdefault(label, {}), caps)
            table(f"{label}: training examples/s (batch 256; medians of {times} alternating "
                  f"rounds of {STEPS} steps after {WARMUP}, {SLOW}: {caps[SLOW]})",
                  {label: rows[label]}, columns)
        if not only or "eval" in only:
            calls = {}
            caps = {SLOW: min(repeats, SLOW_ROUNDS)}
            for op in ("evaluate", "predict"):
                alternate(sides, {"op": op}, 1, {}, {SLOW: 0})
                alternate(sides, {"op": op}, repeats,
                          calls.setdefault(f"(a) {op}() over 100k rows", {}), caps)
            table(f"evaluate() / predict() of (a)'s model, examples/s per call (batch 1,024; "
                  f"medians of {repeats}, {SLOW}: {caps[SLOW]}; it rebuilds its graph in each "
                  "call)", calls, columns)
    finally:
        for side in sides.values():
            side.close()
        spent = ", ".join(f"{side.name} {side.seconds:.0f} s" for side in sides.values())
        print(f"\n(time per system: {spent})")
    if "--sweep" in argv:
        sweep(repeats)
    if not only or "rss" in only:
        memory(RSS_SYSTEMS)
    print(f"\n(run time {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
