"""``import pyhooks`` as a user does it: in a fresh process, from another directory."""

import subprocess
import sys

HEAVY = ("tensorflow", "rpy2", "tensorboard", "keras")


def run_fresh(code, tmp_path):
    """Runs ``code`` in a new Python process started in ``tmp_path``; returns its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_subpackages_are_attributes_without_importing_tensorflow(tmp_path):
    code = (
        "import sys, pyhooks\n"
        "data = pyhooks.estimators.load_mtcars()\n"
        "print(len(data['mpg']), callable(pyhooks.r.r_hook), callable(pyhooks.hooks.History))\n"
        "print(pyhooks.estimators.feature_columns(pyhooks.estimators.column_numeric('drat')))\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    lines = run_fresh(code, tmp_path).splitlines()
    assert lines[0] == "32 True True"
    assert "drat" in lines[1]
    assert lines[-1] == "[]"


def test_dir_lists_the_subpackages(tmp_path):
    out = run_fresh("import pyhooks; print(sorted(set(dir(pyhooks)) & {'estimators', 'hooks', "
                    "'r', 'eager', 'keras', 'distribute', 'train'}))", tmp_path)
    assert out.strip() == "['distribute', 'eager', 'estimators', 'hooks', 'keras', 'r', 'train']"


def test_distribute_is_an_attribute_as_the_vignette_uses_it(tmp_path):
    code = ("import sys, pyhooks\n"
            "print(pyhooks.distribute.ScheduledSteps.__name__, "
            "pyhooks.distribute.StopAgreementHook.__name__)\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    lines = run_fresh(code, tmp_path).splitlines()
    assert lines == ["ScheduledSteps StopAgreementHook", "[]"]


def test_star_import_gives_the_public_api_without_subpackages(tmp_path):
    out = run_fresh("from pyhooks import *; print('MonitoredSession' in dir(), "
                    "'estimators' in dir())", tmp_path)
    assert out.strip() == "True False"


def test_unknown_attribute_is_an_attribute_error(tmp_path):
    out = run_fresh("import pyhooks\ntry:\n    pyhooks.estimatorz\n"
                    "except AttributeError as e:\n    print(e)", tmp_path)
    assert out.strip() == "module 'pyhooks' has no attribute 'estimatorz'"


def test_early_stopping_names_from_pyhooks_and_pyhooks_hooks_without_tensorflow(tmp_path):
    names = ["EarlyStoppingHook", "make_early_stopping_hook", "stop_if_higher_hook",
             "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
    code = ("import sys, pyhooks, pyhooks.hooks\n"
            f"names = {names!r}\n"
            "print(all(n in pyhooks.__all__ and n in pyhooks.hooks.__all__ for n in names))\n"
            "print(all(getattr(pyhooks, n) is getattr(pyhooks.hooks, n) for n in names))\n"
            "print(callable(pyhooks.hooks.read_eval_metrics), 'tensorflow' in sys.modules)\n")
    assert run_fresh(code, tmp_path).split() == ["True", "True", "True", "False"]
