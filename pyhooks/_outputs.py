"""Step outputs by name: what the eager backend's and the Keras adapter's sessions fetch (private).

A session that is not a TensorFlow graph (:class:`pyhooks.eager.EagerSession`,
:class:`pyhooks.keras.KerasSession`) has a step's outputs by name (a step
function's dict, a batch's logs) instead of tensors. Here is what both fetch
and how: the fetch kinds (a name, the loss, the global step read, the step
itself), :class:`StepGraph` (the graph-like object hooks see), and
:class:`Evaluator`, which evaluates fetch structures against one step's outputs.
"""

from __future__ import annotations

import numpy as np

from pyhooks.distribute import check_plain_output, reduce_output
from pyhooks.errors import HookSetupError, PyhooksError
from pyhooks.hooks._common import map_leaves, to_numpy

__all__ = ["GLOBAL_STEP_READ", "LOSS", "STEP", "Evaluator", "Output", "StepGraph",
           "StepOutputError", "has_output"]


class StepOutputError(PyhooksError, LookupError):
    """A fetch names an output the step does not produce (the message lists those it has)."""


class Output:
    """A step output by name: what a string fetch means on this backend."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<step output {self.name!r}>"


class _Loss:
    __slots__ = ()

    def __repr__(self):
        return "<the step's loss: output 'losses', else 'loss'>"


class _GlobalStepRead:
    __slots__ = ()
    name = "global_step"

    def __repr__(self):
        return "<global step read: the value before the step>"


class _Step:
    __slots__ = ()

    def __repr__(self):
        return "<run one step>"


LOSS = _Loss()
GLOBAL_STEP_READ = _GlobalStepRead()
STEP = _Step()  # what the runner sends in place of a None fetch (``pyhooks_step_fetch``)
_NAME, _LOSS_KIND, _STEP_READ, _RUN = 1, 2, 3, 4
_KINDS = {str: _NAME, Output: _NAME, _Loss: _LOSS_KIND, _GlobalStepRead: _STEP_READ, _Step: _RUN}
_READS = (_STEP_READ,)  # fetches that read the global step: no step needed
_kind = _KINDS.get


def has_output(fetches):
    """True if ``fetches`` names a step output (or is the step itself): running it takes a step."""
    kind = _kind(type(fetches))
    if kind is not None:
        return kind not in _READS
    if isinstance(fetches, dict):
        fetches = fetches.values()
    elif not isinstance(fetches, (list, tuple)):
        return isinstance(fetches, str)  # a str subclass
    for fetch in fetches:
        kind = _kind(type(fetch))
        if kind is None:
            if has_output(fetch):
                return True
        elif kind not in _READS:
            return True
    return False


class StepGraph:
    """The graph-like object of a non-graph session: collections, lookups, the global step.

    It is the *backend* of :mod:`pyhooks.hooks._common` while hooks run ``begin()``
    (the session creator's or the Keras adapter's ``backend_scope``).
    ``get_collection("losses")`` is ``[the step's loss]`` (so SPEC §3's custom R
    hook runs unchanged), ``"pyhooks_training_loss"`` the ``"loss"`` output and
    ``"global_step"`` the global step variable.
    """

    finalized = True

    def __init__(self, global_step, kind="eager", expose=None, checkpoint=None):
        self._global_step = global_step
        self._expose = expose  # called before anyone is given the variable (eager: _Stepper)
        self.kind = kind
        # what a CheckpointSaverHook without a saver saves: a function making a
        # tf.train.Checkpoint (Keras: the model and its optimizer), or None (eager: the loop's
        # variables are not known, the hook needs its saver)
        self.default_checkpoint = checkpoint

    @property
    def global_step(self):
        """The global step variable (brought up to date by ``expose`` first: see :mod:`pyhooks.eager`)."""
        if self._expose is not None:
            self._expose()
        return self._global_step

    def get_collection(self, key, scope=None):
        if key == "losses":
            return [LOSS]
        if key == "pyhooks_training_loss":
            return [Output("loss")]
        if key == "global_step":
            return [self.global_step]
        return []

    def finalize(self):
        pass

    def as_graph_element(self, obj):
        return self.element(obj, "fetch", "graph")

    # -- the backend protocol (pyhooks.hooks._common)
    def global_step_read(self, hook_name=None, required=True):
        """The fetch of the global step before the step (the graph's read tensor)."""
        return GLOBAL_STEP_READ

    def element(self, value, what, hook_name):
        if isinstance(value, str):
            return Output(value[:-2] if value.endswith(":0") else value)
        if isinstance(value, (Output, _Loss, _GlobalStepRead)) or callable(
                getattr(value, "numpy", None)):
            return value
        raise HookSetupError(f"{hook_name}: {what} {value!r} is neither a step output name nor a "
                             f"variable ({self.kind} backend: name outputs as strings, e.g. 'loss').")


class Evaluator:
    """Evaluates fetch structures against one step's outputs: the base of the eager and the
    Keras sessions (``last_outputs``: the last step's, which ``pyhooks_read`` reads)."""

    last_outputs = None  # the last step's outputs {name: value}; None before the first
    _converted_for = None  # the outputs whose numpy values _converted holds
    _converted = None
    _where = "the step function"
    _strategy = None  # a tf.distribute strategy: PerReplica outputs are combined when fetched
    _reductions = {}  # {output name: "sum" | "mean" | "concat"} declared for PerReplica outputs

    def pyhooks_check_fetches(self, fetches):
        """Raises what fetching ``fetches`` from the last step would (nothing before a step).

        The runners call it on an error, to name the hook that asked for a bad fetch.
        """
        if self.last_outputs is not None:
            self.evaluate(fetches, self.last_outputs, 0)

    def evaluate(self, fetches, outputs, step_before):
        """``fetches`` (a structure of fetches) with each leaf's value in the step whose
        ``outputs`` are given; ``step_before`` is the global step before that step."""
        cls = type(fetches)
        leaf = self._leaf
        if cls is list:  # the runner's flat list of leaves: the hot path
            return [leaf(fetch, outputs, step_before) for fetch in fetches]
        if cls in _KINDS:
            return leaf(fetches, outputs, step_before)
        if cls is dict:
            return {key: leaf(fetch, outputs, step_before) for key, fetch in fetches.items()}
        return map_leaves(lambda fetch: leaf(fetch, outputs, step_before), fetches)

    def _leaf(self, fetch, outputs, step_before):
        kind = _kind(type(fetch))
        if kind == _NAME:
            name = fetch if type(fetch) is str else fetch.name
        elif kind == _STEP_READ:
            return np.int64(step_before)
        elif kind == _LOSS_KIND:
            name = "losses" if "losses" in outputs else "loss"
        elif kind == _RUN:
            return None
        elif isinstance(fetch, (list, tuple, dict)):
            return self.evaluate(fetch, outputs, step_before)
        elif isinstance(fetch, str):
            name = str(fetch)
        else:
            convert = getattr(fetch, "numpy", None)
            if convert is None or not callable(convert):
                raise TypeError(f"{type(self).__name__} cannot fetch {fetch!r} "
                                f"({type(fetch).__name__}): fetch step output names (str), "
                                "variables, or nested lists/tuples/dicts of them.")
            return convert()
        return self._output(name, outputs)

    def _output(self, name, outputs):
        """The numpy value of output ``name``, converted once per step."""
        if self._converted_for is not outputs:
            self._converted, self._converted_for = {}, outputs
        value = self._converted.get(name)
        if value is None:
            value = outputs[name] if name in outputs else self._missing(name, outputs)
            value = self._converted[name] = self._numpy(name, value)
        return value

    def _numpy(self, name, value):
        """Output ``name``'s value (or a leaf of it) as numpy; an output that is a structure
        (a step function's nested dict, list or tuple of tensors) leaf by leaf, in its
        structure, as a TensorFlow session returns a structure of fetches."""
        if isinstance(value, (list, tuple, dict)):
            return map_leaves(lambda leaf: self._numpy(name, leaf), value)
        if self._strategy is not None:
            return to_numpy(reduce_output(self._strategy, name, value,
                                          self._reductions.get(name)))
        if getattr(value, "_numpy_internal", None) is None and not isinstance(
                value, (np.ndarray, np.generic, float, int)):
            value = check_plain_output(name, value)  # a PerReplica: strategy= forgotten
        return to_numpy(value)

    def _missing(self, name, outputs):
        have = ", ".join(map(str, outputs)) or "nothing"
        raise StepOutputError(f"{self._where} has no output {name!r}; its outputs are: {have}.")
