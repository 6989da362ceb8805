"""SPEC §3 in Python: the R examples of the "Run Hooks" guide, on pyhooks' canned estimators.

Run: ``.venv/bin/python demo/mtcars.py`` (``make demo`` runs the R version,
``demo/mtcars.R``).
"""

import numpy as np

import pyhooks
from pyhooks.estimators import (column_numeric, feature_columns, input_fn, linear_regressor,
                                load_mtcars, train)

mtcars = load_mtcars()
fcs = feature_columns(column_numeric("drat"))
input = input_fn(mtcars, response="mpg", features=["drat", "cyl"], batch_size=8)  # noqa: A001

# lr <- linear_regressor(feature_columns = fcs) %>%
#   train(input_fn = input, steps = 2, hooks = list(hook_progress_bar()))
lr = linear_regressor(feature_columns=fcs)
train(lr, input_fn=input, steps=2, hooks=[pyhooks.ProgressBarHook()])

# training_history <- train(lr, input_fn = input, steps = 4,
#                           hooks = list(hook_history_saver(every_n_step = 2)))
lr = linear_regressor(feature_columns=fcs)
training_history = train(lr, input_fn=input, steps=4,
                         hooks=[pyhooks.HistorySaverHook(every_n_step=2)])
print(training_history)

# A custom hook: the per-example losses of every step, from the graph's "losses" collection.
mean_losses_history = []


class HistorySaverCustom(pyhooks.SessionRunHook):
    def __init__(self, every_n_step):
        self.every_n_step = every_n_step
        self.iter_count = 0

    def before_run(self, run_context):
        graph = run_context.session.graph
        return pyhooks.SessionRunArgs({"losses": graph.get_collection("losses")})

    def after_run(self, run_context, run_values):
        self.iter_count += 1
        print(f"Running step: {self.iter_count}")
        if self.iter_count % self.every_n_step == 0:
            raw_losses = run_values.results["losses"][0]
            mean_losses_history.append(float(np.mean(raw_losses)))


lr = linear_regressor(feature_columns=fcs)
train(lr, input_fn=input, steps=4, hooks=[HistorySaverCustom(every_n_step=1)])
print(np.round(mean_losses_history, 4))
