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
    out = run_fresh("import pyhooks; print(sorted(set(dir(pyhooks)) & "
                    "{'estimators', 'hooks', 'r', 'eager', 'keras', 'train'}))", tmp_path)
    assert out.strip() == "['eager', 'estimators', 'hooks', 'keras', 'r', 'train']"


def test_star_import_gives_the_public_api_without_subpackages(tmp_path):
    out = run_fresh("from pyhooks import *; print('MonitoredSession' in dir(), "
                    "'estimators' in dir())", tmp_path)
    assert out.strip() == "True False"


def test_unknown_attribute_is_an_attribute_error(tmp_path):
    out = run_fresh("import pyhooks\ntry:\n    pyhooks.estimatorz\n"
                    "except AttributeError as e:\n    print(e)", tmp_path)
    assert out.strip() == "module 'pyhooks' has no attribute 'estimatorz'"
