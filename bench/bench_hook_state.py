"""The cost of hook state that resumes with the model (``pyhooks/hooks/_hook_state.py``).

Run: .venv/bin/python bench/bench_hook_state.py

Prints the process CPU time of one ``HookState.save()`` (the JSON of a
50-row ``HistorySaverHook`` and a progress bar, written atomically, then the
files of removed checkpoints pruned: twice per ``train()`` that ends
normally, once per checkpoint otherwise) and of its ``after_run()`` (every
step, nothing due). Medians of 7 rounds.
"""

import os
import statistics
import tempfile
import time

import pyhooks
from pyhooks.hooks._hook_state import HookState


def main():
    where = tempfile.mkdtemp(prefix="pyhooks-bench-state-")
    open(os.path.join(where, "model.ckpt-7.index"), "w").close()
    with open(os.path.join(where, "checkpoint"), "w") as index:  # the saver's index lists it
        index.write('model_checkpoint_path: "model.ckpt-7"\n'
                    'all_model_checkpoint_paths: "model.ckpt-7"\n')
    history = pyhooks.HistorySaverHook(every_n_step=10)
    for step in range(50):
        history.history.append_values((1.5, 12.0, step))
    state = HookState(where, [history, pyhooks.ProgressBarHook()], 7)
    saves, steps = [], []
    for _ in range(7):
        start = time.process_time()
        for _ in range(500):
            state.save(7)
        saves.append((time.process_time() - start) / 500 * 1e6)
        start = time.process_time()
        for _ in range(100_000):
            state.after_run(None, None)
        steps.append((time.process_time() - start) / 100_000 * 1e6)
    print("| what | µs CPU (median of 7) | min | max |")
    print("|---|---|---|---|")
    for name, values in (("save(): 50 rows + a progress bar", saves),
                         ("after_run(), per step", steps)):
        print(f"| {name} | {statistics.median(values):.3g} | {min(values):.3g} | "
              f"{max(values):.3g} |")


if __name__ == "__main__":
    main()
