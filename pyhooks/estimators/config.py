"""``run_config()``: where and how an estimator runs (``tf.estimator.RunConfig``'s fields that apply)."""

from __future__ import annotations

from pyhooks.timer import check_positive

__all__ = ["RunConfig", "run_config"]


class RunConfig:
    """Where and how an estimator runs (tf.estimator's ``RunConfig``, the fields that apply).

    Attributes:
        model_dir: the model directory, or None.
        tf_random_seed: the graph-level random seed, or None.
        session_config: a ``tf.compat.v1.ConfigProto``, or None.
        save_summary_steps: write the graph's summaries (the training loss) and
            ``global_step/sec`` to TensorBoard event files in ``model_dir`` every this
            many steps (None or 0: no event files while training).
        log_step_count_steps: accepted for compatibility (``global_step/sec`` is
            written with the summaries; nothing is logged).
        keep_checkpoint_max: checkpoints kept in ``model_dir``.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, session_config=None,
                 save_summary_steps=100, log_step_count_steps=100, keep_checkpoint_max=5):
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

    def __repr__(self):
        return (f"RunConfig(model_dir={self.model_dir!r}, tf_random_seed={self.tf_random_seed!r}, "
                f"save_summary_steps={self.save_summary_steps!r}, "
                f"log_step_count_steps={self.log_step_count_steps!r}, "
                f"keep_checkpoint_max={self.keep_checkpoint_max!r})")


def check_session_config(value):
    """``value`` if it is None or a ``tf.compat.v1.ConfigProto``; else a TypeError naming it."""
    if value is not None and type(value).__name__ != "ConfigProto":
        raise TypeError(f"`session_config` must be a tf.compat.v1.ConfigProto or None, got "
                        f"{value!r} ({type(value).__name__}).")
    return value


def run_config(model_dir=None, tf_random_seed=None, session_config=None, save_summary_steps=100,
               log_step_count_steps=100, keep_checkpoint_max=5):
    """A :class:`RunConfig`, for the ``config`` argument of the estimators."""
    return RunConfig(model_dir, tf_random_seed, session_config, save_summary_steps,
                     log_step_count_steps, keep_checkpoint_max)
