"""pyhooks: TensorFlow's SessionRunHook training-loop hooks for current TensorFlow, from Python and R.

``import pyhooks`` is cheap: it never imports TensorFlow, rpy2 or TensorBoard.
Built-in hooks, estimators and the subpackages (``pyhooks.estimators``,
``pyhooks.hooks``, ``pyhooks.distribute``, ``pyhooks.r``, ``pyhooks.eager``,
``pyhooks.keras``) load on first attribute access, e.g.
``pyhooks.estimators.load_mtcars()`` or ``pyhooks.distribute.ScheduledSteps``
right after ``import pyhooks``.
"""

from __future__ import annotations

import importlib

from pyhooks import _logging  # noqa: F401 - pyhooks' log records reach TensorFlow's logger too
from pyhooks import _secrets
from pyhooks.errors import (CheckpointError, DiskWriteError, GlobalStepWaitTimeout, HookSetupError,
                            ModelDirLockedError, NanLossDuringTrainingError, NanLossWarning,
                            PyhooksError, PyhooksWarning)
from pyhooks.hook import (RunInfo, SessionRunArgs, SessionRunContext, SessionRunHook,
                          SessionRunValues, run_info)
from pyhooks.session import MonitoredSession, SingularMonitoredSession
from pyhooks.training_session import MonitoredTrainingSession
from pyhooks.timer import NeverTriggerTimer, SecondOrStepTimer

_secrets.remove_stale_directories()  # GCS credentials a killed process left (ConfigureGcsHook)

_LAZY = {
    # hooks
    "BlockCacheParams": "pyhooks.hooks",
    "CheckpointSaverHook": "pyhooks.hooks",
    "CheckpointSaverListener": "pyhooks.hooks",
    "ConfigureGcsHook": "pyhooks.hooks",
    "EarlyStoppingHook": "pyhooks.hooks",
    "FeedFnHook": "pyhooks.hooks",
    "FinalOpsHook": "pyhooks.hooks",
    "GlobalStepWaiterHook": "pyhooks.hooks",
    "HistorySaverHook": "pyhooks.hooks",
    "LambdaHook": "pyhooks.hooks",
    "LoggingTensorHook": "pyhooks.hooks",
    "NanTensorHook": "pyhooks.hooks",
    "ProfilerHook": "pyhooks.hooks",
    "ProgressBarHook": "pyhooks.hooks",
    "StepCounterHook": "pyhooks.hooks",
    "StopAtStepHook": "pyhooks.hooks",
    "SummarySaverHook": "pyhooks.hooks",
    "make_early_stopping_hook": "pyhooks.hooks",
    "stop_if_higher_hook": "pyhooks.hooks",
    "stop_if_lower_hook": "pyhooks.hooks",
    "stop_if_no_decrease_hook": "pyhooks.hooks",
    "stop_if_no_increase_hook": "pyhooks.hooks",
    # estimators
    "column_bucketized": "pyhooks.estimators",
    "column_categorical_with_hash_bucket": "pyhooks.estimators",
    "column_categorical_with_identity": "pyhooks.estimators",
    "column_categorical_weighted": "pyhooks.estimators",
    "column_categorical_with_vocabulary_file": "pyhooks.estimators",
    "column_categorical_with_vocabulary_list": "pyhooks.estimators",
    "column_crossed": "pyhooks.estimators",
    "column_embedding": "pyhooks.estimators",
    "column_indicator": "pyhooks.estimators",
    "column_numeric": "pyhooks.estimators",
    "dnn_classifier": "pyhooks.estimators",
    "dnn_linear_combined_classifier": "pyhooks.estimators",
    "dnn_linear_combined_regressor": "pyhooks.estimators",
    "dnn_regressor": "pyhooks.estimators",
    "estimator": "pyhooks.estimators",
    "estimator_spec": "pyhooks.estimators",
    "eval_spec": "pyhooks.estimators",
    "evaluate": "pyhooks.estimators",
    "feature_columns": "pyhooks.estimators",
    "input_fn": "pyhooks.estimators",
    "input_layer": "pyhooks.estimators",
    "linear_classifier": "pyhooks.estimators",
    "linear_regressor": "pyhooks.estimators",
    "mode_keys": "pyhooks.estimators",
    "numpy_input_fn": "pyhooks.estimators",
    "predict": "pyhooks.estimators",
    "run_config": "pyhooks.estimators",
    "train": "pyhooks.estimators",
    "train_and_evaluate": "pyhooks.estimators",
    "train_spec": "pyhooks.estimators",
    # TensorBoard on a model_dir, in a child process
    "start_tensorboard": "pyhooks.estimators.tensorboard",
    "stop_tensorboard": "pyhooks.estimators.tensorboard",
    # TF2: eager training loops and Keras model.fit
    "EagerSessionCreator": "pyhooks.eager",
    "keras_callback": "pyhooks.keras",
}

# Subpackages and modules reached as attributes (``pyhooks.estimators``); not
# in ``__all__``, so that ``from pyhooks import *`` does not load them all.
_SUBMODULES = frozenset({"distribute", "eager", "estimators", "hooks", "keras", "r"})

__all__ = sorted([
    "CheckpointError",
    "DiskWriteError",
    "GlobalStepWaitTimeout",
    "HookSetupError",
    "ModelDirLockedError",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "NanLossDuringTrainingError",
    "NanLossWarning",
    "NeverTriggerTimer",
    "PyhooksError",
    "PyhooksWarning",
    "RunInfo",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "SingularMonitoredSession",
    "run_info",
    *_LAZY,
])


def _version():
    from importlib import metadata  # slow (~40 ms): only when asked

    try:
        return metadata.version("pyhooks")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0.0.0"


def __getattr__(name):
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"pyhooks.{name}")  # the import sets the attribute
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pyhooks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*__all__, *_SUBMODULES})
