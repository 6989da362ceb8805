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
Its read gives the step the batch reaches minus one, so that hooks' "fetched
value + 1" is the step reached also with ``steps_per_execution`` > 1 (with one
step per batch, that is the value before the batch, as in a graph).

``after_error`` is called when a hook raises, when the train step raises
(``model.train_function`` is wrapped for the duration of ``fit``) and, if the
callback is used as a context manager around ``fit``, for any other error::

    with pyhooks.keras_callback(hooks) as callback:
        model.fit(x, y, callbacks=[callback])

Keras looks at ``stop_training`` only after a batch: a stop requested in
``after_create_session`` (``StopAtStepHook`` already at its step) ends ``fit``
after one batch.

A ``ProgressBarHook`` whose ``total`` is None gets, for this ``fit`` only, the
number of batches ``fit`` will run when Keras knows it (``epochs`` minus
``initial_epoch``, times the batches of an epoch), as ``train()`` gives it
the number of steps.
"""

from __future__ import annotations

from functools import partial

try:
    import keras
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError("pyhooks.keras_callback needs Keras 3 with TensorFlow: "
                      "pip install tensorflow keras") from error

from pyhooks._plans import PlanCache
from pyhooks.eager import StepGraph, _compile_leaves, _Evaluator, _has_output
from pyhooks.errors import add_hook_note
from pyhooks.hook import SessionRunArgs, check_hooks, context_class, hooks_by_method
from pyhooks.hooks._common import backend_scope
from pyhooks.hooks.progress_bar import ProgressBarHook
from pyhooks.session import (FETCH_ERRORS, FusedKept, _call, _Coordinator, _generate, _indent,
                              _is_end_of_input, _names, after_run_caller, before_run_caller,
                              call_after_error, fusable, fused_calls, fused_key,
                              note_fetch_owner)

__all__ = ["HooksCallback", "KerasSession", "keras_callback"]

_CALLER_ARGS = SessionRunArgs(None)


def keras_callback(hooks, global_step=None):
    """A ``keras.callbacks.Callback`` running pyhooks ``hooks`` inside ``model.fit``.

    Args:
        hooks: a list of :class:`pyhooks.SessionRunHook` (one hook alone is a list of it).
        global_step: a variable to use as the global step; default the model's
            ``optimizer.iterations``.

    Returns:
        a :class:`HooksCallback` (also a context manager, see the module docstring).

    Example:
        >>> history = pyhooks.HistorySaverHook(every_n_step=10)
        >>> model.fit(x, y, epochs=2, callbacks=[pyhooks.keras_callback([history])])
        >>> history.history
    """
    return HooksCallback(hooks, global_step)


class KerasSession(_Evaluator):
    """The "session" hooks see inside ``model.fit``: reads only; Keras runs the batches."""

    _where = "model.fit's batch"

    def __init__(self, graph):
        self.graph = graph
        self.step = int(graph.global_step.numpy())  # mirror: the global step now

    def run(self, fetches=None, feed_dict=None, options=None, run_metadata=None):
        """Reads variables and the global step; a batch cannot be run from here."""
        if fetches is None or _has_output(fetches):
            raise RuntimeError("Inside model.fit Keras runs the batches: a hook cannot run one "
                               "with session.run(); ask for outputs (the batch's logs, e.g. "
                               "'loss') in before_run() instead.")
        return self._evaluate(fetches, {}, self.step)

    def pyhooks_read(self, fetches):
        """Values of ``fetches``: variables, and the last batch's logs."""
        return self._evaluate(fetches, self._outputs or {}, self.step)

    def close(self):
        pass


class _TrainFunctionGuard:
    """Stands for ``model.train_function`` during ``fit`` so errors of the step reach the hooks."""

    def __init__(self, function, callback):
        self.function = function
        self.callback = callback

    def __call__(self, *args, **kwargs):
        try:
            return self.function(*args, **kwargs)
        except BaseException as error:
            if not _is_end_of_input(type(error)):  # end of input: Keras ends the epoch
                self.callback._fail(error)  # noqa: SLF001
            raise


class HooksCallback(keras.callbacks.Callback):
    """Runs pyhooks hooks in ``model.fit``; made by :func:`keras_callback`.

    Attributes:
        session: the :class:`KerasSession` of the current (or last) ``fit``.
    """

    def __init__(self, hooks, global_step=None):
        super().__init__()
        self.hooks = check_hooks(hooks)
        using = hooks_by_method(self.hooks)
        self._begin_hooks = using["begin"]
        self._after_create_hooks = using["after_create_session"]
        self._before_hooks = using["before_run"]
        self._after_hooks = using["after_run"]
        self._end_hooks = using["end"]
        self._error_hooks = using["after_error"]
        self._global_step = global_step
        self.session = None
        self._active = False
        self._guard = None
        self._context = None
        self._first_batch = 0
        self._plans = PlanCache(self._before_hooks, self._after_hooks)  # a batch's fetches
        self._call_before = before_run_caller(self._before_hooks)
        self._call_after = after_run_caller(self._after_hooks)
        self._plan = None
        self._asked = ()  # the general path's last args_list
        self._step_hooks = bool(self._before_hooks or self._after_hooks)
        self._fusable = fusable(self._before_hooks, self._after_hooks)
        self._fused_made = FusedKept()  # batch methods made for a plan: see _fuse
        self._bars = [hook for hook in self.hooks if isinstance(hook, ProgressBarHook)]
        self._to_fill = self._filled = []  # bars given a total for one fit: see on_epoch_begin

    # -- lifetime
    def on_train_begin(self, logs=None):
        import tensorflow as tf

        model = self.model
        step = self._global_step if self._global_step is not None else model.optimizer.iterations
        if not isinstance(step, tf.Variable):
            step = getattr(step, "value", step)  # a Keras variable's tf.Variable
        graph = StepGraph(step, kind="keras")
        self.session = None  # as in a graph: after_error gets no session while begin() runs
        session = KerasSession(graph)
        self._make_context = context_class(_CALLER_ARGS, session)  # a context per batch, cheaply
        self._plans.clear()  # their evaluators belong to the last fit's session
        self._unfuse()
        self._fused_made.clear()
        self._active = True
        self._to_fill = [bar for bar in self._bars if bar.total is None]
        self._install_guard(model)
        coord = _Coordinator()
        try:
            with backend_scope(graph):
                for hook in self._begin_hooks:
                    _call(hook, "begin")
            self.session = session
            for hook in self._after_create_hooks:
                _call(hook, "after_create_session", session, coord)
        except BaseException as error:
            self._fail(error)
            raise
        if coord.should_stop():
            model.stop_training = True

    def on_epoch_begin(self, epoch, logs=None):
        to_fill, self._to_fill = self._to_fill, []
        batches = (self.params or {}).get("steps")
        if to_fill and batches:  # the first epoch of this fit is initial_epoch
            per_run = getattr(self.model, "steps_per_execution", 1) or 1
            total = (self.params["epochs"] - epoch) * -(-batches // per_run)
            for bar in to_fill:
                bar.total = total
            self._filled = to_fill

    def _unfill(self):
        """The bars given a total by this fit get None back (after their end()/after_error())."""
        filled, self._to_fill, self._filled = self._filled, [], []
        for bar in filled:
            bar.total = None

    def on_train_batch_begin(self, batch, logs=None):
        self._first_batch = batch
        if not self._step_hooks:
            return
        self._context = context = self._make_context()
        context._stop_requested = False
        try:
            args_list = self._call_before(context)
        except BaseException as error:
            self._fail(error)
            raise
        self._planned_batch(context, args_list)

    def _planned_batch(self, context, args_list):
        """The rest of ``on_train_batch_begin`` once the hooks gave ``args_list``: the plan.

        Hooks that ask the same batch after batch (the same args objects, or
        new args alike; found twice in a row) get their batches fused
        (:meth:`_fuse`) from the next one on.
        """
        try:
            self._asked = args_list  # for note_fetch_owner at the batch's end
            self._plan = plan = (self._plans.get(None, args_list) or
                                 self._fetches_only(args_list))
            if self._plans.stable and self._fusable:
                self._fuse(self._fused_made.get(
                    fused_key(None, plan, args_list), lambda: self._fused_pair(plan, args_list)))
        except BaseException as error:
            self._fail(error)
            raise

    def _fuse(self, pair):
        """Installs ``pair``, the batch methods made for one plan (see :meth:`_fused_pair`).

        They are set on the instance (a subclass that overrides a batch method
        is left as it is); :meth:`_unfuse` removes them.
        """
        cls = type(self)
        if (cls.on_train_batch_begin is HooksCallback.on_train_batch_begin
                and cls.on_train_batch_end is HooksCallback.on_train_batch_end):
            self.on_train_batch_begin, self.on_train_batch_end = pair

    def _unfuse(self):
        for name in ("on_train_batch_begin", "on_train_batch_end"):
            try:
                delattr(self, name)  # the instance's, if fused: the class's methods again
            except AttributeError:
                pass

    def _fused_pair(self, plan, args_list):
        """``(on_train_batch_begin, on_train_batch_end)`` made for ``plan`` and ``args_list``.

        As the runner's fused step (:meth:`pyhooks.MonitoredSession._fuse`):
        the begin calls every ``before_run`` and, if one asked something other
        than ``args_list`` does, hands the batch to :meth:`_planned_batch`;
        the end takes the values from the logs, moves the session's step on
        and calls every ``after_run`` with the plan's constant picks (a batch
        that was not fused goes to the class's ``on_train_batch_end``).
        """
        session = self.session
        source = None if plan.direct else session._values_source(  # noqa: SLF001
            _compile_leaves(plan.flat))[1:]
        before, check, value_lines, _, after, names = fused_calls(
            self._before_hooks, self._after_hooks, plan, args_list, source)
        mark = object()  # this pair's batches
        names.update(callback=self, session=session, Context=self._make_context, MARK=mark,
                     general_end=partial(HooksCallback.on_train_batch_end, self))
        begin = ["def on_train_batch_begin(batch, logs=None):",
                 "    callback._first_batch = batch",
                 "    callback._context = context = Context()",
                 "    context._stop_requested = False",
                 "    try:", *_indent(before, 2),
                 "    except BaseException as error:",
                 "        callback._fail(error)",
                 "        raise",
                 f"    if {check}:  # not this plan's batch",
                 "        return callback._planned_batch(",
                 f"            context, [{_names('r', len(self._before_hooks))}])",
                 "    callback._plan = MARK"]
        end = ["def on_train_batch_end(batch, logs=None):",
               "    if callback._plan is not MARK:",
               "        return general_end(batch, logs)",
               "    if logs is None:",
               "        logs = {}",
               "    session._outputs = outputs = logs",
               "    step_before = session.step + batch - callback._first_batch",
               "    context = callback._context",
               "    try:", *_indent(value_lines, 2),
               "        session.step = step_before + 1", *_indent(after, 2),
               "    except BaseException as error:",
               "        callback._fail(error)",
               "        raise",
               "    if context._stop_requested:",
               "        callback.model.stop_training = True"]
        return (_generate(begin, "on_train_batch_begin", names),
                _generate(end, "on_train_batch_end", names))

    def _fetches_only(self, args_list):
        """The plan of hooks' args that carry feeds or options: empty ones are ignored.

        The stripped args are new objects at every batch; the cache finds their
        plan by the identity of the fetches, so its values function is kept.
        """
        stripped = []
        for hook, args in zip(self._before_hooks, args_list):
            if args is not None and (args.feed_dict or (
                    args.options is not None and args.options.ByteSize())):
                error = ValueError("feed_dict and RunOptions have no meaning in model.fit; "
                                   "a hook can only fetch.")
                add_hook_note(error, hook, "before_run")
                raise error
            stripped.append(None if args is None else SessionRunArgs(args.fetches))
        return self._plans.get(None, stripped)

    def on_train_batch_end(self, batch, logs=None):
        session, context, plan = self.session, self._context, self._plan
        session._outputs = logs = logs if logs is not None else {}  # noqa: SLF001
        reached = session.step + batch - self._first_batch + 1  # steps_per_execution > 1: more
        if not self._step_hooks:
            session.step = reached
            return
        try:
            values = ()
            if not plan.direct:
                if plan.call is None:
                    plan.call = session._values_function(  # noqa: SLF001
                        _compile_leaves(plan.flat))
                values = plan.call(logs, reached - 1)
            session.step = reached
            self._call_after(plan.after_picks, values, context)
        except BaseException as error:
            if isinstance(error, FETCH_ERRORS):
                note_fetch_owner(error, session, self.hooks, self._before_hooks, self._asked)
            self._fail(error)
            raise
        if context._stop_requested:  # noqa: SLF001
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if not self._active:
            return
        self._active = False
        self._unfuse()
        self._remove_guard()
        try:
            for hook in self._end_hooks:
                _call(hook, "end", self.session)
        finally:
            self._unfill()

    def _fail(self, error):
        """``after_error`` on every hook, once per ``fit``; the error propagates."""
        if not self._active:
            return
        self._active = False
        self._unfuse()
        self._remove_guard()
        try:
            call_after_error(self._error_hooks, self.session, error)
        finally:
            self._unfill()

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
        if exc is not None and not _is_end_of_input(exc_type):
            self._fail(exc)
        return False
