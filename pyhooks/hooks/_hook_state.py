"""Hook state that resumes with the model: the ``state_dict()`` / ``load_state_dict()`` protocol.

A hook that defines both ``state_dict()`` (returns JSON-serialisable data) and
``load_state_dict(state)`` has its state saved beside every checkpoint an
estimator's ``train()`` writes into its model_dir, as ``hooks-<step>.json``
next to the checkpoint of that step (``model.ckpt-<step>``, or whatever base
name the saver uses: a state belongs to a checkpoint the directory's
``checkpoint`` index lists; written atomically; removed when the saver removes
that checkpoint). A later ``train()`` that resumes from that checkpoint after
an interrupted call (killed, Ctrl-C, an error) gives each hook its state back
with ``load_state_dict()``, after every hook's ``begin()`` and before the
first step. A call that ends normally removes the files: the next call starts
with fresh hook state, as hooks always did.

Without an estimator the same holds for a loop with a ``CheckpointSaverHook``
among its hooks (the first one's ``checkpoint_dir`` gets the files): a
:class:`pyhooks.MonitoredSession` on the eager backend
(:class:`pyhooks.EagerSessionCreator`), ``model.fit`` with
:func:`pyhooks.keras_callback`, and a chief's
:func:`pyhooks.MonitoredTrainingSession` with a ``checkpoint_dir`` (whose own
``StepCounterHook`` keeps state). The state of a save is written as in an
estimator (just before it and at the end of its step), and after the save the
saver makes when the loop fails or is interrupted; a loop that starts at the
step of a listed checkpoint with a state file (the user restored that
checkpoint, as a script does before its loop) loads it when its session is
created, after the other hooks' ``after_create_session()``; a loop that ends
normally removes the files.
Only the chief writes and loads them.

Keys (what ties a saved state to a hook of the next process): the hook's
``state_key`` attribute when it is a non-empty string, else
``<name>-<n>``, the n-th hook of that name (its ``hook_name``, else its class
name; ``session_run_hook()`` for R hooks; counted from 1, in the
order of the loop's hooks: the caller's, then those the estimator adds)
without a ``state_key``. Two hooks of one key are an error, never a mix of
states. A saved state whose key no hook of the new call has is left unused.

Example:
    >>> class CountSteps(SessionRunHook):
    ...     def begin(self):
    ...         self.steps = 0
    ...     def after_run(self, run_context, run_values):
    ...         self.steps += 1
    ...     def state_dict(self):
    ...         return {"steps": self.steps}
    ...     def load_state_dict(self, state):
    ...         self.steps = state["steps"]
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re

from pyhooks.errors import add_hook_note
from pyhooks.hook import _RUN_INFO, RunInfo, SessionRunHook
from pyhooks.hooks._common import global_step_read
from pyhooks.hooks._checkpointing import CheckpointSaverListener, atomic_write_text
from pyhooks.hooks._model_dir import disk_error, listed_checkpoints

__all__ = ["HookState", "checkpoint_steps", "for_loop", "has_state", "listening", "state_keys"]

FORMAT = 1
_FILE = re.compile(r"hooks-(\d+)\.json$")
_STEP = re.compile(r"-(\d+)$")


def has_state(hook):
    """Whether ``hook`` follows the protocol (defines ``state_dict`` and ``load_state_dict``)."""
    return (callable(getattr(hook, "state_dict", None))
            and callable(getattr(hook, "load_state_dict", None)))


def _name(hook):
    return getattr(hook, "hook_name", None) or type(hook).__name__


def state_keys(hooks):
    """``{key: hook}`` of the hooks that keep state, keyed as the module docstring says
    (e.g. ``HistorySaverHook-1``).

    Raises:
        ValueError: two hooks of one key, or a ``state_key`` that is not a string.
    """
    keys, counts, where = {}, {}, {}
    for position, hook in enumerate(hooks):
        if not has_state(hook):
            continue
        given = getattr(hook, "state_key", None)
        if given is not None and (not isinstance(given, str) or not given):
            raise ValueError(f"`state_key` of hooks[{position}] ({_name(hook)}) must be a "
                             f"non-empty string or None, got {given!r}.")
        if given is None:
            name = _name(hook)
            counts[name] = counts.get(name, 0) + 1
            given = f"{name}-{counts[name]}"
        if given in keys:
            raise ValueError(
                f"hooks[{where[given]}] and hooks[{position}] ({_name(hook)}) keep their state "
                f"under one key, {given!r}: give one of them another `state_key`.")
        keys[given], where[given] = hook, position
    return keys


def state_path(model_dir, step):
    return os.path.join(model_dir, f"hooks-{step}.json")


class HookState(SessionRunHook):
    """Saves and restores the state of ``hooks`` in ``model_dir`` (see the module docstring).

    An estimator's ``train()`` puts it last among the loop's hooks (its
    ``begin()`` loads the saved state after every other hook's ``begin()``) and
    gives its ``listener`` to the run's saving listeners. The state is written
    just before each save (so that no checkpoint is ever without one: a process
    killed between the two resumes with that one, which lacks what the hooks did
    after the checkpoint saver in the step of the save, e.g. a history's row of that
    step), then again after a save in ``model_dir``, at the end of that step (in
    this hook's ``after_run``, after every other hook's: a history saver after the
    checkpoint saver has its row of that step), in ``after_create_session`` (a save
    at the session's creation) or in ``end()``. The estimator writes it itself
    after the save that follows a failure (:meth:`save`).

    Without an estimator (``loop=True``: the eager backend, the Keras adapter, see
    :func:`for_loop`) it does the rest itself: the start is the global step when the
    session is created (the checkpoint the user restored), loaded in
    ``after_create_session``; after a failure it writes the state of the save the
    checkpoint saver makes then; a loop that ends normally (``end()``) removes the files.

    Args:
        model_dir: the model's directory.
        hooks: the loop's hooks.
        start: the global step the call starts from (``loop=True``: None).
        write: whether this process writes the files (a chief).
        loop: whether it drives the protocol alone (see above).
    """

    def __init__(self, model_dir, hooks, start=None, write=True, loop=False):
        self._dir = model_dir
        self._keys = state_keys(hooks)
        self._start = start
        self._write = write
        self._loop = loop
        self.loaded = None  # the file this call's hooks resumed from, or None
        self.listener = _Listener(self)
        self._pending = None  # the step of a checkpoint saved in this step: its state is due
        self._read = None  # loop=True: the global step read, until the start is known

    def begin(self):
        self._pending = self.loaded = None
        if not self._keys:
            return
        if self._loop:
            self._start, self._read = None, global_step_read("HookState")
            return
        self._load()

    def _load(self):
        path = state_path(self._dir, self._start)
        if not os.path.exists(path) or self._start not in checkpoint_steps(self._dir):
            return
        with open(path, encoding="utf-8") as stream:
            try:
                saved = json.load(stream)
            except ValueError as error:
                raise ValueError(f"The hooks' state file {path!r} is damaged ({error}): remove "
                                 "it to start the hooks afresh.") from error
        states = saved.get("hooks", {}) if isinstance(saved, dict) else {}
        for key, hook in self._keys.items():
            if key in states:
                try:
                    hook.load_state_dict(states[key])
                except BaseException as error:
                    add_hook_note(error, hook, "load_state_dict")
                    _note(error, f"pyhooks: the state saved under {key!r} in {path}")
                    raise
        self.loaded = path

    def after_create_session(self, session, coord):
        if self._read is not None:  # the first session of a loop: what it resumes from
            self._start, self._read = int(session.run(self._read)), None
            self._load()
        if self._pending is not None:  # saved at the session's creation: before any step
            self._write_pending()

    def after_run(self, run_context, run_values):
        if self._pending is not None:
            self._write_pending()

    def end(self, session):
        if self._loop:
            self._pending = None
            self.finish()
        elif self._pending is not None:
            self._write_pending()

    def after_error(self, session, error):
        if self._loop and self._pending is not None:  # the saver's save after the failure
            self._write_pending()
        self._pending = None  # the estimator saves after a failure, with this state

    def _write_pending(self):
        step, self._pending = self._pending, None
        self.save(step)

    def save(self, step, prune=True):
        """Writes ``hooks-<step>.json`` and (``prune``) removes those of checkpoints no
        longer kept."""
        if not self._keys or not self._write:
            return
        states = {}
        for key, hook in self._keys.items():
            try:
                states[key] = hook.state_dict()
            except BaseException as error:
                add_hook_note(error, hook, "state_dict")
                raise
        try:
            text = json.dumps({"format": FORMAT, "step": int(step), "hooks": states},
                              allow_nan=True)
        except (TypeError, ValueError) as error:
            bad = next(key for key, state in states.items() if not _serialisable(state))
            raise TypeError(f"state_dict() of the hook {bad!r} must return JSON-serialisable "
                            f"data (dicts, lists, strings, numbers, None): {error}") from error
        try:
            atomic_write_text(state_path(self._dir, step), text)
        except OSError as error:  # a full disk, as every other write of a step: one line
            found = disk_error(f"the hooks' state of step {int(step)}", self._dir, error)
            if found is None:
                raise
            raise found from error
        if prune:
            self._prune()

    def finish(self):
        """The call ended normally: the next one starts the hooks afresh."""
        if self._write:
            for path in glob.glob(os.path.join(glob.escape(self._dir), "hooks-*.json")):
                _remove(path)

    def _prune(self):
        kept = checkpoint_steps(self._dir)
        for path in glob.glob(os.path.join(glob.escape(self._dir), "hooks-*.json")):
            found = _FILE.search(os.path.basename(path))
            if found and int(found.group(1)) not in kept:
                _remove(path)


def for_loop(hooks):
    """The :class:`HookState` of a loop without an estimator (``loop=True``), or None.

    There is one when ``hooks`` has a ``CheckpointSaverHook`` (the first one's
    directory holds the files) and a hook that keeps state. The driver runs it
    last among the hooks and gives its ``listener`` to the savers (:func:`listening`).
    """
    from pyhooks.hooks.checkpoint_saver import CheckpointSaverHook

    saver = next((hook for hook in hooks if isinstance(hook, CheckpointSaverHook)), None)
    if saver is None or not state_keys(hooks):
        return None
    return HookState(saver.checkpoint_dir, hooks, loop=True)


@contextlib.contextmanager
def listening(state):
    """``state``'s listener among the saving listeners of the hooks' ``begin()`` (which
    is where a ``CheckpointSaverHook`` reads them); ``state`` None: nothing.

    The driver's :class:`pyhooks.RunInfo`, if one is entered, stays the one hooks keep
    (its fields may be set later): the listener is added to it for the duration only.
    """
    if state is None:
        yield
        return
    outer = _RUN_INFO.get()
    if outer is None:
        with RunInfo(saving_listeners=[state.listener]):
            yield
        return
    kept = outer.saving_listeners
    outer.saving_listeners = (*kept, state.listener)
    try:
        yield
    finally:
        outer.saving_listeners = kept


class _Listener(CheckpointSaverListener):
    """Writes the hooks' state after each save of a checkpoint into the model's directory."""

    def __init__(self, state):
        self._state = state

    def before_save(self, session, global_step_value):
        # before the checkpoint exists (a state file of a save into another directory is
        # pruned as one without its checkpoint); not in a loop's save at its session's
        # creation, before the state it resumes from is loaded (it would replace that)
        if self._state._read is None:  # noqa: SLF001
            self._state.save(global_step_value, prune=False)

    def after_save(self, session, global_step_value):
        if global_step_value in checkpoint_steps(self._state._dir):  # noqa: SLF001 - not another dir's
            self._state._pending = global_step_value  # noqa: SLF001 - written by its after_run


def checkpoint_steps(model_dir):
    """The steps of the checkpoints ``model_dir``'s ``checkpoint`` index lists (any base
    name: ``model.ckpt-5``, ``my.ckpt-5``, a ``CheckpointManager``'s ``ckpt-5``)."""
    steps = set()
    for path in listed_checkpoints(model_dir):
        found = _STEP.search(path)
        if found:
            steps.add(int(found.group(1)))
    return steps


def _serialisable(state):
    try:
        json.dumps(state)
    except (TypeError, ValueError):
        return False
    return True


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _note(error, text):
    try:
        error.add_note(text)
    except (AttributeError, TypeError):
        pass
