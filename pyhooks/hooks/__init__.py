"""pyhooks' built-in hooks, one per module; this package only re-exports them.

Modules load on first use so that importing one hook does not import the others
(and their dependencies).
"""

from __future__ import annotations

import importlib

_MODULES = {
    "BlockCacheParams": "configure_gcs",
    "CheckpointSaverHook": "checkpoint_saver",
    "CheckpointSaverListener": "checkpoint_saver",
    "ConfigureGcsHook": "configure_gcs",
    "EarlyStoppingHook": "early_stopping",
    "FeedFnHook": "feed_fn",
    "FinalOpsHook": "final_ops",
    "GlobalStepWaiterHook": "global_step_waiter",
    "History": "history_saver",
    "HistorySaverHook": "history_saver",
    "LambdaHook": "lambda_hook",
    "LoggingTensorHook": "logging_tensor",
    "NanTensorHook": "nan_tensor",
    "ProfilerHook": "profiler",
    "ProgressBarHook": "progress_bar",
    "StepCounterHook": "step_counter",
    "StopAtStepHook": "stop_at_step",
    "SummarySaverHook": "summary_saver",
    "make_early_stopping_hook": "early_stopping",
    "read_eval_metrics": "_eval_metrics",
    "stop_if_higher_hook": "early_stopping",
    "stop_if_lower_hook": "early_stopping",
    "stop_if_no_decrease_hook": "early_stopping",
    "stop_if_no_increase_hook": "early_stopping",
}

__all__ = sorted(_MODULES)


def __getattr__(name):
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'pyhooks.hooks' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pyhooks.hooks.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
