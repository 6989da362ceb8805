"""The estimator: train / evaluate / predict with hooks, fast when called again and again.

Design (R users call ``train()`` many times on one model):

* One graph per estimator and mode (train, eval, predict), built on first use
  inside a private ``tf.Graph()`` and kept, with one ``tf.compat.v1.Session``
  each. Variables live in these sessions between calls; checkpoints in
  ``model_dir`` are written at the end of every ``train()`` and read when a
  session starts or when ``model_dir`` holds a newer checkpoint than the one
  the session last saw (another estimator object trained it, or ``evaluate()``
  needs what ``train()`` saved).
* The input pipeline is built once per graph: a re-initializable
  ``tf.data`` iterator over placeholders (the raw columns the feature columns
  need, the labels, the weights, batch size, epochs, shuffle buffer, seed). The
  columns are held once, as fed (strings as codes into their distinct values).
  On real data it never handles a value on its own: row numbers (in input order,
  a new permutation each epoch, or through a bounded shuffle buffer) gather
  ~16 MiB of rows from every column at once, which are cut into batches,
  prefetched and autotuned. Small data
  (``_SMALL_VALUES``) is sliced row by row with none of these, whose set-up
  would cost more per call than the data (see ``_batches``). Each call runs
  the iterator's initializer with the ``input_fn``'s arrays
  (converted for this estimator once per ``input_fn`` object, then cached), so
  every call starts from the beginning of the data, as ``tf.estimator`` does.
* :class:`pyhooks.MonitoredSession` gets a session creator whose
  ``create_session()`` hands out the kept session behind a wrapper whose
  ``close()`` does nothing. The graph is finalized after it is built; before
  each call's hooks run ``begin()`` it is reopened (``_unsafe_unfinalize``)
  so that hooks may add ops, and the creator finalizes it again before the
  first step, so a stray op created inside the loop is still an error.
* ``MonitoredSession`` turns a repeated fetch list into a callable of the
  session; the wrapper's ``make_callable`` makes it run in the caller's thread
  (``_RUN_INLINE``). Measured side by side with TensorFlow's inter-op pool
  (bench/README.md), this halves the cost of mtcars' tiny steps and was 1.4 to
  1.8 times as fast on 100,000 and 1,000,000 rows in two of three runs, on par
  with a bounded shuffle buffer; the step's matrix kernels still use the
  intra-op pool, and the input pipeline its own threads.

Conventions for hooks (see DEVELOPING.md): a global step whose value fetched in
a step is the value *before* that step's increment (the increment waits for
the variable's read op, which is also the ``global_step_read`` tensor); the
per-example loss in the ``losses`` collection; the training loss (its sum over
the batch) in ``pyhooks_training_loss``.
"""

from __future__ import annotations

import os
import re
import tempfile
import weakref
from typing import NamedTuple

import numpy as np

from pyhooks.estimators._quiet import import_tensorflow, native_stderr_filtered, quiet
from pyhooks.estimators.feature_columns import FLOAT, INT, STR, STR_OR_INT
from pyhooks.estimators.inputs import InputFn
from pyhooks.estimators.models import make_optimizer
from pyhooks.hook import RunInfo, SessionRunHook, check_hooks
from pyhooks.hooks import _model_dir
from pyhooks.timer import check_positive

__all__ = ["Estimator", "TRAINING_LOSS_COLLECTION"]

TRAIN, EVAL, PREDICT = "train", "eval", "predict"
TRAINING_LOSS_COLLECTION = "pyhooks_training_loss"
_LABEL, _WEIGHT = "__label__", "__weight__"
_CALLABLE_CACHE = 64
# A step's ops run in the calling thread, not TensorFlow's inter-op pool (see the
# module docstring; bench/bench_estimators_data.py measures both).
_RUN_INLINE = True
_SMALL_VALUES = 4096  # rows x columns of data read by the small-data datasets
_GATHER_BYTES = 16 * 2**20  # rows gathered from the columns at once, then cut into batches
_ALIGN = 64  # bytes: a fed numpy array aligned so becomes a tensor without a copy
_TSTRING_BYTES = 32  # what TensorFlow holds per string of a batch (a short one)
_SEEDS = np.random.default_rng()  # shuffling seeds; the user's global numpy RNG is left alone


# --------------------------------------------------------------------------- sessions
_KEPT_SESSION_TYPE = None


def _kept_session_type():
    """``_KeptSession``, a ``SessionInterface`` (so that ``Saver.save`` & co. accept it).

    Defined on first use because its base class comes from TensorFlow.
    """
    global _KEPT_SESSION_TYPE
    if _KEPT_SESSION_TYPE is not None:
        return _KEPT_SESSION_TYPE
    from tensorflow.python.client.session import SessionInterface

    class _KeptSession(SessionInterface):
        """The estimator's long-lived session as ``MonitoredSession`` sees it.

        ``close()`` keeps the session open. ``make_callable()`` (which
        ``MonitoredSession`` uses for a fetch list it sees again) returns a
        TensorFlow callable (``Session._make_callable_from_options``) that runs
        the step in the calling thread (``RunOptions.inter_op_thread_pool = -1``,
        ``_RUN_INLINE``): no thread hand-off between the step's many small ops.
        Everything else is the wrapped ``tf.compat.v1.Session``'s.
        """

        __slots__ = ("_sess", "_cache", "_graph", "_inline")

        def __init__(self, state):
            self._sess = state.session
            self._cache = state.callables
            self._graph = state.graph
            self._inline = _RUN_INLINE

        @property
        def graph(self):
            return self._graph

        @property
        def sess_str(self):
            return self._sess.sess_str

        def partial_run_setup(self, *args, **kwargs):
            return self._sess.partial_run_setup(*args, **kwargs)

        def partial_run(self, *args, **kwargs):
            return self._sess.partial_run(*args, **kwargs)

        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                  run_metadata=run_metadata)

        pyhooks_keeps_callables = True  # make_callable of a list seen before costs nothing

        def make_callable(self, fetches, feed_list=None, accept_options=False):
            """What ``MonitoredSession`` caches for a repeated fetch list: a TensorFlow callable."""
            if feed_list is not None or accept_options:
                return self._sess.make_callable(fetches, feed_list, accept_options)
            if not isinstance(fetches, (list, tuple)):  # one element: its value
                run_list = self.make_callable([fetches])
                return lambda: run_list()[0]
            # Kept across train() calls: the default hooks fetch the same tensors.
            key = (self._inline, *map(id, fetches))
            entry = self._cache.get(key)
            if entry is None:
                if len(self._cache) >= _CALLABLE_CACHE:
                    self._cache.clear()
                # holds the fetched objects, so that their ids stay theirs
                entry = self._cache[key] = (list(fetches),
                                            _fast_callable(self._sess, self._graph, list(fetches),
                                                           self._inline))
            return entry[1]

        def close(self):
            """Keeps the session: it belongs to the estimator."""

        def __getattr__(self, name):
            return getattr(self._sess, name)

        def __repr__(self):
            return f"<pyhooks kept session of {self._sess!r}>"

    _KEPT_SESSION_TYPE = _KeptSession
    return _KeptSession


def _fast_callable(session, graph, fetches, inline):
    """A function running ``fetches`` (flat graph elements), in the caller's thread if ``inline``.

    Falls back to ``session.make_callable`` for anything that is not a plain
    tensor or operation of the graph (nested structures, other graphs' elements).
    """
    from tensorflow.core.protobuf import config_pb2

    elements = []
    try:
        for fetch in fetches:
            if isinstance(fetch, (list, tuple, dict)):
                raise TypeError("nested")
            elements.append(graph.as_graph_element(fetch, allow_tensor=True,
                                                   allow_operation=True))
    except (TypeError, ValueError, KeyError):
        return session.make_callable(fetches)
    options = config_pb2.CallableOptions()
    if inline:
        options.run_options.inter_op_thread_pool = -1  # run in the calling thread
    slots = []
    names = {}
    for element in elements:
        if hasattr(element, "dtype"):  # a tensor
            index = names.get(element.name)
            if index is None:
                index = names[element.name] = len(names)
                options.fetch.append(element.name)
            slots.append(index)
        else:
            options.target.append(element.name)
            slots.append(None)
    run = session._make_callable_from_options(options)  # noqa: SLF001

    if all(slot == i for i, slot in enumerate(slots)):
        return run
    if all(slot is None for slot in slots):
        def run_targets():
            run()
            return [None] * len(slots)
        return run_targets

    def run_and_place():
        values = run()
        return [None if slot is None else values[slot] for slot in slots]
    return run_and_place


class _KeptSessionCreator:
    """``create_session()`` finalizes the graph and returns the kept session."""

    def __init__(self, state):
        self._state = state
        # under a strategy a lost peer is not cured by a new session: its error propagates
        self.pyhooks_can_recover = state.can_recover

    def create_session(self):
        self._state.graph.finalize()
        return _kept_session_type()(self._state)


class _StopAfterNRuns(SessionRunHook):
    """Requests a stop after ``n`` runs (evaluation ``steps``)."""

    def __init__(self, n):
        self._n = n
        self._done = 0

    def after_create_session(self, session, coord):
        if self._n <= 0:
            coord.request_stop()

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._done >= self._n:
            run_context.request_stop()


# --------------------------------------------------------------------------- graph building
class _Builder:
    """What feature columns see while the graph is built: raw tensors, caches."""

    def __init__(self, tf, raw):
        self.tf = tf
        self._raw = raw
        self._ids = {}
        self._dense = {}

    def raw(self, key, kind):
        return self._raw[(key, kind)]

    def raw_as_string(self, key):
        return self._raw[(key, STR_OR_INT)]

    def ids(self, column):
        found = self._ids.get(id(column))
        if found is None:
            found = self._ids[id(column)] = column.ids(self)
        return found

    def dense(self, column):
        found = self._dense.get(id(column))
        if found is None:
            found = self._dense[id(column)] = column.dense(self)
        return found

    transform = dense

    def variable(self, name, shape, initializer, trainable=True):
        return self.tf.compat.v1.get_variable(name, shape, initializer=initializer,
                                              trainable=trainable)


def _tf_dtype(tf, kind):
    return {FLOAT: tf.float32, INT: tf.int64, STR: tf.string, STR_OR_INT: tf.string}[kind]


def _feature_name(key, kind):
    return f"{key}:{kind}"


class _GraphState:
    """One mode's graph, session, input pipeline and the tensors the loop runs."""

    def __init__(self, estimator, mode, signature=None, feeds=None):
        tf = import_tensorflow()
        self.mode = mode
        self.model_dir = estimator._checkpoint_dir  # under a strategy: the chief's on every worker
        replicated = estimator._replicated if mode == TRAIN else None
        self.can_recover = replicated is None
        self.callables = {}
        self.synced_checkpoint = None
        self.synced_stamp = None
        self.spec_hooks = []  # a model_fn's estimator_spec() hooks for this mode
        v1 = tf.compat.v1
        self.graph = graph = tf.Graph()
        with graph.as_default():
            if estimator._seed is not None:
                v1.set_random_seed(estimator._seed)
            if replicated is None:
                self.global_step = v1.train.get_or_create_global_step()
            else:  # mirrored, as a model_fn's minimize(global_step=) needs under a strategy
                with replicated.strategy.scope():
                    self.global_step = v1.train.get_or_create_global_step()
            # What session.run(global_step) fetches; hooks' global_step_read is this too.
            self.global_step_read = self.global_step._graph_element
            from tensorflow.python.training import training_util

            graph.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, self.global_step_read)

            # -- input pipeline: one re-initializable iterator for every input_fn
            with tf.name_scope("input"):
                self.placeholders = {}
                for name, dtype, shape in signature or ():  # a model_fn's: what the input holds
                    self.placeholders[name] = v1.placeholder(
                        tf.as_dtype(dtype), [None, *shape], name=re.sub(r"\W", "_", name))
                self.levels = {}  # string columns: codes into their distinct values
                for key, kind in estimator._raw_inputs if signature is None else ():
                    name = _feature_name(key, kind)
                    if kind in (STR, STR_OR_INT):
                        self.placeholders[name] = v1.placeholder(
                            tf.int32, [None], name=re.sub(r"\W", "_", key) + "_codes")
                        self.levels[name] = v1.placeholder(
                            tf.string, [None], name=re.sub(r"\W", "_", key) + "_levels")
                        continue
                    shape = [None, *feeds[name].shape[1:]] if feeds and name in feeds else [None]
                    self.placeholders[name] = v1.placeholder(
                        _tf_dtype(tf, kind), shape, name=re.sub(r"\W", "_", key))
                if mode != PREDICT and signature is None:
                    self.placeholders[_LABEL] = v1.placeholder(
                        estimator._head.label_dtype(tf), estimator._head.label_shape(),
                        name="labels")
                    if estimator._weight_column is not None:
                        self.placeholders[_WEIGHT] = v1.placeholder(tf.float32, [None],
                                                                    name="weights")
                self.batch_size = v1.placeholder(tf.int64, [], name="batch_size")
                self.chunk = v1.placeholder(tf.int64, [], name="gather_rows")
                self.epochs = v1.placeholder(tf.int64, [], name="num_epochs")
                self.buffer = v1.placeholder(tf.int64, [], name="shuffle_buffer")
                self.seed = v1.placeholder_with_default(tf.constant(0, tf.int64), [], name="seed")
                datasets = _batches(tf, self.placeholders, self.levels, self.batch_size,
                                    self.chunk, self.epochs, self.buffer, self.seed)
                iterator = v1.data.Iterator.from_structure(
                    v1.data.get_output_types(datasets["plain"]),
                    v1.data.get_output_shapes(datasets["plain"]))
                self.initializers = {name: iterator.make_initializer(dataset)
                                     for name, dataset in datasets.items()}
                batch = iterator.get_next()

            if replicated is not None:  # once per replica (pyhooks/estimators/distributed.py)
                replicated.build(self, tf, lambda replica, part: (
                    _GraphState._build_canned(replica, tf, estimator, mode, part)
                    if signature is None else estimator._build_model_fn(replica, tf, mode, part)),
                    batch, custom=signature is not None)
            elif signature is None:
                self._build_canned(tf, estimator, mode, batch)
            else:
                estimator._build_model_fn(self, tf, mode, batch)

            self.summary_op = None
            if mode == TRAIN:  # for TensorBoard: the loss and the model's own summaries
                v1.summary.scalar("loss", self.training_loss)
                self.summary_op = v1.summary.merge_all()
                graph.add_to_collection(v1.GraphKeys.SUMMARY_OP, self.summary_op)
            variables = v1.global_variables() if mode == TRAIN else self.model_variables
            self.saver = v1.train.Saver(var_list=variables,
                                        max_to_keep=estimator.config.keep_checkpoint_max,
                                        allow_empty=True, save_relative_paths=True)
            v1.add_to_collection(v1.GraphKeys.SAVERS, self.saver)
            self.init_op = tf.group(v1.global_variables_initializer(),
                                    v1.local_variables_initializer(), v1.tables_initializer())
        graph.finalize()
        target, config = ("", estimator._session_config) if replicated is None else \
            replicated.session_args(estimator._session_config)
        self.session = v1.Session(target, graph=graph, config=config)
        self.session.run(self.init_op)
        self.sync()

    def _build_canned(self, tf, estimator, mode, batch):
        """The canned model and head on ``batch``: predictions, or loss and train/metric ops."""
        v1 = tf.compat.v1
        raw = {(key, kind): batch[_feature_name(key, kind)]
               for key, kind in estimator._raw_inputs}
        builder = _Builder(tf, raw)
        head = estimator._head
        logits = estimator._model.logits(tf, builder, head.logits_dimension, mode == TRAIN)
        self.model_variables = v1.global_variables()

        if mode == PREDICT:
            self.predictions = head.predictions(tf, logits)
        else:
            labels = batch[_LABEL]
            weights = batch.get(_WEIGHT)
            unweighted = head.unweighted_loss(tf, labels, logits)
            per_example = unweighted if weights is None else unweighted * weights
            per_example = tf.identity(per_example, name="per_example_loss")
            training_loss = tf.reduce_sum(per_example, name="training_loss")
            v1.add_to_collection(v1.GraphKeys.LOSSES, per_example)
            v1.add_to_collection(TRAINING_LOSS_COLLECTION, training_loss)
            self.per_example_loss = per_example
            self.training_loss = training_loss
            if mode == TRAIN:
                model = estimator._model
                if hasattr(model, "minimize"):  # several optimizers (wide & deep)
                    update = model.minimize(tf, training_loss)
                else:
                    optimizer = make_optimizer(tf, estimator._optimizer,
                                               model.default_learning_rate)
                    update = optimizer.minimize(training_loss,
                                                var_list=v1.trainable_variables())
                if getattr(self, "replicated", False):  # the step is counted once, after all
                    self.train_op = update
                    return
                with tf.control_dependencies([update, self.global_step_read]):
                    self.train_op = self.global_step.assign_add(1, read_value=False)
                v1.add_to_collection(v1.GraphKeys.TRAIN_OP, self.train_op)
                self.fetches = self.train_op
            else:
                with v1.variable_scope("metrics"):
                    metrics = head.metrics(tf, labels, logits, unweighted, weights,
                                           training_loss)
                self.metric_values = {name: value for name, (value, _) in metrics.items()}
                self.metric_update = tf.group(*[u for _, u in metrics.values()])
                self.metric_reset = v1.variables_initializer(
                    v1.get_collection(v1.GraphKeys.METRIC_VARIABLES))
                self.fetches = self.metric_update

    def _index_stamp(self):
        try:
            info = os.stat(os.path.join(self.model_dir, "checkpoint"))
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def sync(self):
        """Restores the latest checkpoint of ``model_dir`` if this session has not seen it.

        The ``checkpoint`` index file is parsed only when its stat changed since
        this session last saved or restored.
        """
        stamp = self._index_stamp()
        if stamp is not None and stamp == self.synced_stamp:
            return
        import tensorflow as tf

        # strict: a garbage or dangling index is an error, never "no checkpoint"
        latest = _model_dir.latest_checkpoint(self.model_dir)
        if latest is None:
            if self.synced_checkpoint is not None:  # discarded after a failed call
                self.session.run(self.init_op)
                self.synced_checkpoint = None
            return
        if latest != self.synced_checkpoint:
            with self.graph.as_default(), quiet():
                try:
                    self.saver.restore(self.session, latest)
                except tf.errors.OpError as error:
                    damaged = _model_dir.checkpoint_files_error(self.model_dir, latest, error)
                    if damaged is not None:
                        raise damaged from error
                    if not isinstance(error, (tf.errors.NotFoundError,
                                              tf.errors.InvalidArgumentError)):
                        raise
                    detail = str(error).strip().splitlines()[0]
                    name = os.path.basename(latest)
                    raise ValueError(
                        f"model_dir {self.model_dir!r} holds a checkpoint ({name}) of a "
                        f"different model (other columns, sizes or optimizer): {detail}"
                    ) from error
            self.synced_checkpoint = latest
        self.synced_stamp = stamp
        if self.mode == TRAIN:  # max_to_keep counts the checkpoints of earlier processes
            _model_dir.recover_saver(self.saver, self.model_dir)

    def restore(self, checkpoint_path):
        """Restores ``checkpoint_path`` (None: keep the latest); the next call syncs again."""
        if checkpoint_path is None:
            return
        if not isinstance(checkpoint_path, (str, os.PathLike)) or not \
                os.path.exists(os.fspath(checkpoint_path) + ".index"):
            raise ValueError(f"`checkpoint_path` {checkpoint_path!r} is not a checkpoint (e.g. "
                             "latest_checkpoint()).")
        with self.graph.as_default(), quiet():
            self.saver.restore(self.session, os.fspath(checkpoint_path))
        self.synced_checkpoint = os.fspath(checkpoint_path)
        self.synced_stamp = None  # the next call restores the latest one again

    def discard(self):
        """Forgets the session's variables: the next call restores the latest checkpoint.

        After a failed ``train()`` (NaN loss, an error in a hook, Ctrl-C) the model
        is what the last checkpoint holds, as with ``tf.estimator``.
        """
        self.synced_stamp = None
        self.synced_checkpoint = "<discarded>"

    def step(self):
        return int(self.session.run(self.global_step_read))

    def start_input(self, feeds, input_fn, training, epochs=None):
        feed = {}
        for name, value in feeds.items():
            if isinstance(value, _Coded):
                feed[self.levels[name]] = value.levels
                value = value.codes
            feed[self.placeholders[name]] = value
        num_epochs = input_fn.num_epochs if epochs is None else epochs
        feed[self.batch_size] = rows = _batch_rows(feeds, input_fn, num_epochs)
        feed[self.chunk] = max(rows, _GATHER_BYTES // _row_bytes(feeds))
        feed[self.epochs] = -1 if num_epochs is None else num_epochs
        shuffle = input_fn.shuffles(training)
        small = input_fn.n * len(feeds) <= _SMALL_VALUES
        order = "small_plain" if small else "plain"
        if shuffle:
            buffer = input_fn.queue_capacity
            if small:
                order = "small_shuffled"
            elif buffer is None or buffer >= input_fn.n:
                order = "permuted"
            else:
                order = "buffered"
            # TensorFlow allocates the whole buffer at once (std::bad_alloc for 1e9); one
            # larger than the data shuffles the same way as one of the data's size
            feed[self.buffer] = input_fn.n if buffer is None else min(buffer, input_fn.n)
            # a fixed seed repeats the same order in every call; None: a new order each call
            feed[self.seed] = (input_fn.seed if input_fn.seed is not None
                               else int(_SEEDS.integers(1, 2**31 - 1)))
        self.session.run(self.initializers[order], feed)

    def save(self, step):
        import tensorflow as tf

        path = os.path.join(self.model_dir, "model.ckpt")
        with self.graph.as_default():
            try:
                self.synced_checkpoint = self.saver.save(self.session, path, global_step=step,
                                                         write_meta_graph=False)
            except (tf.errors.OpError, OSError) as error:
                found = _model_dir.disk_error(f"the checkpoint of step {step}", self.model_dir,
                                              error)
                if found is None:
                    raise
                raise found from error
        self.synced_stamp = self._index_stamp()
        return self.synced_checkpoint

    def run_loop(self, hooks, fetches, collect=None):
        """Runs ``fetches`` under ``pyhooks.MonitoredSession`` until a hook stops or input ends."""
        from pyhooks.session import MonitoredSession

        graph = self.graph
        with graph.as_default():
            with quiet():
                graph._unsafe_unfinalize()  # noqa: SLF001 - hooks' begin() may add ops
                try:
                    monitored = MonitoredSession(_KeptSessionCreator(self), hooks)
                finally:
                    graph.finalize()
            try:
                with monitored:
                    if collect is None:
                        while not monitored.should_stop():
                            monitored.run(fetches)
                    else:
                        while not monitored.should_stop():
                            collect(monitored.run(fetches))
            finally:  # closing un-finalized the graph it found open (as TensorFlow's does)
                graph.finalize()

    def close(self):
        self.session.close()


def _memory_bytes():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**40


def _batch_rows(feeds, input_fn, num_epochs):
    """The batch size to feed: at most the rows there are; a batch that cannot fit refused.

    A batch spans epochs (``repeat`` comes before ``batch``), so with a finite
    number of epochs no batch is larger than all their rows: feeding that
    instead of a larger ``batch_size`` changes nothing.
    """
    rows = input_fn.batch_size
    if num_epochs is not None:
        rows = min(rows, input_fn.n * num_epochs)
    need, have = rows * _row_bytes(feeds), _memory_bytes()
    if need > have // 2:
        raise ValueError(
            f"`batch_size` = {input_fn.batch_size}: batches of {rows} rows of this input need "
            f"about {need / 2**30:.3g} GB each, more than half of this machine's "
            f"{have / 2**30:.3g} GB of memory. Use a smaller batch_size.")
    return rows


def _row_bytes(feeds):
    """What a row of a batch takes in memory (a string: its ``tstring``)."""
    row_bytes = sum(_TSTRING_BYTES if isinstance(value, _Coded) else
                    value.nbytes // max(len(value), 1) for value in feeds.values())
    return max(row_bytes, 1)


def _raised_in_end(error):
    """Whether ``error`` came from a hook's ``end()`` (the runner's note says so)."""
    return any(note.startswith("pyhooks: raised in ") and note.endswith(".end()")
               for note in getattr(error, "__notes__", ()))


class _Coded(NamedTuple):
    """A string column as ``codes`` (int32) into its distinct values ``levels``."""

    codes: np.ndarray
    levels: np.ndarray


def _aligned_empty(shape, dtype):
    """An uninitialized array at a 64-byte aligned address (see ``_aligned``)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + _ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start:start + size].view(dtype).reshape(shape)


def _aligned(values, dtype=None):
    """A private copy of ``values`` (as ``dtype``) at a 64-byte aligned address.

    TensorFlow makes a fed numpy array aligned so the memory of its tensor, where
    it copies any other: each fed column is then held once, by this array.
    """
    out = _aligned_empty(values.shape, dtype or values.dtype)
    out[...] = values
    return out


def _coded(values, chunk=1 << 16):
    """``(codes, levels)`` with ``levels[codes] == values``, each distinct value once, as text.

    One ``argsort``, then the sorted values are read a chunk at a time, so that
    besides the codes (4 bytes a row) and the order (8) no more than a chunk of
    the values is copied: for 1,000,000 strings ~0.4 s. Numbers (a hashed column
    of whole numbers) get their decimal text in ``levels``.
    """
    order = np.argsort(values, kind="stable")
    codes = _aligned_empty(len(values), np.int32)
    levels, last, count = [values[:0]], None, -1
    for start in range(0, len(values), chunk):
        rows = order[start:start + chunk]
        ordered = values[rows]
        new = np.empty(len(rows), dtype=bool)
        new[0] = last is None or ordered[0] != last
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        codes[rows] = count + np.cumsum(new)
        count += int(np.count_nonzero(new))
        levels.append(ordered[new])
        last = ordered[-1]
    levels = np.concatenate(levels)
    return codes, (levels if levels.dtype.kind == "U" else levels.astype(str))


def _batches(tf, columns, levels, batch_size, chunk, epochs, buffer, seed):
    """The datasets of batches (dicts of whole tensors) an input can be read with.

    Batches run on across epochs (only the last batch of the last epoch may be
    smaller) and every epoch holds every row once. The columns are held once,
    as fed (a string column as int32 codes into ``levels``, its distinct
    values). In the datasets for real data, rows are never handled one by one:
    ``chunk`` row numbers at a time gather rows from every column (and a string
    column's strings from its levels), which are cut into batches (``rebatch``)
    and prefetched, autotuned; in input order, the columns themselves are cut.
    Chunks of ~16 MiB (``_GATHER_BYTES``) keep the copies small; each chunk has
    a fixed cost, so that a gather per batch or chunks of 16,384 rows took up to
    twice the time per step on (a) of bench/bench_estimators_data.py. The row
    numbers:

    * ``plain``: in input order;
    * ``permuted``: each epoch a new random permutation of all rows (seeded by
      ``seed`` and the epoch, so a fixed seed repeats the order): what a
      shuffle buffer holding all rows gives;
    * ``buffered``: through a shuffle buffer of ``buffer`` rows, as
      ``Dataset.shuffle`` does.

    ``small_plain`` and ``small_shuffled`` (shuffle buffer ``buffer``) are for
    data of at most ``_SMALL_VALUES`` values: rows are sliced one by one, with no
    function to instantiate, no prefetch thread and no graph rewrites, which
    would cost more at each call's initialization (~20-50 ms) than such data
    costs to slice (see bench/README.md).
    """
    rows = tf.shape(next(iter(columns.values())), out_type=tf.int64)[0]

    def decoded(batch):  # a string column's strings from its codes
        return {name: tf.gather(levels[name], values) if name in levels else values
                for name, values in batch.items()}

    def gather(order):
        return decoded({name: tf.gather(column, order) for name, column in columns.items()})

    def permutation(epoch):
        return tf.random.experimental.stateless_shuffle(tf.range(rows),
                                                        seed=tf.stack([seed, epoch]))

    # epochs = -1: forever
    permuted = tf.data.Dataset.counter().take(epochs).map(permutation)
    buffered = (tf.data.Dataset.range(rows)
                .shuffle(buffer, seed=seed, reshuffle_each_iteration=True).repeat(epochs))
    # tf.data's graph rewrites would hold a second copy of the columns (a rewritten
    # graph keeps what it captured as constants): the pipeline is written as they
    # would leave it, prefetched and autotuned
    def options(autotune):  # no graph rewrites (prefetch where wanted is in the pipeline)
        chosen = tf.data.Options()
        chosen.experimental_optimization.apply_default_optimizations = False
        chosen.experimental_optimization.inject_prefetch = False
        chosen.autotune.enabled = autotune
        return chosen

    real = options(autotune=True)
    datasets = {name: order.map(gather).rebatch(batch_size)
                for name, order in (("permuted", permuted.rebatch(chunk)),
                                    ("buffered", buffered.batch(chunk)))}
    # in input order, the columns are cut as they are (a gather would only copy them)
    plain = tf.data.Dataset.from_tensors(columns).repeat(epochs).rebatch(batch_size)
    datasets["plain"] = plain.map(decoded) if levels else plain
    datasets = {name: dataset.prefetch(tf.data.AUTOTUNE).with_options(real)
                for name, dataset in datasets.items()}
    small = options(autotune=False)
    slices = tf.data.Dataset.from_tensor_slices(decoded(columns))
    datasets["small_plain"] = slices.repeat(epochs).batch(batch_size).with_options(small)
    datasets["small_shuffled"] = (slices.shuffle(buffer, seed=seed, reshuffle_each_iteration=True)
                                  .repeat(epochs).batch(batch_size).with_options(small))
    return datasets


# --------------------------------------------------------------------------- the estimator
def _steps(name, value):
    return check_positive(name, value, integer=True)


class Estimator:
    """A canned estimator (see :func:`pyhooks.linear_regressor` & co.).

    Attributes:
        model_dir: where checkpoints are kept (a temporary directory if none was given).
    """

    def __init__(self, model, head, model_dir=None, weight_column=None, optimizer="Ftrl",
                 session_config=None, seed=None, name="Estimator", config=None):
        from pyhooks.estimators.config import RunConfig, check_session_config

        if config is not None and not isinstance(config, RunConfig):
            raise TypeError(f"`config` must be made by run_config(), got {config!r}.")
        self.config = config = config or RunConfig()
        if model_dir is None:
            model_dir = config.model_dir
        if session_config is None:
            session_config = config.session_config
        check_session_config(session_config)
        if seed is None:
            seed = config.tf_random_seed
        self._model = model
        self._head = head
        self._optimizer = optimizer
        if weight_column is not None and (not isinstance(weight_column, str) or not weight_column):
            raise TypeError(f"`weight_column` must be a column name or None, got "
                            f"{weight_column!r}.")
        self._weight_column = weight_column
        if model_dir is None:
            model_dir = tempfile.mkdtemp(prefix="pyhooks_model_")
        elif not isinstance(model_dir, (str, os.PathLike)) or not os.fspath(model_dir):
            raise TypeError(f"`model_dir` must be a directory path or None, got {model_dir!r}.")
        self.model_dir = os.path.abspath(os.fspath(model_dir))
        os.makedirs(self.model_dir, exist_ok=True)
        self._session_config = session_config
        self._checkpoint_dir = self.model_dir
        self._replicated = None
        if config.train_distribute is not None:  # a non-chief worker writes in its own dir
            from pyhooks.estimators.distributed import ReplicatedTraining

            self._replicated = ReplicatedTraining(config.train_distribute)
            self.model_dir = self._replicated.own_dir(self.model_dir)
            os.makedirs(self.model_dir, exist_ok=True)
        self._seed = None if seed is None else check_positive("seed", seed, integer=True,
                                                              allow_zero=True)
        self._name = name
        raw = {}
        for column in model.columns if model is not None else ():
            for key, kind in column.raw_inputs():
                raw.setdefault((key, kind), []).append(column)
        self._raw_inputs = sorted(raw)
        self._raw_users = raw
        self._states = {}
        self._prepared = weakref.WeakKeyDictionary()
        self._training = False

    def __repr__(self):
        names = ", ".join(c.name for c in self._model.columns)
        return f"<pyhooks {self._name}: columns [{names}], model_dir={self.model_dir!r}>"

    # -- plumbing
    def _signature(self, mode, feeds):
        """What the graph of ``mode`` depends on besides the mode: nothing for canned models."""
        return None

    def _state(self, mode, feeds=None):
        signature = self._signature(mode, feeds)
        key = mode if signature is None else (mode, signature)
        state = self._states.get(key)
        if state is None:
            with quiet(), native_stderr_filtered():
                state = self._states[key] = _GraphState(self, mode, signature, feeds)
        else:
            state.sync()
        return state

    def _feeds(self, input_fn, mode):
        """The numpy arrays this estimator feeds for ``input_fn`` (checked once, then cached)."""
        if not isinstance(input_fn, InputFn):
            raise TypeError(f"`input_fn` must be made by input_fn(), got {input_fn!r} "
                            f"({type(input_fn).__name__}).")
        cache = self._prepared.get(input_fn)
        if cache is None:
            cache = self._prepared[input_fn] = {}
        labelled = mode != PREDICT
        if labelled not in cache:
            cache[labelled] = self._make_feeds(input_fn, labelled, mode)
        return cache[labelled]

    def _make_feeds(self, input_fn, labelled, mode):
        """The feeds of ``input_fn``, checked against the feature columns (see ``_feeds``)."""
        columns = input_fn.columns
        feeds = {}
        for (key, kind), users in self._raw_users.items():
            if key not in columns:
                raise ValueError(
                    f"Feature column {users[0].name!r} needs the input column {key!r}, which the "
                    f"input does not have; the input's features are: "
                    f"{', '.join(input_fn.features)}.")
            if key not in input_fn.features:
                raise ValueError(f"Feature column {users[0].name!r} needs {key!r}, which is the "
                                 f"input's response, not one of its features "
                                 f"({', '.join(input_fn.features)}).")
            values = _convert(key, columns[key], kind, users[0])
            per_example = int(np.prod(values.shape[1:]))
            for column in users:
                if column.input_dimension(key) != per_example:
                    raise ValueError(
                        f"Feature column {column.name!r} reads {column.input_dimension(key)} "
                        f"value(s) per example from input column {key!r}, which holds "
                        f"{per_example}: its `shape` must match the data"
                        + (" (give column_numeric() its `shape`)." if per_example > 1 else "."))
                column.check_data(key, values)
            if kind in (STR, STR_OR_INT):
                values = _Coded(*_coded(values))
            feeds[_feature_name(key, kind)] = values
        if labelled:
            if not input_fn.response:
                raise ValueError(f"{'train' if mode == TRAIN else 'evaluate'}() needs labels: "
                                 "give `response` to input_fn().")
            feeds[_LABEL] = _aligned(self._head.labels(input_fn))
            if self._weight_column is not None:
                name = self._weight_column
                if name not in columns:
                    raise ValueError(f"weight_column {name!r} is not a column of the input; it "
                                     f"has: {', '.join(input_fn.features)}.")
                weights = columns[name]
                if weights.dtype.kind not in "biuf":
                    raise TypeError(f"weight_column {name!r} must be numeric.")
                if (weights < 0).any():
                    raise ValueError(f"weight_column {name!r} must not be negative.")
                feeds[_WEIGHT] = _aligned(weights, np.float32)
        return feeds

    # -- public API
    def train(self, input_fn, steps=None, hooks=None, max_steps=None, saving_listeners=None,
              chief_only_hooks=None):
        """Trains the model on ``input_fn``, continuing from the last global step.

        Args:
            input_fn: an :func:`input_fn` with a ``response``.
            steps: train this many more steps (or until the input is exhausted).
            hooks: a list of :class:`pyhooks.SessionRunHook`. A ``NanTensorHook``, a
                ``HistorySaverHook`` and a ``ProgressBarHook`` are added unless
                ``hooks`` has one of that kind (a caller's ``ProgressBarHook``
                whose ``total`` is None gets the number of steps).
            max_steps: train until the global step reaches this (exclusive with ``steps``).
            saving_listeners: ``CheckpointSaverListener`` objects, called around the
                checkpoint saves of the caller's ``CheckpointSaverHook``, or of one added
                (as often as the ``run_config()`` says, every 600 s by default, and at
                the end).
            chief_only_hooks: hooks run only on the chief worker under a
                multi-worker ``train_distribute`` strategy (always without one), after
                ``hooks``.

        Returns:
            the :class:`pyhooks.hooks.History` recorded by the ``HistorySaverHook``.

        Only one ``train()`` at a time may write to ``model_dir`` (a ``flock`` on
        ``model_dir/.pyhooks-train.lock``, freed when the process ends however it
        ends). At the start, the temporary files of a save that a crash
        interrupted are removed. When a hook's ``end()`` fails, the steps done are
        kept (saved in a checkpoint) and the error is raised.

        Raises:
            ValueError: both ``steps`` and ``max_steps``, non-positive steps, or
                input that repeats forever with neither.
            pyhooks.hooks._model_dir.ModelDirLockedError: another process or loop
                trains into ``model_dir``; RuntimeError: called from a hook of this
                estimator's own ``train()``.
            pyhooks.hooks._model_dir.CheckpointError: a damaged checkpoint, or a
                garbage or dangling ``checkpoint`` index.
        """

        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None:
            steps = _steps("steps", steps)
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None:
            max_steps = _steps("max_steps", max_steps)
            if max_steps <= 0:
                raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        hooks = check_hooks(hooks)
        chief_only = check_hooks(chief_only_hooks, "chief_only_hooks")
        if self._replicated is None or self._replicated.is_chief:
            hooks += chief_only
        listeners = list(saving_listeners or [])
        for i, listener in enumerate(listeners):
            if not callable(getattr(listener, "after_save", None)):
                raise TypeError(f"`saving_listeners[{i}]` must be a CheckpointSaverListener, "
                                f"got {listener!r}.")
        feeds = self._feeds(input_fn, TRAIN)
        if steps is None and max_steps is None and input_fn.num_epochs is None:
            raise ValueError("Training would never end: the input repeats forever "
                             "(num_epochs=None) and neither `steps` nor `max_steps` is given.")

        if self._training:
            raise RuntimeError(
                f"train() of {self._name} was called again from inside its own train() (from "
                "a hook?): the two loops would interleave their steps. Train after it returns.")
        lock = _model_dir.TrainingLock(self.model_dir).acquire()
        self._training = True
        try:
            return self._train_locked(input_fn, feeds, steps, max_steps, hooks, listeners)
        finally:
            self._training = False
            lock.release()

    def _train_locked(self, input_fn, feeds, steps, max_steps, hooks, listeners):
        """``train()`` while holding ``model_dir``'s training lock."""
        from pyhooks import hooks as builtin

        _model_dir.remove_partial_saves(self.model_dir)  # of a save a crash interrupted
        state = self._state(TRAIN, feeds)
        start = state.step()
        history_hook = next((h for h in hooks if isinstance(h, builtin.HistorySaverHook)), None)
        if max_steps is not None and start >= max_steps:
            return history_hook.history if history_hook is not None else builtin.History()
        if steps is not None:
            total = steps
        elif max_steps is not None:
            total = max_steps - start
        else:
            total = input_fn.steps_per_run()
        if input_fn.num_epochs is not None:
            total = min(total, input_fn.steps_per_run())
        if self._replicated is not None:
            self._replicated.check_steps(input_fn, steps, max_steps, start)

        extra = [builtin.StopAtStepHook(num_steps=steps) if steps is not None
                 else builtin.StopAtStepHook(last_step=max_steps)] if (
            steps is not None or max_steps is not None) else []
        if not any(isinstance(h, builtin.NanTensorHook) for h in hooks):  # else the caller's
            extra.append(builtin.NanTensorHook(state.training_loss))
        if history_hook is None:
            history_hook = builtin.HistorySaverHook()
            extra.append(history_hook)
        if not any(isinstance(h, builtin.ProgressBarHook) for h in hooks):
            extra.append(builtin.ProgressBarHook())
        savers = [h for h in hooks if isinstance(h, builtin.CheckpointSaverHook)]
        frequency = self.config.checkpoint_frequency(listening=bool(listeners))
        if not savers and frequency is not None:  # run_config()'s periodic saves
            extra.append(builtin.CheckpointSaverHook(self.model_dir, saver=state.saver,
                                                     save_graph_def=False, **frequency))

        if self.config.save_summary_steps or self.config.log_step_count_steps:
            from pyhooks.estimators.tensorboard import EventWriterHook

            extra.append(EventWriterHook(self.model_dir, state.summary_op,
                                         state.global_step_read, self.config.save_summary_steps,
                                         self.config.log_step_count_steps))
        state.start_input(feeds, input_fn, training=True)
        # the hooks' RunInfo: a progress bar shows `total`, checkpoint savers call `listeners`
        run = RunInfo(steps=total, saving_listeners=listeners, mode=TRAIN)
        try:
            if self._replicated is None:
                with run:
                    state.run_loop(hooks + extra + state.spec_hooks, state.fetches)
            else:  # the workers' stop agreement last (it sees every stop request)
                with self._replicated.scope(), run:  # hooks' files: the worker's own place
                    state.run_loop(hooks + extra + state.spec_hooks +
                                   self._replicated.hooks(state), state.fetches)
        except BaseException as error:
            if not _raised_in_end(error):
                state.discard()
                raise
            # the steps ran: the session keeps them, and a checkpoint records them
            try:
                self._save_if_needed(state, hooks + extra)
            except Exception as secondary:  # noqa: BLE001 - the hook's error wins
                error.add_note(f"pyhooks: the checkpoint after it could not be saved: "
                               f"{secondary}")
                state.discard()
            raise
        self._save_if_needed(state, hooks + extra)
        return history_hook.history

    def _save_if_needed(self, state, hooks):
        from pyhooks import hooks as builtin

        if self._replicated is not None and not self._replicated.is_chief:
            return None  # checkpoints are the chief's
        step = state.step()
        if any(isinstance(h, builtin.CheckpointSaverHook) for h in hooks):
            import tensorflow as tf

            latest = tf.train.latest_checkpoint(self.model_dir)
            if latest is not None and latest.endswith(f"-{step}"):
                state.synced_checkpoint = latest  # the hook saved it at its end()
                state.synced_stamp = state._index_stamp()  # noqa: SLF001
                return latest
        with quiet():
            return state.save(step)

    def evaluate(self, input_fn, steps=None, hooks=None, name=None, checkpoint_path=None):
        """Evaluates the model (as last saved by ``train()``) on ``input_fn``.

        Args:
            input_fn: an :func:`input_fn` with a ``response``; shuffled only if its
                ``shuffle`` is True.
            steps: evaluate this many batches (default: until the input is exhausted).
            hooks: a list of hooks run in the evaluation loop.
            name: a name for this evaluation: its TensorBoard metrics go to
                ``model_dir/eval_<name>`` (``model_dir/eval`` without one).
            checkpoint_path: evaluate this checkpoint instead of the latest one.

        Returns:
            ``{metric: float}``: ``loss`` (mean over batches of the summed batch loss),
            ``average_loss`` (mean per-example loss), ``global_step`` (int), and for
            regressors ``label/mean`` and ``prediction/mean``; for binary classifiers
            also ``accuracy``, ``accuracy_baseline``, ``auc``, ``auc_precision_recall``,
            ``precision``, ``recall``, ``label/mean``, ``prediction/mean``; for
            multi-class classifiers ``accuracy``.
        """
        if steps is not None:
            steps = _steps("steps", steps)
            if steps <= 0:
                raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be a string or None, got {name!r}.")
        hooks = check_hooks(hooks)
        feeds = self._feeds(input_fn, EVAL)
        if steps is None and input_fn.num_epochs is None:
            raise ValueError("Evaluation would never end: the input repeats forever "
                             "(num_epochs=None) and `steps` is not given.")
        state = self._state(EVAL, feeds)
        state.restore(checkpoint_path)
        state.session.run(state.metric_reset)
        state.start_input(feeds, input_fn, training=False)
        extra = [] if steps is None else [_StopAfterNRuns(steps)]
        state.run_loop(hooks + extra + state.spec_hooks, state.fetches)
        values = state.session.run(state.metric_values)
        results = {key: float(value) for key, value in sorted(values.items())}
        results["global_step"] = state.step()
        from pyhooks.estimators.tensorboard import write_metrics

        write_metrics(self.model_dir, name, results, results["global_step"])
        return results

    def predict(self, input_fn, hooks=None, predict_keys=None, as_dict=False,
                checkpoint_path=None):
        """Predictions for every example of ``input_fn``, in input order (unless it shuffles).

        Args:
            input_fn: an :func:`input_fn` (its ``response`` is ignored); one pass is made
                whatever ``num_epochs`` says.
            hooks: a list of hooks run in the prediction loop.
            predict_keys: a key or list of keys to keep (default: all). Regressors:
                ``predictions``. Classifiers: ``logits``, ``logistic`` (binary only),
                ``probabilities``, ``class_ids``, ``classes``.
            checkpoint_path: predict with this checkpoint instead of the latest one.
            as_dict: False (default): a list with one ``{key: numpy array}`` per example,
                as ``tf.estimator``'s ``predict`` yields; True: one dict of arrays whose
                first dimension is the example.

        Returns:
            a list of dicts (one per example), or a dict of arrays if ``as_dict``.
        """
        hooks = check_hooks(hooks)
        feeds = self._feeds(input_fn, PREDICT)
        state = self._state(PREDICT, feeds)
        state.restore(checkpoint_path)
        keys = self._predict_keys(predict_keys, state)
        graph_keys = [k for k in keys if k in state.predictions]
        if "classes" in keys and "class_ids" not in graph_keys:
            graph_keys.append("class_ids")
        fetch = [state.predictions[k] for k in graph_keys]  # the same list objects every call
        batches = []
        state.start_input(feeds, input_fn, training=False, epochs=1)
        state.run_loop(hooks + state.spec_hooks, fetch, collect=batches.append)
        merged = {k: np.concatenate([b[i] for b in batches]) if batches
                  else np.zeros((0,), dtype=np.float32) for i, k in enumerate(graph_keys)}
        merged = self._finish_predictions(merged)
        merged = {k: merged[k] for k in keys}
        if as_dict:
            return merged
        count = len(next(iter(merged.values()))) if merged else 0
        return [{k: v[i] for k, v in merged.items()} for i in range(count)]

    def _available_keys(self, state):
        return self._head.prediction_keys

    def _finish_predictions(self, merged):
        return self._head.finish_predictions(merged)

    def _predict_keys(self, predict_keys, state=None):
        available = self._available_keys(state)
        if predict_keys is None:
            return list(available)
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        keys = list(predict_keys)
        unknown = [k for k in keys if k not in available]
        if unknown or not keys:
            raise ValueError(f"`predict_keys` {predict_keys!r}: unknown key(s) {unknown}; this "
                             f"estimator predicts {list(available)}.")
        return keys

    # -- checkpoints
    def latest_checkpoint(self):
        """The path of the newest checkpoint in ``model_dir``, or None.

        Raises:
            pyhooks.hooks._model_dir.CheckpointError: a garbage or dangling
                ``checkpoint`` index file.
        """
        import_tensorflow()
        return _model_dir.latest_checkpoint(self.model_dir)

    def get_variable_names(self):
        """Names of the variables in the latest checkpoint."""
        tf = import_tensorflow()
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"No checkpoint in {self.model_dir!r}: train the model first.")
        return sorted(name for name, _ in tf.train.list_variables(path))

    def get_variable_value(self, name):
        """The value of variable ``name`` in the latest checkpoint."""
        tf = import_tensorflow()
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(f"No checkpoint in {self.model_dir!r}: train the model first.")
        return tf.train.load_variable(path, name)

    def export_savedmodel(self, export_dir_base, checkpoint_path=None, as_text=False):
        """A SavedModel of the predictions (see :func:`pyhooks.estimators.export.export_savedmodel`)."""
        from pyhooks.estimators.export import export_savedmodel

        return export_savedmodel(self, export_dir_base, checkpoint_path, as_text)

    def close(self):
        """Closes the estimator's sessions (they are re-created on next use)."""
        for state in self._states.values():
            state.close()
        self._states.clear()


def _convert(key, values, kind, column):
    """An input column as the dtype a feature column needs; TypeError naming both."""
    dtype = values.dtype.kind
    who = f"{type(column).__name__} {column.name!r}"
    if kind == FLOAT:
        if dtype not in "biuf":
            raise TypeError(f"Column {key!r} must be numeric for {who}, got strings such as "
                            f"{values[0]!r}.")
        return _aligned(values, np.float32)
    if kind == INT:
        if dtype in "biu":
            return _aligned(values, np.int64)
        if dtype == "f" and np.all(np.mod(values, 1) == 0):
            return _aligned(values, np.int64)
        example = values[0] if dtype != "f" else values[np.mod(values, 1) != 0][0]
        raise TypeError(f"Column {key!r} must hold whole numbers for {who}, got {example!r}.")
    if kind == STR:
        if dtype != "U":
            raise TypeError(f"Column {key!r} must hold strings for {who} (its vocabulary is "
                            f"strings), got {values.dtype} values such as {values[0]!r}.")
        return values
    # STR_OR_INT: hashed as strings; whole numbers as their decimal text (made by _coded)
    if dtype == "b" or (dtype == "f" and np.all(np.mod(values, 1) == 0)):
        return values.astype(np.int64)
    return values
