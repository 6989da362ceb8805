"""TensorFlow's own hook tests, run against pyhooks: how many of the public-behaviour ones pass.

Takes the paths of TensorFlow's ``basic_session_run_hooks_test.py`` and
``monitored_session_test.py`` (from TensorFlow's repository: they are not in the
pip package; never commit them). In a temporary directory it rewrites their
imports of TensorFlow's hook modules to small modules that hand out pyhooks'
classes (``basic_session_run_hooks`` -> pyhooks' hooks and timers,
``session_run_hook`` -> pyhooks' contract, ``monitored_session`` -> pyhooks'
runners beside TensorFlow's ``Scaffold`` and session creators, which pyhooks
takes as they are), changes nothing else, and runs them with pytest.

``monitored_session._HookedSession(sess, hooks)`` is TensorFlow's harness for
hook tests: it runs ``before_run``/``after_run`` of the given hooks around an
existing session and calls nothing else (the tests call ``begin()``,
``after_create_session()`` and ``end()`` themselves, or not). Here it is
pyhooks' ``MonitoredSession`` on that session, the hooks seen through a view
that has only those two methods. TensorFlow's test utilities that the pip
package lacks (``fake_summary_writer``, contrib's ``util_test`` and
``get_or_create_global_step`` in older copies of the files) are written here, and
two TensorFlow names that 2.21 keeps in other modules (``variables.VariableV1``,
``ops.Tensor``) are put back where the files look for them, in both runs.

Each test is classified from its code (and that of the helpers and
module-level classes it uses):

* ``steps_per_run``: it calls ``_set_steps_per_run`` (TensorFlow's private
  protocol for several steps per session call);
* ``private``: it reaches another private name of the code under test
  (``mon_sess._should_stop``, ``monitored_session._WrappedSession``,
  ``session._coordinated_creator``...); private names of TensorFlow's own
  modules (``training_util._increment_global_step``) and of the test's fakes
  do not count;
* ``public``: the rest.

The same files also run against TensorFlow itself (``--no-baseline`` skips
that): a public test that fails there fails for a reason that is not pyhooks'
(an API TensorFlow 2.21 no longer has), and is listed apart.

Run: ``.venv/bin/python bench/probe_tf_tests.py PATH/basic_session_run_hooks_test.py
PATH/monitored_session_test.py`` (80 s here; ``-v`` lists every test).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (module, name) imported by the test files -> the module of the temporary package
REDIRECTS = {
    ("tensorflow.python.training", "basic_session_run_hooks"): "basic_session_run_hooks",
    ("tensorflow.python.training", "monitored_session"): "monitored_session",
    ("tensorflow.python.training", "session_run_hook"): "session_run_hook",
}
# TensorFlow test utilities missing from the pip package -> written here (both runs)
UTILITIES = {
    ("tensorflow.python.summary.writer", "fake_summary_writer"): "fake_summary_writer",
    ("tensorflow.contrib.framework.python.ops", "variables"): "contrib_variables",
    ("tensorflow.contrib.testing.python.framework", "util_test"): "contrib_util_test",
}
HARNESS = {"_HookedSession"}       # TensorFlow's hook-test harness, given pyhooks' runner
FAKES = {"_added_run_metadata"}    # the fake summary writer's record (test infrastructure)

SHIMS = {
    "basic_session_run_hooks": """
        from pyhooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook,
                             FinalOpsHook, GlobalStepWaiterHook, LoggingTensorHook,
                             NanLossDuringTrainingError, NanTensorHook, NeverTriggerTimer,
                             ProfilerHook, SecondOrStepTimer, StepCounterHook, StopAtStepHook,
                             SummarySaverHook)
        """,
    "session_run_hook": """
        from pyhooks import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
        """,
    "monitored_session": """
        import pyhooks
        from pyhooks import MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession
        from tensorflow.python.training.monitored_session import (
            ChiefSessionCreator, Scaffold, SessionCreator, WorkerSessionCreator)


        class _StepCalls(pyhooks.SessionRunHook):
            # A hook seen through its before_run and after_run only.
            def __init__(self, hook):
                self.hook = hook

            def before_run(self, run_context):
                return self.hook.before_run(run_context)

            def after_run(self, run_context, run_values):
                self.hook.after_run(run_context, run_values)


        class _Given:
            def __init__(self, sess):
                self.sess = sess

            def create_session(self):
                return self.sess


        class _HookedSession:
            # TensorFlow's harness: before_run/after_run around ``sess``, nothing else.
            def __init__(self, sess, hooks):
                self._runner = MonitoredSession(_Given(sess), [_StepCalls(h) for h in hooks])

            def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
                return self._runner.run(fetches, feed_dict=feed_dict, options=options,
                                        run_metadata=run_metadata)

            def should_stop(self):
                return self._runner.should_stop()


        def __getattr__(name):
            # TensorFlow's other private classes (_WrappedSession...): no pyhooks equivalent.
            if not name.startswith("_") or name.startswith("__"):
                raise AttributeError(name)

            class Missing:
                def __init__(self, *args, **kwargs):
                    raise NotImplementedError(f"monitored_session.{name} is TensorFlow's "
                                              "private class; pyhooks has none")

            Missing.__name__ = name
            return Missing
        """,
    "contrib_variables": """
        from tensorflow.python.training.training_util import get_or_create_global_step
        """,
    "contrib_util_test": """
        import glob
        import os

        import tensorflow as tf


        def latest_summaries(logdir):
            # The events with a summary in the newest event file of ``logdir``.
            files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
            newest = max(files, key=os.path.getmtime)
            return [e for e in tf.compat.v1.train.summary_iterator(newest)
                    if e.HasField("summary")]
        """,
    "fake_summary_writer": """
        from tensorflow.core.framework import summary_pb2
        from tensorflow.python.framework import test_util
        from tensorflow.python.summary.writer import writer, writer_cache


        class FakeSummaryWriter:
            # Keeps what is written, by step; install() makes FileWriterCache hand it out.
            _real = None

            @classmethod
            def install(cls):
                if cls._real is not None:
                    raise ValueError("FakeSummaryWriter is installed already.")
                cls._real = writer.FileWriter
                writer.FileWriter = writer_cache.FileWriter = cls

            @classmethod
            def uninstall(cls):
                if cls._real is None:
                    raise ValueError("FakeSummaryWriter is not installed.")
                writer.FileWriter = writer_cache.FileWriter = cls._real
                cls._real = None

            def __init__(self, logdir, graph=None):
                self._logdir, self._graph = logdir, graph
                self._summaries, self._graphs, self._meta_graphs = {}, [], []
                self._session_logs, self._added_run_metadata = [], {}

            @property
            def summaries(self):
                return self._summaries

            def add_summary(self, summ, current_global_step):
                if isinstance(summ, bytes):
                    summ = summary_pb2.Summary.FromString(summ)
                self._summaries.setdefault(current_global_step, []).append(summ)

            def add_graph(self, graph, global_step=None, graph_def=None):
                if graph_def is not None or (global_step is not None and global_step < 0):
                    raise ValueError("add_graph: unexpected graph_def or step")
                self._graphs.append(graph)

            def add_meta_graph(self, meta_graph_def, global_step=None):
                if global_step is not None and global_step < 0:
                    raise ValueError("add_meta_graph: negative step")
                self._meta_graphs.append(meta_graph_def)

            def add_session_log(self, session_log, global_step=None):
                self._session_logs.append(session_log)

            def add_run_metadata(self, run_metadata, tag, global_step=None):
                if global_step is not None and global_step < 0:
                    raise ValueError("add_run_metadata: negative step")
                self._added_run_metadata[tag] = run_metadata

            def flush(self):
                pass

            reopen = close = flush

            def assert_summaries(self, test_case, expected_logdir=None, expected_graph=None,
                                 expected_summaries=None, expected_added_graphs=None,
                                 expected_added_meta_graphs=None, expected_session_logs=None):
                if expected_logdir is not None:
                    test_case.assertEqual(expected_logdir, self._logdir)
                if expected_graph is not None:
                    test_case.assertIs(expected_graph, self._graph)
                for step, values in (expected_summaries or {}).items():
                    test_case.assertIn(step, self._summaries)
                    seen = {v.tag: v.simple_value for s in self._summaries[step]
                            for v in s.value if v.tag != "global_step/sec"}
                    test_case.assertEqual(values, seen)
                if expected_added_graphs is not None:
                    test_case.assertEqual(expected_added_graphs, self._graphs)
                if expected_added_meta_graphs is not None:
                    test_case.assertEqual(len(expected_added_meta_graphs),
                                          len(self._meta_graphs))
                    for want, got in zip(expected_added_meta_graphs, self._meta_graphs):
                        test_util.assert_meta_graph_protos_equal(test_case, want, got)
                if expected_session_logs is not None:
                    test_case.assertEqual(expected_session_logs, self._session_logs)
        """,
}

IMPORT = re.compile(r"^from ([\w.]+) import (\w+)(?: as (\w+))?\s*$")


# --------------------------------------------------------------------------- rewriting
def rewrite(source, package, redirect):
    """``source`` with the imports of REDIRECTS (if ``redirect``) and UTILITIES replaced."""
    table = {**UTILITIES, **(REDIRECTS if redirect else {})}
    lines, done = [], set()
    for line in source.splitlines():
        match = IMPORT.match(line)
        key = match and (match.group(1), match.group(2))
        if key in table:
            lines.append(f"from {package} import {table[key]} as {match.group(3) or key[1]}")
            done.add(key)
        else:
            lines.append(line)
    return "\n".join(lines) + "\n", done


# Threads the tests leave running (CoordinatedSessionTest's) would keep pytest from exiting.
# TensorFlow names that newer copies of the files use from modules where 2.21 no longer
# has them (``variables.VariableV1``, ``ops.Tensor``) are put back where the files look.
CONFTEST = """
import os
import sys

from tensorflow.python.framework import ops, tensor
from tensorflow.python.ops import variable_v1, variables

for module, name, value in ((variables, "VariableV1", variable_v1.VariableV1),
                            (ops, "Tensor", tensor.Tensor)):
    if not hasattr(module, name):
        setattr(module, name, value)


def pytest_unconfigure(config):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
"""


def write_package(directory, package):
    with open(os.path.join(directory, "conftest.py"), "w") as f:
        f.write(CONFTEST)
    os.makedirs(os.path.join(directory, package))
    open(os.path.join(directory, package, "__init__.py"), "w").close()
    for name, code in SHIMS.items():
        with open(os.path.join(directory, package, name + ".py"), "w") as f:
            f.write(textwrap.dedent(code).lstrip())


# --------------------------------------------------------------------------- classification
class _Names(ast.NodeVisitor):
    """Private attributes a piece of code reaches, and the names and self-methods it uses."""

    def __init__(self, tf_modules):
        self.tf_modules, self.private, self.names, self.methods = tf_modules, set(), set(), set()

    def visit_Attribute(self, node):
        receiver = node.value
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            self.methods.add(node.attr)
        elif node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(receiver, ast.Name) and receiver.id in self.tf_modules):
                self.private.add(node.attr)
        self.generic_visit(node)

    def visit_Name(self, node):
        self.names.add(node.id)


def classify(source):
    """``{(class, test): (kind, sorted private names)}`` for every test method."""
    tree = ast.parse(source)
    tf_modules = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorflow"):
            for alias in node.names:
                if (node.module, alias.name) not in REDIRECTS:
                    tf_modules.add(alias.asname or alias.name)
    top = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}

    def scan(node):
        names = _Names(tf_modules)
        names.visit(node)
        return names

    def reach(node, methods, seen):
        """Private names reached by ``node``, following self-methods and module-level code."""
        found = scan(node)
        private = set(found.private)
        for base in getattr(node, "bases", []):  # a module-level class's own bases
            private |= scan(base).private
        for name in found.names & set(top):
            if name not in seen:
                seen.add(name)
                private |= reach(top[name], {}, seen)
        for name in found.methods & set(methods):
            if name not in seen:
                seen.add(name)
                private |= reach(methods[name], methods, seen)
        return private

    tests = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        setup = [methods[m] for m in ("setUp", "tearDown") if m in methods]
        for name, method in methods.items():
            if not name.startswith("test"):
                continue
            private = reach(method, methods, {name})
            for fixture in setup:
                private |= reach(fixture, methods, {fixture.name})
            private -= HARNESS | FAKES
            kind = ("steps_per_run" if "_set_steps_per_run" in private else
                    "private" if private else "public")
            tests[(cls.name, name)] = (kind, sorted(private))
    return tests


# --------------------------------------------------------------------------- running
def run_pytest(directory, files, label):
    report = os.path.join(directory, f"{label}.xml")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=directory)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-o", "addopts=", "-W", "ignore::DeprecationWarning",
                    f"--junitxml={report}", f"--rootdir={directory}", *files],
                   cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {}
    for case in ET.parse(report).iter("testcase"):
        outcome, why = "pass", ""
        for child in case:
            if child.tag in ("failure", "error"):
                lines = (child.get("message") or child.tag).strip().splitlines()
                outcome, why = "fail", lines[0][:110]
                break
            if child.tag == "skipped":
                outcome = "skip"
        module = case.get("classname", "").split(".")
        results[(module[0], module[-1], case.get("name"))] = (outcome, why)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="TensorFlow's test files")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every test")
    parser.add_argument("--no-baseline", action="store_true",
                        help="do not run the files against TensorFlow itself")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    options = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="probe_tf_tests_")
    runs = {"pyhooks": ("pyhooks_as_tf", True)}
    if not options.no_baseline:
        runs["tensorflow"] = ("tf_utilities", False)
    tests, files = {}, {label: [] for label in runs}
    for path in options.files:
        with open(path) as f:
            source = f.read()
        module = os.path.splitext(os.path.basename(path))[0]
        for (cls, name), kind in classify(source).items():
            tests[(module, cls, name)] = kind
        for label, (package, redirect) in runs.items():
            text, done = rewrite(source, package, redirect)
            missing = [k for k in REDIRECTS if redirect and k not in done and k[1] in source]
            if missing:
                sys.exit(f"{path}: imports not found to redirect: {missing}")
            os.makedirs(os.path.join(directory, label), exist_ok=True)
            target = os.path.join(directory, label, module + ".py")
            with open(target, "w") as f:
                f.write(text)
            files[label].append(target)
    results = {}
    for label, (package, _) in runs.items():
        write_package(os.path.join(directory, label), package)
        results[label] = run_pytest(os.path.join(directory, label), files[label], label)

    def outcome(label, key):
        return results[label].get(key, ("missing", "not collected"))

    rows = {}
    for key, (kind, private) in sorted(tests.items()):
        mine, why = outcome("pyhooks", key)
        theirs = outcome("tensorflow", key)[0] if "tensorflow" in results else None
        rows[key] = (kind, private, mine, why, theirs)
        if options.verbose:
            extra = f"  [{', '.join(private)}]" if private else ""
            base = f"  (TF: {theirs})" if theirs else ""
            print(f"{mine:7} {kind:13} {key[0]}.{key[1]}.{key[2]}{extra}{base}"
                  + (f"\n          {why}" if mine != "pass" else ""))
    print()
    print("| test file | public | public, pass | private | private, pass | "
          "steps_per_run | steps_per_run, pass |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    totals = {}
    for module in sorted({k[0] for k in rows}):
        cells = []
        for kind in ("public", "private", "steps_per_run"):
            mine = [r for k, r in rows.items() if k[0] == module and r[0] == kind]
            passed = sum(r[2] == "pass" for r in mine)
            cells += [str(len(mine)), str(passed)]
            total = totals.setdefault(kind, [0, 0])
            total[0] += len(mine)
            total[1] += passed
        print(f"| {module} | " + " | ".join(cells) + " |")
    print("| all | " + " | ".join(f"{t[0]} | {t[1]}" for t in totals.values()) + " |")
    public = [(k, r) for k, r in rows.items() if r[0] == "public"]
    failing = [(k, r) for k, r in public if r[2] != "pass"]
    print(f"\nTF's public-behaviour tests: {totals['public'][1]}/{totals['public'][0]} pass "
          "under pyhooks")
    if "tensorflow" in results:
        broken = [k for k, r in public if r[4] != "pass"]
        print(f"  of which {len(broken)} fail against TensorFlow 2.21 itself too")
    for key, row in failing:
        print(f"  FAIL {key[1]}.{key[2]}: {row[3]}"
              + (f" (TensorFlow itself: {row[4]})" if row[4] else ""))
    if options.keep:
        print(f"\nkept: {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
