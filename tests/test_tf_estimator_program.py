"""The python guide's TensorFlow 1.x estimator program: only its imports changed, and it runs."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")

GUIDE = Path(__file__).resolve().parent.parent / "vignettes" / "python_guide.Rmd"


def program():
    """The code of the guide's ``tf-estimator-program`` chunk."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(r"```\{python tf-estimator-program\}\n(.*?)\n```", text, re.S)
    assert found, "python_guide.Rmd has no chunk `tf-estimator-program`"
    return found.group(1)


def test_only_the_imports_differ_from_tensorflow_1():
    lines = program().splitlines()
    mentions = [line for line in lines if "pyhooks" in line]
    assert mentions == ["from pyhooks.estimators import tf1 as tf  # TensorFlow 1.x: "
                        "import tensorflow as tf"]
    # the rest is written against tf.estimator, tf.layers, tf.losses... as in TensorFlow 1.x
    code = "\n".join(lines)
    for name in ("tf.estimator.Estimator(", "tf.estimator.EstimatorSpec(",
                 "tf.estimator.ModeKeys.PREDICT", "tf.estimator.inputs.numpy_input_fn(",
                 "tf.estimator.RunConfig(", "tf.layers.dense(", "tf.train.get_global_step()"):
        assert name in code


def test_the_program_trains_evaluates_and_predicts(tmp_path):
    script = tmp_path / "seeds.py"
    script.write_text(program(), encoding="utf-8")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYHOOKS_PROGRESS="plain")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    accuracy = re.search(r"test accuracy: ([0-9.]+) after 400 steps", done.stdout)
    assert accuracy, done.stdout[-2000:]
    assert float(accuracy.group(1)) > 0.8
    kinds = re.findall(r"seed \[[^]]*\]: kind (\d) \(\d+%\)", done.stdout)
    assert kinds == ["0", "1", "2"]  # the three centres the data were drawn around
