"""Estimators' TensorBoard event files (pyhooks.estimators.tensorboard), read back."""

import glob
import os

import pytest

from pyhooks import SummarySaverHook
from pyhooks.estimators import (
    column_numeric,
    estimator,
    estimator_spec,
    feature_columns,
    input_fn,
    linear_regressor,
    load_mtcars,
    run_config,
)
from pyhooks.estimators.tensorboard import GraphSummaries

tf = pytest.importorskip("tensorflow")
v1 = tf.compat.v1


def read_events(directory):
    from tensorflow.core.util import event_pb2

    rows = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents*"))):
        for record in tf.data.TFRecordDataset(path):
            event = event_pb2.Event.FromString(record.numpy())
            rows += [(event.step, v.tag, v.simple_value) for v in event.summary.value]
    return rows


def test_train_and_evaluate_write_event_files(tmp_path):
    data = load_mtcars()
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_summary_steps=2, log_step_count_steps=2))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=4, num_epochs=None), steps=5)
    rows = read_events(str(tmp_path))
    assert [step for step, tag, _ in rows if tag == "loss"] == [1, 3, 5]
    assert [step for step, tag, _ in rows if tag == "global_step/sec"] == [3, 5]
    assert all(value > 0 for _, tag, value in rows if tag == "global_step/sec")
    metrics = model.evaluate(input_fn(data, ["drat"], "mpg"), name="test")
    evals = {tag: (step, value) for step, tag, value in read_events(str(tmp_path / "eval_test"))}
    assert evals["average_loss"] == (5, pytest.approx(metrics["average_loss"]))
    assert set(evals) == set(metrics) - {"global_step"}


@pytest.mark.parametrize(("summary_steps", "rate_steps", "losses", "rates"), [
    (2, 3, [1, 3, 5, 7], [4, 7]),
    (3, 1, [1, 4, 7], [2, 3, 4, 5, 6, 7]),
    (0, 2, [], [3, 5, 7]),
    (2, 0, [1, 3, 5, 7], []),
])
def test_log_step_count_steps_apart_from_summaries(tmp_path, summary_steps, rate_steps, losses,
                                                   rates):
    data = load_mtcars()
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_summary_steps=summary_steps,
                                               log_step_count_steps=rate_steps))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=4, num_epochs=None), steps=7)
    rows = read_events(str(tmp_path))
    assert [step for step, tag, _ in rows if tag == "loss"] == losses
    assert [step for step, tag, _ in rows if tag == "global_step/sec"] == rates
    assert all(value > 0 for _, tag, value in rows if tag == "global_step/sec")
    # a second call measures its own steps again: a first measurement, then the rates
    model.train(input_fn(data, ["drat"], "mpg", batch_size=4, num_epochs=None), steps=3)
    again = [step for step, tag, _ in read_events(str(tmp_path)) if tag == "global_step/sec"]
    assert again[len(rates):] == ([] if not rate_steps else
                                  [s for s in (9, 10) if (s - 8) % rate_steps == 0])


def test_no_event_files_while_training_when_disabled(tmp_path):
    data = load_mtcars()
    model = linear_regressor(feature_columns(column_numeric("drat")), model_dir=str(tmp_path),
                             config=run_config(save_summary_steps=0, log_step_count_steps=0))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8), steps=2)
    assert read_events(str(tmp_path)) == []


def test_model_fn_summaries_reach_summary_saver(tmp_path):
    def model_fn(features, labels, mode):
        weight = v1.get_variable("w", [], tf.float64, v1.zeros_initializer())
        out = tf.reduce_sum(tf.convert_to_tensor(features), 1) * weight
        loss = v1.losses.mean_squared_error(labels, out)
        v1.summary.scalar("weight", weight)
        train_op = v1.train.GradientDescentOptimizer(0.001).minimize(
            loss, global_step=v1.train.get_global_step())
        return estimator_spec(mode, loss=loss, train_op=train_op)

    data = load_mtcars()
    out = tmp_path / "hook"
    model = estimator(model_fn, model_dir=str(tmp_path / "model"))
    model.train(input_fn(data, ["drat"], "mpg", batch_size=8, num_epochs=None), steps=3,
                hooks=[SummarySaverHook(save_steps=1, output_dir=str(out),
                                        scaffold=GraphSummaries())])
    tags = {(step, tag) for step, tag, _ in read_events(str(out))}
    assert tags == {(s, t) for s in (1, 2, 3) for t in ("loss", "weight")}
