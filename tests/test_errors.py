"""pyhooks' exceptions and warnings: one public place, one documented line each."""

import builtins
import inspect

import pyhooks
from pyhooks import errors


def public_classes():
    return [getattr(errors, name) for name in errors.__all__
            if inspect.isclass(getattr(errors, name))]


def test_every_error_class_is_importable_from_pyhooks_errors_and_pyhooks():
    names = {cls.__name__ for cls in public_classes()}
    assert {"CheckpointError", "DiskWriteError", "ModelDirLockedError", "HookSetupError",
            "GlobalStepWaitTimeout", "NanLossDuringTrainingError", "PyhooksError",
            "NanLossWarning", "PyhooksWarning"} <= names
    for cls in public_classes():
        assert cls.__module__ == "pyhooks.errors"
        if issubclass(cls, Exception):
            assert getattr(pyhooks, cls.__name__) is cls
            assert cls.__name__ in pyhooks.__all__


def test_the_classes_the_hooks_raise_are_the_public_ones():
    from pyhooks.hooks import _model_dir, global_step_waiter, nan_tensor

    assert _model_dir.CheckpointError is errors.CheckpointError
    assert _model_dir.ModelDirLockedError is errors.ModelDirLockedError
    assert _model_dir.DiskWriteError is errors.DiskWriteError
    assert global_step_waiter.GlobalStepWaitTimeout is errors.GlobalStepWaitTimeout
    assert nan_tensor.NanLossWarning is errors.NanLossWarning


def test_each_error_is_a_pyhooks_error_and_a_builtin_type_a_caller_would_catch():
    for cls in public_classes():
        if cls is errors.PyhooksError or issubclass(cls, Warning):
            continue
        assert issubclass(cls, errors.PyhooksError), cls
        builtin = [base for base in cls.__mro__[1:]
                   if getattr(builtins, base.__name__, None) is base and base is not Exception]
        assert builtin, f"{cls.__name__} derives from no builtin type but Exception"


def test_the_module_docstring_has_one_line_for_each_class():
    lines = errors.__doc__.splitlines()
    for cls in public_classes():
        mine = [line for line in lines if line.startswith(f"* :class:`{cls.__name__}`: ")]
        assert len(mine) == 1, cls.__name__
