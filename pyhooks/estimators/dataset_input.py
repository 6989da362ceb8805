"""tf.estimator's own kind of ``input_fn`` for a ``model_fn``: a function returning a ``tf.data.Dataset``.

TensorFlow's estimator tutorials feed a ``model_fn`` through a function such as::

    def train_input_fn(features, labels, batch_size):
        dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
        return dataset.shuffle(1000).repeat().batch(batch_size)

    classifier.train(input_fn=lambda: train_input_fn(x, y, 100), steps=1000)

A custom estimator (:func:`pyhooks.estimators.estimator`, ``tf.estimator.Estimator`` of
:mod:`pyhooks.estimators.tf1`) takes such a function in ``train()``, ``evaluate()``,
``predict()`` and ``train_and_evaluate()``'s specs, as ``tf.estimator`` did:

* it is called once per call, inside that call's own graph (built afresh, the model
  restored from the latest checkpoint), with whichever of ``mode``, ``params`` and
  ``config`` it names as arguments;
* its dataset yields batches of ``(features, labels)`` or of ``features`` alone, where
  ``features`` is a dict ``{name: tensor}`` and ``labels`` a tensor, a dict of
  tensors or absent (the ``model_fn`` then gets ``labels=None``); each tensor's
  first dimension is the batch; ``predict()`` reads the features only;
* a dataset that repeats forever needs ``steps`` (``train()``, ``evaluate()``) and
  is refused by ``predict()``, which makes one pass; a dataset that ends stops
  ``train()`` there, as the input running out stops any input. What TensorFlow
  cannot tell (``filter()`` after ``repeat()``) is read until it ends, as
  ``tf.estimator`` read it.

The data contract (:mod:`pyhooks.estimators.schema`) holds for it as for arrays:
the first ``train()`` records each feature's and label's name, kind, dtype and
per-example shape from the dataset's element spec (a labels tensor is the
response ``"y"``, as ``numpy_input_fn()``'s ``y`` is; a dict of labels, its keys), and every later call's dataset
is checked against that record before any step runs. A missing feature, a
feature of another kind (text where numbers were recorded, a fraction type where
integers were) or of another per-example shape is an error naming it; integers
where floats were recorded, and floats of another width, are cast to the
recorded dtype. Features the model was not trained on are passed to the
``model_fn`` as they are, as ``tf.estimator`` passed them.

Not taken: a function returning tensors (TensorFlow 1's queues: give the data to
``numpy_input_fn()``), sparse or ragged features, and ``train_distribute``.
"""

from __future__ import annotations

import inspect

from pyhooks.estimators.inputs import InputFn
from pyhooks.estimators.modes import LABEL, ModeKeys, label_key
from pyhooks.estimators.numpy_input import label_name
from pyhooks.estimators.schema import KIND_WORDS, ColumnSchema, Schema

__all__ = ["DatasetInput", "DatasetPlan", "DatasetPipeline", "as_input"]

_CALL_ARGS = ("mode", "params", "config")


def as_input(input_fn):
    """``input_fn`` as a call reads it: a plain function as a :class:`DatasetInput`."""
    if callable(input_fn) and not isinstance(input_fn, InputFn):
        return DatasetInput(input_fn)
    return input_fn


def _kind(dtype):
    if dtype.is_floating:
        return "numeric"
    if dtype.is_integer:
        return "integer"
    if dtype.is_bool:
        return "boolean"
    if dtype.name == "string":
        return "string"
    return None


class DatasetInput(InputFn):
    """A call's ``input_fn`` that returns a ``tf.data.Dataset`` (see the module docstring).

    :meth:`build` calls the function in the call's new graph; then ``features``,
    ``response`` and ``num_epochs`` (1 for a dataset that ends, None for one that
    repeats forever) describe what it yields.
    """

    repeats_forever = "its dataset's repeat() has no count"

    def __init__(self, fn):  # noqa: D107 - InputFn's columns do not exist here
        self.fn = fn
        self.features, self.response = [], []
        self.n = None  # rows: not counted in advance
        self.num_epochs = 1
        self.graph = self.dataset = None
        self.batches = None  # the dataset's batches when known, else None

    def __repr__(self):
        return f"<input_fn: {getattr(self.fn, '__name__', self.fn)!r} (a tf.data input_fn)>"

    def shuffles(self, training):
        return False  # the dataset orders its rows itself

    def steps_per_run(self):
        return self.batches

    def build(self, tf, mode, seed, params, config):
        """Calls the function in a new graph (seeded with ``seed``): the graph the call's
        model is then built in."""
        v1 = tf.compat.v1
        accepted = _accepted(self.fn)
        given = {"mode": mode, "params": params, "config": config}
        kwargs = {name: given[name] for name in _CALL_ARGS if name in accepted}
        self.graph = tf.Graph()
        with self.graph.as_default():
            if seed is not None:
                v1.set_random_seed(seed)
            with tf.name_scope("input"):
                dataset = self.fn(**kwargs)
            if not isinstance(dataset, tf.data.Dataset):
                raise TypeError(
                    f"`input_fn` {self!r} returned {type(dataset).__name__}; a function "
                    "given as input_fn must return a tf.data.Dataset of (features, labels) "
                    "or of features (TensorFlow 1's tensors from queues are not taken: give "
                    "the data to numpy_input_fn()).")
            with v1.Session(graph=self.graph) as session:  # before a map, which in
                cardinality = int(session.run(dataset.cardinality()))  # v1 hides it
            spec = dataset.element_spec
            if mode == ModeKeys.PREDICT and isinstance(spec, tuple) and len(spec) == 2:
                dataset = dataset.map(lambda features, labels: features)  # as tf.estimator read
                spec = dataset.element_spec
        self.dataset = dataset
        self._read_spec(tf, spec)
        self.num_epochs = None if cardinality == tf.data.INFINITE_CARDINALITY else 1
        self.batches = cardinality if cardinality >= 0 else None
        return self

    def _read_spec(self, tf, spec):
        if isinstance(spec, tuple) and len(spec) == 2:
            features, labels = spec
        elif isinstance(spec, (tuple, list)):
            raise TypeError(f"`input_fn` {self!r}: its dataset yields {len(spec)} items; it "
                            "must yield (features, labels) or features.")
        else:
            features, labels = spec, None
        if not isinstance(features, dict) or not features:
            raise TypeError(f"`input_fn` {self!r}: its dataset's features must be a dict "
                            f"{{name: tensor}}, got {features!r}.")
        self.feature_specs = self._specs("feature", features)
        if labels is None:
            self.label_specs = {}
        elif isinstance(labels, dict):
            self.label_specs = self._specs("label", labels)
        else:
            self.label_specs = self._specs("label", {label_name(features): labels})
        self.features, self.response = list(self.feature_specs), list(self.label_specs)

    def _specs(self, what, specs):
        found = {}
        for name, spec in specs.items():
            kind = _kind(spec.dtype) if type(spec).__name__ == "TensorSpec" else None
            if kind is None or spec.shape.rank == 0:
                problem = ("a scalar: batch the dataset (dataset.batch(batch_size))"
                           if kind is not None else f"a {type(spec).__name__} of "
                           f"{spec.dtype.name}; only dense tensors of numbers, bools or "
                           "strings are taken")
                raise TypeError(f"`input_fn` {self!r}: {what} {name!r} is {problem}.")
            found[str(name)] = spec
        return found

    def schema(self):
        """The data contract of what the dataset yields (recorded at the first train())."""
        def column(name, spec):
            kind = _kind(spec.dtype)
            dtype = "str" if kind == "string" else spec.dtype.name
            return ColumnSchema(name, kind, dtype, tuple(spec.shape[1:].as_list()))

        return Schema([column(n, s) for n, s in self.feature_specs.items()],
                      [column(n, s) for n, s in self.label_specs.items()])

    def plan(self, schema, labelled):
        """The :class:`DatasetPlan` of this input under ``schema`` (None: nothing recorded),
        after checking the dataset against it (errors name the feature or label)."""
        casts = {}
        if schema is not None:
            for recorded in schema.features:
                casts["feature", recorded.name] = self._check(recorded, self.feature_specs,
                                                              "feature")
            if labelled and self.label_specs:
                names = [c.name for c in schema.response]
                if self.response != names:
                    raise ValueError(f"`input_fn` {self!r}: its labels are {self.response}; the "
                                     f"model was trained with {names}.")
                for recorded in schema.response:
                    casts["label", recorded.name] = self._check(recorded, self.label_specs,
                                                                "label")
        return DatasetPlan(self, {k: v for k, v in casts.items() if v is not None}, labelled)

    def _check(self, recorded, specs, what):
        """The dtype to cast ``recorded``'s tensor to, or None; an error if it breaks the
        contract."""
        name = recorded.name
        if name not in specs:
            raise ValueError(f"`input_fn` {self!r}: its dataset has no {what} {name!r}, which "
                             f"the model was trained on; its {what}s are: "
                             f"{', '.join(specs) or 'none'}.")
        spec = specs[name]
        kind = _kind(spec.dtype)
        # stricter than arrays' (schema._COMPATIBLE): a fraction cannot be looked for before
        # the steps run, so floats are refused where integers were recorded
        fits = {"numeric": ("numeric", "integer"), "integer": ("integer",),
                "boolean": ("boolean",), "string": ("string",),
                "factor": ("string",)}[recorded.kind]
        if kind not in fits:
            raise TypeError(f"`input_fn` {self!r}: {what} {name!r} holds {spec.dtype.name} "
                            f"values; the model was trained on {recorded.dtype} "
                            f"({KIND_WORDS[0][recorded.kind]}) values in it. "
                            "Cast it in the dataset (tf.cast) or train a new model.")
        shape = tuple(spec.shape[1:].as_list())
        if (shape or (1,)) != (recorded.shape or (1,)):
            raise ValueError(f"`input_fn` {self!r}: {what} {name!r} has the per-example shape "
                             f"{list(shape)}; the model was trained on {list(recorded.shape)}.")
        if kind in ("numeric", "integer") and spec.dtype.name != recorded.dtype:
            return recorded.dtype
        return None


class DatasetPlan:
    """What a call's graph reads: the :class:`DatasetInput` (its graph and dataset), the
    casts the data contract asks for (``{("feature" or "label", name): dtype}``), and
    whether labels are read."""

    def __init__(self, input_fn, casts, labelled):
        self.input_fn, self.casts, self.labelled = input_fn, casts, labelled

    @property
    def graph(self):
        return self.input_fn.graph


class DatasetPipeline:
    """One call's graph reading the dataset through an initializable iterator.

    Attributes:
        batch: ``{feature name: tensor, LABEL or LABEL/<name>: tensor}``, the next batch.
    """

    def __init__(self, tf, plan):
        v1 = tf.compat.v1
        source = plan.input_fn
        self.iterator = v1.data.make_initializable_iterator(source.dataset)
        element = self.iterator.get_next()
        features, labels = element if isinstance(element, tuple) else (element, None)

        def cast(what, name, tensor):
            dtype = plan.casts.get((what, name))
            return tensor if dtype is None else tf.cast(tensor, dtype)

        self.batch = {str(name): cast("feature", str(name), t) for name, t in features.items()}
        if labels is not None and plan.labelled:
            if isinstance(labels, dict):
                self.batch.update((label_key(str(name)), cast("label", str(name), t))
                                  for name, t in labels.items())
            else:
                self.batch[LABEL] = cast("label", source.response[0], labels)

    def start(self, session, plan, input_fn, training, epochs=None):
        """Starts the dataset from its beginning for the call."""
        session.run(self.iterator.initializer)


def _accepted(fn):
    """The names of ``fn``'s arguments among ``mode``, ``params``, ``config``."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return set()
    return {name for name in _CALL_ARGS if name in parameters}
