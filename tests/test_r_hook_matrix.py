"""Hooks written in R (pyhooks.r) in every shape, on every backend, against plain TensorFlow.

Backends: a graph ``MonitoredSession``, the eager backend, Keras ``model.fit``. Shapes:
which of ``before_run`` / ``after_run`` the R hook defines, times what its ``before_run``
returns from step to step (:data:`MODES`: ``NULL``, the same ``session_run_args()`` each
step, unnamed, nested, changing). At every step the R hook's ``values$results`` must be
the structure it asked for holding the loss plain TensorFlow gives at that step (a
``tf.compat.v1.Session`` running the same graph, the step function called directly, the
logs Keras hands a plain callback), and the caller's own fetches must be unchanged.

All runs share one child process (R embedded through rpy2 starts once per process).
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from test_r import r_package_installed
from test_runner_matrix import _build, assert_same

STEPS = 6
# What the R hook's before_run returns at step k (1-based), as R code; `NULL` or a call
# of session_run_args() whose fetches name the loss.
MODES = {
    "NULL": "NULL",
    "same named args": 'session_run_args(loss = "loss")',
    "unnamed": 'session_run_args("loss", "loss")',
    "every other step": 'if (k %% 2 == 1) session_run_args(loss = "loss") else NULL',
    "changes every 2 steps": ('if ((k - 1) %/% 2 %% 2 == 0) session_run_args("loss") '
                              'else session_run_args(a = list(b = "loss", c = list("loss")))'),
}
METHOD_SETS = {
    "both": ("before_run", "after_run"),
    "before_run only": ("before_run",),
    "after_run only": ("after_run",),
    "neither": (),
}


def expected_structure(mode, k):
    """The results R should see at step ``k`` for ``mode``, with ``"loss"`` as the leaf and
    ``{"c": [...]}`` for an R vector: reticulate makes a Python list of numbers an R vector
    (of length 1: a number), as it did under tfestimators."""
    return {
        "NULL": None,
        "same named args": {"loss": "loss"},
        "unnamed": {"c": ["loss", "loss"]},  # reticulate: a list of numbers is a vector
        "every other step": {"loss": "loss"} if k % 2 == 1 else None,
        "changes every 2 steps": ("loss" if (k - 1) // 2 % 2 == 0
                                  else {"a": {"b": "loss", "c": "loss"}}),
    }[mode]


def cases():
    for methods, names in METHOD_SETS.items():
        for mode in (MODES if "before_run" in names else ["NULL"]):
            yield methods, mode


R_JSON = r'''r_json <- function(x) {  # R's view of a value, as JSON for Python
  if (is.null(x)) return("null")
  if (is.list(x)) {
    inner <- vapply(x, r_json, "")
    if (is.null(names(x))) return(paste0("[", paste(inner, collapse = ","), "]"))
    return(paste0("{", paste0('"', names(x), '":', inner, collapse = ","), "}"))
  }
  if (is.logical(x) && length(x) == 1L) return(if (x) "true" else "false")
  stopifnot(is.numeric(x), length(x) >= 1L)
  if (length(x) == 1L) return(sprintf("%.17g", x))
  paste0('{"c":[', paste(sprintf("%.17g", x), collapse = ","), "]}")
}
'''


def r_hook_code(methods, mode):
    """An R hook of ``methods`` (plus ``end``) in ``mode``: it keeps each step's results
    (with their names), the number of before_run calls, and whether end ran, in a global
    list that ``end`` hands to Python as JSON (``__main__.r_out``: R code run through
    rpy2 outside r_hook() can crash the process, see pyhooks.r)."""
    names = METHOD_SETS[methods]
    parts = []
    if "before_run" in names:
        parts.append(f"before_run = function(context) {{ k <<- k + 1; {MODES[mode]} }}")
    if "after_run" in names:
        parts.append("after_run = function(context, values) "
                     "seen[[length(seen) + 1L]] <<- list(values$results)")
    parts.append('end = function(session) reticulate::py_set_attr(reticulate::import_main(), '
                 '"r_out", r_json(list(k = k, seen = seen, end = TRUE)))')
    return R_JSON + "k <- 0\nseen <- list()\nsession_run_hook(\n  " + ",\n  ".join(parts) + ")"


SCRIPT = textwrap.dedent(r'''
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf
    import pyhooks, pyhooks.r
    from r_backends import X, Y, Plain, fit, step_fn
    v1 = tf.compat.v1
    cases, steps = json.loads(sys.argv[1]), int(sys.argv[2])

    def graph():
        g = tf.Graph()
        with g.as_default():
            v1.train.get_or_create_global_step()
            w = v1.get_variable("w", initializer=tf.zeros([2, 1]))
            loss = tf.identity(tf.reduce_mean(tf.square(tf.matmul(X, w) - Y)), name="loss")
            train = v1.train.GradientDescentOptimizer(0.01).minimize(
                loss, global_step=v1.train.get_global_step())
        return g, train, loss

    # plain TensorFlow, each backend: the loss at each step
    g, train, loss = graph()
    with g.as_default(), v1.Session(graph=g) as sess:
        sess.run(v1.global_variables_initializer())
        graph_plain = [float(sess.run([train, loss])[1]) for _ in range(steps)]
    step = step_fn()
    eager_plain = [float(step()["loss"]) for _ in range(steps)]
    plain = Plain()
    fit([plain], steps)
    out = {"plain": {"graph": graph_plain, "eager": eager_plain, "keras": plain.losses},
           "runs": {}}

    for backend, methods, mode, code in cases:
        globals().pop("r_out", None)
        hook = pyhooks.r.r_hook(code)
        caller = []
        if backend == "graph":
            g, train, loss = graph()
            with g.as_default(), pyhooks.MonitoredSession(hooks=[hook]) as sess:
                for _ in range(steps):
                    caller.append(float(sess.run([train, loss])[1]))
        elif backend == "eager":
            with pyhooks.MonitoredSession(pyhooks.EagerSessionCreator(step_fn()),
                                          [hook]) as sess:
                for _ in range(steps):
                    caller.append(float(sess.run("loss")))
        else:
            plain = Plain()
            fit([plain, pyhooks.keras_callback([hook])], steps)
            caller = plain.losses
        r_out = json.loads(globals()["r_out"])
        r_out["caller"] = caller
        r_out["methods"] = sorted(hook.pyhooks_methods)
        out["runs"][f"{backend}|{methods}|{mode}"] = r_out
    print("RESULT" + json.dumps(out))
''')

BACKENDS = ("graph", "eager", "keras")


@pytest.fixture(scope="module")
def matrix():
    pytest.importorskip("rpy2")
    if not r_package_installed():
        pytest.skip("R or the R package pyhooks is not installed (make setup installs both)")
    runs = [[backend, methods, mode, r_hook_code(methods, mode)]
            for backend in BACKENDS for methods, mode in cases()]
    env = dict(os.environ, RETICULATE_PYTHON=sys.executable,
               PYTHONPATH=os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(runs), str(STEPS)],
                          capture_output=True, text=True, env=env, timeout=600)
    line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT")), None)
    assert line is not None, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(line[len("RESULT"):])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("methods,mode", list(cases()))
def test_an_r_hook_gets_what_plain_tensorflow_gives(matrix, backend, methods, mode):
    run = matrix["runs"][f"{backend}|{methods}|{mode}"]
    plain = matrix["plain"][backend]
    assert len(plain) == STEPS
    names = METHOD_SETS[methods]
    # only the methods given cross into R (end is given in every case)
    for method in ("before_run", "after_run", "end"):
        assert (method in run["methods"]) == (method in names + ("end",)), method
    assert run["end"] is True
    # before_run ran once per step
    assert run["k"] == (STEPS if "before_run" in names else 0)
    if "after_run" in names:
        assert len(run["seen"]) == STEPS
        for k in range(1, STEPS + 1):
            want = _build(expected_structure(mode, k), {"loss": plain[k - 1]}) \
                if "before_run" in names else None
            # each step's results, wrapped in a list by the hook (NULL stays an element)
            assert_same(run["seen"][k - 1], [want], f"{backend} {methods} {mode} step {k}")
    else:
        assert run["seen"] == []
    # the caller's own values are those of plain TensorFlow
    np.testing.assert_allclose(run["caller"], plain, rtol=1e-6)
