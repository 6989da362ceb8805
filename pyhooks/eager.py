"""The eager backend: a TF2 train step driven by :class:`pyhooks.MonitoredSession`.

``EagerSessionCreator(step_fn)`` makes sessions whose ``run()`` executes one
call of ``step_fn`` (a ``tf.function`` or a plain callable returning a dict of
named tensors, e.g. ``{"loss": ..., "predictions": ...}``) and returns numpy
values, so that the runner and the built-in hooks work as with a graph session::

    creator = pyhooks.EagerSessionCreator(train_step)
    with pyhooks.MonitoredSession(creator, hooks=[pyhooks.StopAtStepHook(last_step=100),
                                                  pyhooks.HistorySaverHook(every_n_step=10)]) as s:
        while not s.should_stop():
            s.run()                        # one step; s.run("loss") returns the loss too

Fetches (what ``run()`` and the hooks' ``SessionRunArgs`` may name), in any
nested list/tuple/dict/namedtuple:

- a string: the step output of that name (``"loss"``), as numpy; an output that is
  itself a nested dict/list/tuple of tensors comes as that structure of numpy values;
  a name the step does not return is an error listing the outputs it has;
- a ``tf.Variable`` (or a Keras variable): its value after the step;
- the global step read (``graph.global_step_read()``, what the hooks fetch):
  the global step *before* the step, as the read tensor gives in a graph (the
  step reached is that value + 1), a numpy integer;
- ``graph.get_collection("losses")[0]``: the step's loss, i.e. its ``"losses"``
  output (per-example, as pyhooks' estimators put in that collection) if it has
  one, else ``"loss"``.

``run()`` executes a step when the fetches are ``None`` or name a step output;
fetches of variables and the global step only read them (as running a
variable in a graph does not train): that is what hooks' raw reads do. Hooks
read outputs at the end through ``pyhooks_read`` (the last step's values).
The step's ``StopIteration`` or ``tf.errors.OutOfRangeError`` (an exhausted
``tf.data`` iterator) ends the loop cleanly: ``end()`` is called.

The global step is a ``tf.Variable`` (int64, created unless given). pyhooks
adds one to it after every step, inside the same ``tf.function`` call when
``step_fn`` is one; if the first step moved it already (e.g.
``global_step=optimizer.iterations``), pyhooks leaves it to the step and
follows its value. The variable pyhooks creates is written only once someone
is given it (``creator.global_step``, ``graph.global_step``,
``graph.get_collection("global_step")``), then after every step: until then
nobody can read it, and the write is an op in every step. ``feed_dict`` and
non-default ``RunOptions`` (tracing) have no meaning for an eager step and are
refused.

``EagerSessionCreator(step_fn, steps_per_execution=N)`` (``step_fn`` a
``tf.function``) makes each ``run()`` one ``tf.function`` call running up to N
steps in a loop (as Keras' ``model.compile(steps_per_execution=)`` and the
estimators' ``run_config(steps_per_execution=)``): less Python per step. The
hooks run once per call and are told ``pyhooks.RunInfo(steps_per_run=N)`` (the
loop's ``RunInfo``, if any, with that field set), so the built-in hooks count
the steps each call made: checkpoints, step rates and history rows come at the
first call reaching their step. What a run returns and hooks fetch is the
*last* step's outputs of the call; the global step read is the step before the
call. A call runs no step past the ``last_step`` of a ``StopAtStepHook`` of the
loop (``last_step`` or ``num_steps``: the last call runs fewer); a stop
requested by another hook takes effect after the call. The very first call
runs its first step alone, then the others in the loop. The global step
variable is written at every step (an error or the input running out inside a
call leaves the steps done counted; hooks do not see their outputs). Not with
``strategy``.

Hooks on this backend (their ``begin()`` looks things up here, see
:mod:`pyhooks.hooks._common`): ProgressBarHook, HistorySaverHook, StepCounterHook
(``tf.summary`` writer), NanTensorHook, LoggingTensorHook, StopAtStepHook,
GlobalStepWaiterHook, FinalOpsHook, LambdaHook and ConfigureGcsHook work;
CheckpointSaverHook saves a ``tf.train.Checkpoint`` given as ``saver``;
SummarySaverHook writes named outputs with ``tf.summary``; ProfilerHook traces
its steps with ``tf.profiler.experimental`` next to the timeline of hook calls;
FeedFnHook refuses in ``begin()`` (feed the step function instead).

With a CheckpointSaverHook among the hooks, the state of hooks that keep one
(``state_dict()``, e.g. HistorySaverHook's rows) is saved beside its
checkpoints and given back to a loop that starts from one of them (restore the
``tf.train.Checkpoint`` before creating the session): see
:mod:`pyhooks.hooks._hook_state`.
"""

from __future__ import annotations

import contextlib

from pyhooks import distribute
from pyhooks._outputs import (GLOBAL_STEP_READ, LOSS, STEP, Evaluator, StepGraph,  # noqa: F401
                              StepOutputError, has_output)
from pyhooks.hook import RunInfo, run_info
from pyhooks.hooks._common import backend_scope
from pyhooks.hooks._hook_state import for_loop, listening
from pyhooks.hooks._workers import worker_scope

__all__ = ["EagerSession", "EagerSessionCreator", "StepOutputError"]


class _Stepper:
    """Calls the step and keeps the global step: a Python mirror, the variable kept in sync.

    A variable pyhooks made itself is *hidden* until someone is given it
    (:meth:`expose`: ``creator.global_step``, ``graph.global_step``,
    ``get_collection("global_step")``). While hidden nobody can read it, not
    even the step, so it is not written at every step (an op in the step: ~5 µs
    per step on a small machine, an eager ``assign_add`` ~200 µs for a plain
    callable); the mirror is the global step, and :meth:`expose` writes it.
    """

    def __init__(self, step_fn, global_step, hidden=False, steps_per_execution=1):
        self.step_fn = step_fn
        self.global_step = global_step
        self.hidden = hidden
        self.steps_per_execution = steps_per_execution
        self.value = None  # the mirror (int), set by sync()
        self._call = None  # after the first step: () -> outputs, maintaining the variable
        self._loop = None  # steps_per_execution > 1, after the first step: count -> outputs
        self._owned = True  # pyhooks increments the variable (else the step does)

    def sync(self):
        if not self.hidden or self.value is None:  # hidden: the mirror is the truth
            self.value = int(self.global_step.numpy())

    def expose(self):
        """The variable is about to be given out: write the mirror to it, and keep it from now on.

        Called in the middle of a step (a step function reading
        ``creator.global_step``), the step's own one is added when it returns
        (see :meth:`_hidden_call`).
        """
        if not self.hidden:
            return
        import tensorflow as tf

        self.hidden = False
        if self.value is not None:
            with tf.init_scope():  # now, even while a tf.function step is traced
                self.global_step.assign(self.value)
        if self._call is not None:
            self._call = self._make_call(True)

    def steps(self, count):
        """Runs ``count`` steps in one call; returns the outputs of the last of them. An
        error in the middle leaves the steps done counted. (The very first step runs alone,
        to see whether it moves the global step itself, then the call's others in a loop.)"""
        if self._call is None:
            outputs = self.step()
            count -= 1
            if count == 0:
                return outputs
        if self._loop is None:
            self._loop = self._make_loop(self._owned)
        import tensorflow as tf

        try:
            outputs, after = self._loop(tf.constant(count, tf.int64))
        except BaseException:
            self.value = int(self.global_step.numpy())  # the steps done before the error
            raise
        self.value = int(after)
        return outputs

    def step(self):
        if self._call is not None:
            if self._owned:
                outputs = self._call()
                self.value += 1
            else:  # the step moves the variable itself: follow it
                outputs, after = self._call()
                self.value = int(after)
            return outputs
        before = self.value
        outputs = self.step_fn()
        if self.hidden:  # nobody has the variable, so the step did not move it
            self._call = self._hidden_call()
            self.value = before + 1
            return outputs
        after = int(self.global_step.numpy())
        self._owned = after == before
        self._call = self._make_call(self._owned)
        if self._owned:
            self.global_step.assign_add(1)
            self.value = before + 1
        else:
            self.value = after
        return outputs

    def _hidden_call(self):
        step_fn, variable = self.step_fn, self.global_step

        def call():
            outputs = step_fn()
            if not self.hidden:  # exposed during this step (a retrace read it): count it
                variable.assign_add(1)
            return _as_dict(outputs)
        return call

    def _make_call(self, owned):
        import tensorflow as tf

        step_fn, variable = self.step_fn, self.global_step
        compiled = callable(getattr(step_fn, "get_concrete_function", None))
        def after(outputs):  # ordered after the outputs: a failed step changes nothing
            with tf.control_dependencies(tf.nest.flatten(outputs) if compiled else None):
                if owned:
                    variable.assign_add(1)
                    return None
                return variable.read_value()

        def call():
            outputs = _as_dict(step_fn())
            value = after(outputs)
            return outputs if owned else (outputs, value)
        return tf.function(call) if compiled else call

    def _make_loop(self, owned):
        """``loop(count)``: one ``tf.function`` call running ``count`` steps (at least one,
        at most ``steps_per_execution``); its outputs are the last step's, and the global
        step after it. The variable moves at every step, so an error leaves it exact."""
        import tensorflow as tf

        step_fn, variable = self.step_fn, self.global_step

        def one():
            outputs = _as_dict(step_fn())
            with tf.control_dependencies(tf.nest.flatten(outputs)):  # after the step's work
                if owned:
                    return outputs, variable.assign_add(1)
                return outputs, variable.read_value()

        def loop(count):
            first, after = one()
            invariants = tf.nest.map_structure(lambda t: tf.TensorShape(None), first)

            def body(i, outputs, after):
                with tf.control_dependencies([after]):  # the step before comes first
                    outputs, after = one()
                return i + 1, outputs, after

            _, outputs, after = tf.while_loop(
                lambda i, *_: i < count, body, (tf.constant(1, tf.int64), first, after),
                shape_invariants=(tf.TensorShape([]), invariants, tf.TensorShape([])),
                maximum_iterations=self.steps_per_execution - 1)
            return outputs, after

        return tf.function(loop, input_signature=[tf.TensorSpec([], tf.int64)])


def _as_dict(outputs):
    return {} if outputs is None else outputs


class EagerSession(Evaluator):
    """One step per ``run()``; see the module docstring for what may be fetched.

    Attributes:
        graph: the :class:`StepGraph` (collections and the global step).
    """

    pyhooks_step_fetch = STEP  # the runner sends it for a None fetch when hooks add fetches

    def __init__(self, creator):
        self.graph = creator.graph
        self._stepper = creator._stepper  # noqa: SLF001
        self._strategy = creator._strategy  # noqa: SLF001
        self._reductions = creator._output_reductions  # noqa: SLF001
        self._stop_hooks = creator._stop_hooks  # noqa: SLF001
        self._stepper.sync()
        self._closed = False

    @property
    def outputs(self):
        """The names of the outputs of the last step (``None`` before the first)."""
        return None if self.last_outputs is None else list(self.last_outputs)

    def run(self, fetches=None, feed_dict=None, options=None, run_metadata=None):
        """Runs one step (``steps_per_execution`` of them: one call) if ``fetches`` is None or
        names an output, and returns the fetched values (the last step's outputs).

        Raises:
            StepOutputError: a fetch names an output the step does not return.
            ValueError: a ``feed_dict`` or non-default ``options`` (no meaning here).
            RuntimeError: the session is closed.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed EagerSession.")
        if feed_dict:
            names = ", ".join(sorted(getattr(k, "name", None) or str(k) for k in feed_dict))
            raise ValueError(f"EagerSession: feed_dict has no meaning for an eager step (got feeds "
                             f"for {names}); pass inputs to the step function instead, e.g. from "
                             "a tf.data iterator.")
        if options is not None and options.ByteSize():
            raise ValueError("EagerSession: RunOptions (e.g. tracing) have no effect on an eager "
                             "step; profile with tf.profiler.experimental.start()/stop() instead.")
        stepper = self._stepper
        if fetches is not None and not has_output(fetches):
            return self.evaluate(fetches, self.last_outputs or {}, stepper.value)
        before = stepper.value
        outputs = stepper.steps(self._count(before)) if stepper.steps_per_execution > 1 \
            else stepper.step()
        if not isinstance(outputs, dict):
            outputs = self._wrap(outputs)
        self.last_outputs = outputs
        return None if fetches is None else self.evaluate(fetches, outputs, before)

    def _count(self, step):
        """The steps of the next call: ``steps_per_execution``, fewer if a ``StopAtStepHook``
        of the loop stops before that many."""
        count = self._stepper.steps_per_execution
        for hook in self._stop_hooks:
            last = hook.last_step
            if last is not None and last > step:
                count = min(count, last - step)
        return count

    def _wrap(self, outputs):
        if hasattr(outputs, "keys") and hasattr(outputs, "__getitem__"):
            return dict(outputs)
        if callable(getattr(outputs, "numpy", None)):
            return {"loss": outputs}
        distribute.check_plain_output(None, outputs)  # a RemoteValue: how to
        raise TypeError(f"The step function must return a dict of named tensors (or one loss "
                        f"tensor), got {type(outputs).__name__}.")

    def pyhooks_read(self, fetches):
        """Values of ``fetches`` without running a step: variables, and the last step's outputs."""
        return self.evaluate(fetches, self.last_outputs or {}, self._stepper.value)

    def close(self):
        self._closed = True


class EagerSessionCreator:
    """Makes :class:`EagerSession` s for :class:`pyhooks.MonitoredSession` from a TF2 train step.

    Args:
        step_fn: a ``tf.function`` or a callable without arguments returning a
            dict of named tensors (``{"loss": ..., ...}``) or one loss tensor.
        global_step: an integer ``tf.Variable``; default a new int64 variable at 0.
        strategy: the ``tf.distribute`` strategy ``step_fn`` runs under: its
            ``PerReplica`` outputs reach the hooks combined, and with several
            workers they agree on stopping (see :mod:`pyhooks.distribute`).
        is_chief: whether this process is the chief; default the strategy's
            ``extended.should_checkpoint``. On other workers the hooks write
            files below ``<dir>/tmp_<task_type>_<task_id>``.
        chief_only_hooks: hooks that :class:`pyhooks.MonitoredSession` runs (after
            its ``hooks``) on the chief only.
        agree_every_n_steps: with several workers, how often they agree on
            stopping (one small all-reduce); a stop request waits until then.
            ``"auto"`` (the default): steps chosen from measured times so that
            agreeing costs about 2% of a step, at most 1 s apart, and a
            ``StopAtStepHook``'s step is agreed at that step (see
            :class:`pyhooks.distribute.StopAgreementHook`). ``None``: no agreement
            (the workers must stop after the same step by themselves).
        output_reductions: ``{output name: "sum" | "mean" | "concat"}``: how the
            hooks see a ``PerReplica`` output under ``strategy``; by default a
            scalar's replicas are summed (a loss scaled by the global batch
            size, ``tf.nn.compute_average_loss``), per-example values concatenated.
        steps_per_execution: steps run inside one ``run()`` (one ``tf.function``
            call, a loop of ``step_fn``; see the module docstring); default 1.

    Raises:
        TypeError: ``step_fn`` is not callable or ``global_step`` not a variable;
            ``steps_per_execution`` > 1 with a ``step_fn`` that is no ``tf.function``.
        ValueError: ``steps_per_execution`` not a whole number >= 1, or > 1 with
            ``strategy``; entering the loop's hooks under a ``RunInfo`` whose
            ``steps_per_run`` is another number than 1 or ``steps_per_execution``.
        RuntimeError: created while eager execution is off (inside a graph).

    Example:
        >>> creator = pyhooks.EagerSessionCreator(train_step)
        >>> with pyhooks.MonitoredSession(creator, hooks=[pyhooks.StopAtStepHook(10)]) as s:
        ...     while not s.should_stop():
        ...         s.run()
    """

    # A new EagerSession runs the same step function in the same process: it cannot cure an
    # AbortedError/UnavailableError (a collective's peer that is gone), so the runner raises it.
    pyhooks_can_recover = False

    def __init__(self, step_fn, global_step=None, strategy=None, is_chief=None,
                 chief_only_hooks=None, agree_every_n_steps="auto", output_reductions=None,
                 steps_per_execution=1):
        import tensorflow as tf

        from pyhooks.timer import check_positive

        if not callable(step_fn):
            raise TypeError(f"`step_fn` must be callable, got {step_fn!r}.")
        steps_per_execution = check_positive("steps_per_execution", steps_per_execution,
                                             integer=True, allow_none=False)
        if steps_per_execution > 1:
            if not callable(getattr(step_fn, "get_concrete_function", None)):
                raise TypeError(f"`steps_per_execution` = {steps_per_execution!r} needs `step_fn` "
                                f"to be a tf.function (its steps run in a loop inside one), got "
                                f"{step_fn!r}.")
            if strategy is not None:
                raise ValueError(f"`steps_per_execution` = {steps_per_execution!r} cannot be used "
                                 "with `strategy`: run one step per call there.")
        if not tf.executing_eagerly():
            raise RuntimeError("EagerSessionCreator needs eager execution; it was created inside "
                               "a graph (tf.Graph().as_default() or a tf.function).")
        hidden = global_step is None and steps_per_execution == 1  # a loop writes it per step
        if global_step is None:
            global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        if not isinstance(global_step, tf.Variable):  # a Keras variable: its tf.Variable
            global_step = getattr(global_step, "value", global_step)
        dtype = getattr(global_step, "dtype", None)
        if not (callable(getattr(global_step, "assign_add", None)) and dtype is not None
                and dtype.is_integer):
            raise TypeError(f"`global_step` must be an integer tf.Variable, got {global_step!r}.")
        self._stepper = _Stepper(step_fn, global_step, hidden, steps_per_execution)
        self.steps_per_execution = steps_per_execution
        self._stop_hooks = []  # the loop's StopAtStepHooks: a call runs no step past theirs
        self.graph = StepGraph(global_step, expose=self._stepper.expose if hidden else None)
        self._strategy = strategy
        self._output_reductions = distribute.check_reductions(output_reductions)
        self.worker = distribute.find_worker(strategy, is_chief)
        self._chief_only_hooks = chief_only_hooks
        self._agree_every_n_steps = agree_every_n_steps
        self._hook_state = None  # of the hooks of the MonitoredSession made last
        distribute.worker_hooks((), chief_only_hooks, self.worker, agree_every_n_steps,
                                strategy)  # bad arguments are errors now, not in MonitoredSession

    def pyhooks_hooks(self, hooks):
        """The hooks :class:`pyhooks.MonitoredSession` runs: ``hooks``, the chief-only ones
        on the chief, the hooks' state beside the checkpoints of a ``CheckpointSaverHook``
        (:func:`pyhooks.hooks._hook_state.for_loop`), and with several workers a stop
        agreement (last)."""
        from pyhooks.hooks.stop_at_step import StopAtStepHook

        hooks = distribute.worker_hooks(hooks, self._chief_only_hooks, self.worker)
        chief = self.worker is None or self.worker.is_chief
        self._hook_state = for_loop(hooks) if chief else None  # the files are the chief's
        if self._hook_state is not None:
            hooks.append(self._hook_state)
        if self.worker is not None:  # the stop agreement, last
            hooks = distribute.worker_hooks(hooks, None, self.worker, self._agree_every_n_steps,
                                            self._strategy)
        self._stop_hooks[:] = [hook for hook in hooks if isinstance(hook, StopAtStepHook)]
        return hooks

    @property
    def global_step(self):
        """The global step variable (an int64 ``tf.Variable`` unless given), up to date."""
        return self.graph.global_step

    @contextlib.contextmanager
    def pyhooks_hook_scope(self):
        """The context in which :class:`pyhooks.MonitoredSession` runs the hooks' ``begin()``:
        their lookups answered by this backend, this process's worker for their files.
        With several workers, a hook's error there is told to the others (naming this
        worker and the phase), then raised."""
        with backend_scope(self.graph), worker_scope(self.worker), self._run_info(), \
                listening(self._hook_state):
            try:
                yield
            except BaseException as error:
                if self.worker is not None and self.worker.num_workers > 1:
                    distribute.report_failure(self.worker, "in a hook's begin() before its "
                                              "first step", error)
                raise

    def _run_info(self):
        """With ``steps_per_execution`` > 1, the driver's :class:`pyhooks.RunInfo` (or an
        empty one) with ``steps_per_run`` set to it, for the hooks' ``begin()``."""
        if self.steps_per_execution == 1:
            return contextlib.nullcontext()
        given = run_info()
        if given.steps_per_run not in (1, self.steps_per_execution):
            raise ValueError(f"`steps_per_execution` = {self.steps_per_execution!r} but the "
                             f"loop's RunInfo says steps_per_run={given.steps_per_run!r}.")
        return RunInfo(steps=given.steps, saving_listeners=given.saving_listeners,
                       mode=given.mode, steps_per_run=self.steps_per_execution)

    def create_session(self):
        return EagerSession(self)
