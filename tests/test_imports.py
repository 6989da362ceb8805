"""pyhooks' modules import in one direction: no cycle, no layer importing from a higher one.

The import graph is read from the source (``ast``): every ``import`` and ``from
... import`` of a pyhooks module, at module level or inside a function (an
import moved into a function still ties the two modules together). Then each
module is imported alone, in a fresh interpreter.
"""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# The layers, lowest first (DEVELOPING.md: user code -> estimator -> runner -> hooks). A
# module belongs to the first layer naming it or a package holding it; it may import from its
# own layer and the ones below.
LAYERS = [
    ("the contract", ["pyhooks.hook", "pyhooks.errors", "pyhooks.timer", "pyhooks._backend",
                      "pyhooks._logging", "pyhooks._rspelling",
                      "pyhooks._secrets"]),
    ("the built-in hooks", ["pyhooks.hooks"]),
    ("distribution", ["pyhooks.distribute"]),
    ("the runner", ["pyhooks._feeds", "pyhooks._plans", "pyhooks._steps", "pyhooks._outputs",
                    "pyhooks.session", "pyhooks.training_session"]),
    ("the backends", ["pyhooks.eager", "pyhooks.keras"]),
    ("the estimators", ["pyhooks.estimators"]),
    ("the entry points", ["pyhooks", "pyhooks.r"]),
]

def modules():
    """``{module name: path}`` of every module of pyhooks/ (packages by their ``__init__``)."""
    found = {}
    for path in sorted((ROOT / "pyhooks").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name, path, known):
    """The pyhooks modules ``name`` (at ``path``) imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # import pyhooks.a.b.c: the module it names
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph():
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def layer_of(name):
    for level, (_, members) in enumerate(LAYERS):
        for member in members:
            if name == member or (member != "pyhooks" and name.startswith(member + ".")):
                return level
    return None


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_graph_reader_sees_imports_of_every_form(tmp_path):
    (tmp_path / "pyhooks" / "sub").mkdir(parents=True)
    sources = {
        "pyhooks/__init__.py": "",
        "pyhooks/a.py": "import pyhooks.b\n",
        "pyhooks/b.py": "def f():\n    from pyhooks.sub import c\n",
        "pyhooks/sub/__init__.py": "from .c import x\n",
        "pyhooks/sub/c.py": "from pyhooks import a, sub\nfrom . import d\n",
        "pyhooks/sub/d.py": "from ..b import f\nimport os\n",
    }
    for relative, text in sources.items():
        (tmp_path / relative).write_text(text)
    known = {"pyhooks": None, "pyhooks.a": None, "pyhooks.b": None, "pyhooks.sub": None,
             "pyhooks.sub.c": None, "pyhooks.sub.d": None}
    found = {name: imports(name, tmp_path / (name.replace(".", "/") + (
        "/__init__.py" if name in ("pyhooks", "pyhooks.sub") else ".py")), known)
        for name in known}
    assert found == {"pyhooks": set(), "pyhooks.a": {"pyhooks.b"}, "pyhooks.b": {"pyhooks.sub.c"},
                     "pyhooks.sub": {"pyhooks.sub.c"},
                     "pyhooks.sub.c": {"pyhooks.a", "pyhooks.sub", "pyhooks.sub.d"},
                     "pyhooks.sub.d": {"pyhooks.b"}}
    assert cycles(found) == [frozenset({"pyhooks.a", "pyhooks.b", "pyhooks.sub", "pyhooks.sub.c",
                                        "pyhooks.sub.d"})]


def test_every_module_has_a_layer():
    assert [name for name in modules() if layer_of(name) is None] == []


def test_no_module_imports_from_a_higher_layer():
    upward = [f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} "
              f"({LAYERS[layer_of(target)][0]})"
              for name, targets in graph().items() for target in sorted(targets)
              if layer_of(target) > layer_of(name)]
    assert upward == []


def test_no_import_cycle():
    assert [sorted(c) for c in cycles(graph())] == []


def test_the_backend_members_are_read_in_one_module():
    """The optional ``pyhooks_*`` members of creators, sessions and hooks are the protocol
    of pyhooks/_backend.py: no other module looks them up by name."""
    readers = []
    for name, path in modules().items():
        if name == "pyhooks._backend":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant)
                    and str(node.args[1].value).startswith("pyhooks_")):
                readers.append(f"{name}:{node.lineno} {node.args[1].value}")
    assert readers == []


def _import_alone(name):
    return name, subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT,
                                capture_output=True, text=True, timeout=600,
                                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})


def _group(name):
    return next((package for package in ("pyhooks.hooks", "pyhooks.estimators")
                 if name == package or name.startswith(package + ".")), "pyhooks")


@pytest.mark.parametrize("group", ["pyhooks", "pyhooks.hooks", "pyhooks.estimators"])
def test_each_module_imports_alone_in_a_fresh_interpreter(group):
    names = [name for name in modules() if _group(name) == group]
    with ThreadPoolExecutor(2) as pool:
        failed = [f"{name}: {done.stderr.strip().splitlines()[-1]}"
                  for name, done in pool.map(_import_alone, names) if done.returncode]
    assert failed == []
