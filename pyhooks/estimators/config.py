"""``run_config()``: where and how an estimator runs (``tf.estimator.RunConfig``'s fields that apply)."""

from __future__ import annotations

from pyhooks.distribute import check_agreement_every
from pyhooks.estimators.distributed import check_strategy
from pyhooks.timer import check_positive

__all__ = ["RunConfig", "run_config"]

DEFAULT_CHECKPOINT_SECS = 600  # tf.estimator's, when neither frequency is given


class RunConfig:
    """Where and how an estimator runs (tf.estimator's ``RunConfig``, the fields that apply).

    Attributes:
        model_dir: the model directory, or None.
        tf_random_seed: the graph-level random seed, or None.
        session_config: a ``tf.compat.v1.ConfigProto``, or None.
        save_summary_steps: write the graph's summaries (the training loss and a
            ``model_fn``'s own) to TensorBoard event files in ``model_dir`` every this
            many steps (None or 0: none while training).
        log_step_count_steps: write ``global_step/sec`` (steps per second since the
            last write) to the same event files every this many steps (None or 0: never).
        save_checkpoints_steps: while training, save a checkpoint every this many
            steps (not with ``save_checkpoints_secs``).
        save_checkpoints_secs: while training, save a checkpoint every this many
            seconds. With neither given, every 600 seconds (``tf.estimator``'s
            default). Besides these, ``train()`` saves when it ends, however it ends
            (its steps done, the input exhausted, a hook's stop, an error, Ctrl-C),
            and the next ``train()`` resumes from there; after a loss that is not
            finite it keeps the last good step (see ``Estimator.train``).
        keep_checkpoint_max: checkpoints kept in ``model_dir``.
        keep_checkpoint_every_n_hours: also keep one checkpoint every this many
            hours of training, beyond ``keep_checkpoint_max`` (TensorFlow's Saver
            does it; the default, 10000, keeps none).
        train_distribute: a ``tf.distribute`` strategy ``train()`` runs under
            (``MirroredStrategy``, ``MultiWorkerMirroredStrategy``,
            ``OneDeviceStrategy``), or None; see :mod:`pyhooks.estimators.distributed`.
        steps_per_execution: training steps run inside one session call (a loop in
            the graph, as Keras' ``steps_per_execution``): less Python and session
            overhead per step. Hooks run once per call and see its last step's
            values; pyhooks' hooks count the steps a call runs
            (``pyhooks.RunInfo.steps_per_run``), so checkpoints, step rates and
            history rows come at the first call that reaches their step, and
            ``train(steps=)`` stops at its exact step (the last call runs fewer).
            Not with ``train_distribute``.
        agree_every_n_steps: with ``train_distribute`` over several workers, how
            often they agree on stopping (a hook's stop request on one worker ends
            every worker's ``train()`` after the same step; a request waits for the
            next agreement): every this many steps, or ``"auto"`` (steps chosen from
            measured times for about 2% of a step spent agreeing, at most 1 s apart,
            ``train()``'s own last step agreed at that step), or None: no agreement,
            each worker stops on its own (only when every stop comes at the same step
            on every worker, as ``train(steps=)``'s own; a stop on one worker alone
            leaves the others waiting for it); see
            :class:`pyhooks.distribute.StopAgreementHook`.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, session_config=None,
                 save_summary_steps=100, log_step_count_steps=100, keep_checkpoint_max=5,
                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                 train_distribute=None, steps_per_execution=1, agree_every_n_steps="auto",
                 keep_checkpoint_every_n_hours=10000):
        if model_dir is not None and not isinstance(model_dir, str):
            raise TypeError(f"`model_dir` must be a directory path or None, got {model_dir!r}.")
        self.model_dir = model_dir
        self.tf_random_seed = check_positive("tf_random_seed", tf_random_seed, integer=True,
                                             allow_zero=True)
        self.session_config = check_session_config(session_config)
        self.save_summary_steps = check_positive("save_summary_steps", save_summary_steps,
                                                 integer=True, allow_zero=True)
        self.log_step_count_steps = check_positive("log_step_count_steps", log_step_count_steps,
                                                   integer=True, allow_zero=True)
        self.keep_checkpoint_max = check_positive("keep_checkpoint_max", keep_checkpoint_max,
                                                  integer=True, allow_none=False)
        if self.keep_checkpoint_max > 2**31 - 1:  # TensorFlow's Saver keeps an int32
            raise ValueError(f"`keep_checkpoint_max` must be at most 2147483647, got "
                             f"{keep_checkpoint_max!r}.")
        self.keep_checkpoint_every_n_hours = check_positive(
            "keep_checkpoint_every_n_hours", keep_checkpoint_every_n_hours, integer=False,
            allow_none=False)
        self.save_checkpoints_steps = check_positive("save_checkpoints_steps",
                                                     save_checkpoints_steps, integer=True)
        self.save_checkpoints_secs = check_positive("save_checkpoints_secs",
                                                    save_checkpoints_secs, integer=False)
        if self.save_checkpoints_steps is not None and self.save_checkpoints_secs is not None:
            raise ValueError("Give at most one of `save_checkpoints_steps` "
                             f"({save_checkpoints_steps!r}) and `save_checkpoints_secs` "
                             f"({save_checkpoints_secs!r}).")

        self.train_distribute = check_strategy(train_distribute)
        self.steps_per_execution = check_positive("steps_per_execution", steps_per_execution,
                                                  integer=True, allow_none=False)
        if self.steps_per_execution > 2**31 - 1:
            raise ValueError(f"`steps_per_execution` must be at most 2147483647, got "
                             f"{steps_per_execution!r}.")
        if self.steps_per_execution > 1 and self.train_distribute is not None:
            raise ValueError(f"`steps_per_execution` = {steps_per_execution!r} cannot be used with "
                             "`train_distribute` (give 1).")
        self.agree_every_n_steps = check_agreement_every(agree_every_n_steps, allow_none=True)

    def checkpoint_frequency(self):
        """``{"save_steps": n}`` or ``{"save_secs": s}``: how often ``train()`` saves."""
        if self.save_checkpoints_steps is not None:
            return {"save_steps": self.save_checkpoints_steps}
        return {"save_secs": self.save_checkpoints_secs or DEFAULT_CHECKPOINT_SECS}

    def __repr__(self):
        return (f"RunConfig(model_dir={self.model_dir!r}, tf_random_seed={self.tf_random_seed!r}, "
                f"save_summary_steps={self.save_summary_steps!r}, "
                f"log_step_count_steps={self.log_step_count_steps!r}, "
                f"save_checkpoints_steps={self.save_checkpoints_steps!r}, "
                f"save_checkpoints_secs={self.save_checkpoints_secs!r}, "
                f"keep_checkpoint_max={self.keep_checkpoint_max!r}"
                + (f", keep_checkpoint_every_n_hours={self.keep_checkpoint_every_n_hours!r}"
                   if self.keep_checkpoint_every_n_hours != 10000 else "")
                + (f", steps_per_execution={self.steps_per_execution!r}"
                   if self.steps_per_execution != 1 else "")
                + (f", train_distribute={type(self.train_distribute).__name__}"
                   if self.train_distribute is not None else "")
                + (f", agree_every_n_steps={self.agree_every_n_steps!r}"
                   if self.agree_every_n_steps != "auto" else "") + ")")


def check_session_config(value):
    """``value`` if it is None or a ``tf.compat.v1.ConfigProto``; else a TypeError naming it."""
    if value is not None and type(value).__name__ != "ConfigProto":
        raise TypeError(f"`session_config` must be a tf.compat.v1.ConfigProto or None, got "
                        f"{value!r} ({type(value).__name__}).")
    return value


def run_config(model_dir=None, tf_random_seed=None, session_config=None, save_summary_steps=100,
               log_step_count_steps=100, keep_checkpoint_max=5, save_checkpoints_steps=None,
               save_checkpoints_secs=None, train_distribute=None, steps_per_execution=1,
               agree_every_n_steps="auto", keep_checkpoint_every_n_hours=10000):
    """A :class:`RunConfig`, for the ``config`` argument of the estimators."""
    return RunConfig(model_dir, tf_random_seed, session_config, save_summary_steps,
                     log_step_count_steps, keep_checkpoint_max, save_checkpoints_steps,
                     save_checkpoints_secs, train_distribute, steps_per_execution,
                     agree_every_n_steps, keep_checkpoint_every_n_hours)
