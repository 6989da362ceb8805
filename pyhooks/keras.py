"""``keras_callback(hooks)``: pyhooks hooks inside Keras 3 ``model.fit`` (TensorFlow backend).

The callback drives the hooks as :class:`pyhooks.MonitoredSession` would::

    on_train_begin        begin() (lookups answered by this backend), after_create_session()
    on_train_batch_begin  before_run(context)
    on_train_batch_end    after_run(context, values)   # values from the batch's logs
                          context.request_stop() -> model.stop_training = True
    on_train_end          end(session)
    fit raising           after_error(session, error)  # see below

Fetches are the batch's ``logs`` by name (``"loss"``, the compiled metrics), the
global step read, variables, or nested structures of them, as on the eager
backend (:mod:`pyhooks.eager`); a name missing from the logs is an error
listing the ones there are. The losses collection is ``logs["loss"]``: what
Keras reports, i.e. the mean over the epoch so far, not a per-example loss.
The global step is the optimizer's ``iterations`` variable (or ``global_step``).
Its read gives the step before the batch, as in a graph.

With ``model.compile(steps_per_execution=N)`` Keras runs up to N batches per
call of its train function and calls ``on_train_batch_begin``/``_end`` once per
call: the hooks see one run per call, told ``pyhooks.RunInfo(steps_per_run=N)``
(so step-based hooks fire at the first call reaching their step), values from
that call's logs (its last batch's), and the steps the call really made (the
last call of an epoch may make fewer; counted from the optimizer's
``iterations``). A stop requested by a hook ends ``fit`` after the call that
requested it: ``StopAtStepHook(last_step=s)`` ends it at the first call
reaching ``s``, which may be up to N - 1 steps past ``s``.

``after_error`` is called when a hook raises, when the train step raises
(``model.train_function`` is wrapped for the duration of ``fit``) and, if the
callback is used as a context manager around ``fit``, for any other error::

    with pyhooks.keras_callback(hooks) as callback:
        model.fit(x, y, callbacks=[callback])

Keras looks at ``stop_training`` only after a batch: a stop requested in
``after_create_session`` (``StopAtStepHook`` already at its step) ends ``fit``
after one batch.

The hooks' :func:`pyhooks.run_info` says how many batches (steps) ``fit`` will run
once Keras knows it (at the first epoch: ``epochs`` minus ``initial_epoch``, times
the batches of an epoch), so a ``ProgressBarHook`` without a ``total`` shows them.

With a ``CheckpointSaverHook`` among the hooks, the state of hooks that keep one
(``state_dict()``) is saved beside its checkpoints and given back to a ``fit``
that starts from one of them (the ``tf.train.Checkpoint`` restored before
``fit``): see :mod:`pyhooks.hooks._hook_state`.
"""

from __future__ import annotations

try:
    import keras
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError("pyhooks.keras_callback needs Keras 3 with TensorFlow: "
                      "pip install tensorflow keras") from error

from pyhooks import distribute
from pyhooks._feeds import new_run_metadata, new_run_options
from pyhooks._outputs import Evaluator, StepGraph, has_output
from pyhooks._steps import (Coordinator, HookedStep, call, call_after_error, call_end,
                            is_end_of_input)
from pyhooks.hook import RunInfo, SessionRunArgs, SessionRunContext, check_hooks, hooks_by_method
from pyhooks.hooks._common import backend_scope
from pyhooks.hooks._hook_state import for_loop
from pyhooks.hooks._workers import worker_scope

__all__ = ["HooksCallback", "KerasSession", "keras_callback"]

_CALLER_ARGS = SessionRunArgs(None)
_FETCH_ONLY = "feed_dict and RunOptions have no meaning in model.fit; a hook can only fetch."


def keras_callback(hooks, global_step=None, chief_only_hooks=None, is_chief=None,
                   strategy=None):
    """A ``keras.callbacks.Callback`` running pyhooks ``hooks`` inside ``model.fit``.

    Args:
        hooks: a list of :class:`pyhooks.SessionRunHook` (one hook alone is a list of it).
        global_step: a variable to use as the global step; default the model's
            ``optimizer.iterations``.
        chief_only_hooks: hooks run (after ``hooks``) only if this process is the chief.
        is_chief: whether it is; default the strategy's ``extended.should_checkpoint``.
        strategy: the ``tf.distribute`` strategy; default the one whose scope is
            entered when the callback is made, if any. On a worker other than the
            chief, hooks write files below ``<dir>/tmp_<task_type>_<task_id>``
            (see :mod:`pyhooks.distribute`).

    Returns:
        a :class:`HooksCallback` (also a context manager, see the module docstring).

    Example:
        >>> history = pyhooks.HistorySaverHook(every_n_step=10)
        >>> model.fit(x, y, epochs=2, callbacks=[pyhooks.keras_callback([history])])
        >>> history.history
    """
    import tensorflow as tf

    if strategy is None and is_chief is None and tf.distribute.has_strategy():
        strategy = tf.distribute.get_strategy()
    worker = distribute.find_worker(strategy, is_chief)
    hooks = distribute.worker_hooks(hooks, chief_only_hooks, worker)
    state = for_loop(hooks) if worker is None or worker.is_chief else None
    callback = HooksCallback(hooks if state is None else [*hooks, state], global_step,
                             hook_state=state)
    callback.worker = worker
    return callback


class KerasSession(Evaluator):
    """The "session" hooks see inside ``model.fit``: reads only; Keras runs the batches."""

    _where = "model.fit's batch"

    def __init__(self, graph):
        self.graph = graph
        self.step = int(graph.global_step.numpy())  # mirror: the global step now

    def run(self, fetches=None, feed_dict=None, options=None, run_metadata=None):
        """Reads variables and the global step; a batch cannot be run from here."""
        if fetches is None or has_output(fetches):
            raise RuntimeError("Inside model.fit Keras runs the batches: a hook cannot run one "
                               "with session.run(); ask for outputs (the batch's logs, e.g. "
                               "'loss') in before_run() instead.")
        return self.evaluate(fetches, {}, self.step)

    def pyhooks_read(self, fetches):
        """Values of ``fetches``: variables, and the last batch's logs."""
        return self.evaluate(fetches, self.last_outputs or {}, self.step)

    def close(self):
        pass


def _steps_per_execution(model):
    """The most batches one call of ``model``'s train function runs (Keras' compile option)."""
    count = getattr(model, "steps_per_execution", 1)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 1 else 1


class _TrainFunctionGuard:
    """Stands for ``model.train_function`` during ``fit`` so errors of the step reach the hooks."""

    def __init__(self, function, callback):
        self.function = function
        self.callback = callback

    def __call__(self, *args, **kwargs):
        try:
            return self.function(*args, **kwargs)
        except BaseException as error:
            if not is_end_of_input(type(error)):  # end of input: Keras ends the epoch
                self.callback._fail(error)  # noqa: SLF001
            raise


class HooksCallback(keras.callbacks.Callback):
    """Runs pyhooks hooks in ``model.fit``; made by :func:`keras_callback`.

    Attributes:
        session: the :class:`KerasSession` of the current (or last) ``fit``.
        worker: this process's :class:`pyhooks.distribute.Worker` under a strategy, else None.
    """

    worker = None

    def __init__(self, hooks, global_step=None, hook_state=None):
        super().__init__()
        self._hook_state = hook_state  # one of ``hooks``: its listener goes to the savers
        self.hooks = check_hooks(hooks)
        using = hooks_by_method(self.hooks)
        self._begin_hooks = using["begin"]
        self._after_create_hooks = using["after_create_session"]
        self._end_hooks = using["end"]
        self._error_hooks = using["after_error"]
        self._hooked = HookedStep(self.hooks, name=("model.fit", "batch"))
        self._global_step = global_step
        self.session = None
        self._active = False
        self._guard = None
        self._first_batch = 0
        self._per_call = 1  # model.compile(steps_per_execution=): the most batches per call
        self._iterations = self._done = None  # then: the optimizer's, and its value
        self._request = None  # the batch's, from the hooks' before_run
        self._run = None  # this fit's RunInfo (its steps known at the first epoch)

    # -- lifetime
    def on_train_begin(self, logs=None):
        import tensorflow as tf

        model = self.model
        step = self._global_step if self._global_step is not None else model.optimizer.iterations
        if not isinstance(step, tf.Variable):
            step = getattr(step, "value", step)  # a Keras variable's tf.Variable
        own_step = {} if self._global_step is None else {"global_step": step}
        graph = StepGraph(step, kind="keras", checkpoint=lambda: tf.train.Checkpoint(
            model=model, optimizer=model.optimizer, **own_step))
        self.session = None  # as in a graph: after_error gets no session while begin() runs
        session = KerasSession(graph)
        self._hooked.new_session()
        self._active = True
        self._per_call = _steps_per_execution(model)
        self._iterations = model.optimizer.iterations if self._per_call > 1 else None
        self._done = None if self._iterations is None else int(self._iterations.numpy())
        state = self._hook_state
        self._run = RunInfo(mode="train", steps_per_run=self._per_call,
                            saving_listeners=() if state is None else [state.listener])
        self._install_guard(model)
        coord = Coordinator()
        try:
            with backend_scope(graph), worker_scope(self.worker), self._run:
                for hook in self._begin_hooks:
                    call(hook, "begin")
            self.session = session
            for hook in self._after_create_hooks:
                call(hook, "after_create_session", session, coord)
        except BaseException as error:
            self._fail(error)
            raise
        if coord.should_stop():
            model.stop_training = True

    def on_epoch_begin(self, epoch, logs=None):
        batches = (self.params or {}).get("steps")
        run = self._run
        if run is not None and run.steps is None and batches:  # the first epoch: initial_epoch
            run.steps = (self.params["epochs"] - epoch) * batches

    def on_train_batch_begin(self, batch, logs=None):
        self._first_batch = batch
        if not self._hooked.active:
            return
        context = SessionRunContext(_CALLER_ARGS, self.session)
        try:
            self._request = self._hooked.before(context, None, fetch_only=_FETCH_ONLY)
        except BaseException as error:
            self._fail(error)
            raise

    def on_train_batch_end(self, batch, logs=None):
        session, request = self.session, self._request
        session.last_outputs = logs = logs if logs is not None else {}
        before = session.step
        if self._iterations is None:
            reached = before + batch - self._first_batch + 1
        else:  # Keras' `batch` is the call's first + N - 1, also for a last call making fewer
            done = int(self._iterations.numpy())
            reached, self._done = before + done - self._done, done
        if not self._hooked.active:
            session.step = reached
            return
        try:
            try:
                values = session.evaluate(request.plan.flat, logs, before)
            except BaseException as error:
                self._hooked.failed(request, error, session)
                raise
            session.step = reached
            self._hooked.after(request, values, new_run_options(), new_run_metadata())
        except BaseException as error:
            self._fail(error)
            raise
        if request.context.stop_requested:
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if not self._active:
            return
        self._active = False
        self._remove_guard()
        call_end(self._end_hooks, self.session)

    def _fail(self, error):
        """``after_error`` on every hook, once per ``fit``; the error propagates."""
        if not self._active:
            return
        self._active = False
        self._remove_guard()
        call_after_error(self._error_hooks, self.session, error)

    # -- the train-function guard
    def _install_guard(self, model):
        function = model.train_function
        if isinstance(function, _TrainFunctionGuard):  # left by a fit that failed elsewhere
            function = function.function
        self._guard = _TrainFunctionGuard(function, self)
        model.train_function = self._guard

    def _remove_guard(self):
        guard, self._guard = self._guard, None
        model = self.model
        if guard is not None and model is not None and model.train_function is guard:
            model.train_function = guard.function

    # -- context manager: after_error for errors outside the train step and the hooks
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and not is_end_of_input(exc_type):
            self._fail(exc)
        return False
