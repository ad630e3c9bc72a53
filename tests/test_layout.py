"""The package's layout: no import circle inside damlite, and the arrows between its parts go one way.

Read from the source (``ast``), nothing imported: every ``import`` and ``from ... import`` statement
of every module, at the top or inside a function, relative or absolute. ``from P import m`` of a
submodule m counts as an import of m alone (P, a parent package, Python imports first whatever
the module says); a name taken from a package's ``__init__`` (``from .. import __version__``)
counts as an import of that package. Imports by a name
in a string (``importlib.import_module``: the lazy attributes of ``damlite``, the task registry of
:mod:`damlite.sweeps.blocks`) are not statements and are not counted.

The parts, bottom to top: the base (``damlite.backend``, ``damlite.interactions``: the array library
and F, F'); the kernels (``damlite.kernels``); the model a student imports (the other modules at the
top of ``damlite/``); the sweep engine (``damlite.sweeps``); the paper's analysis (``damlite.paper``);
the book's figures and glue (``damlite.book``); the command line (``damlite.__main__``) over all of
them. Each part imports only its own modules and the parts below it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import damlite

PACKAGE = Path(damlite.__file__).resolve().parent

#: The model's modules that the kernels build on: the array backend and the interactions (F and F').
BASE = {"damlite.backend", "damlite.interactions", "damlite._version"}

#: What each part may import (its own part included).
ALLOWED = {
    "base": {"base"},
    "kernels": {"kernels", "base"},
    "model": {"model", "kernels", "base"},
    "sweeps": {"sweeps", "model", "kernels", "base"},
    "paper": {"paper", "sweeps", "model", "kernels", "base"},
    "book": {"book", "paper", "sweeps", "model", "kernels", "base"},
    "cli": {"cli", "book", "paper", "sweeps", "model", "kernels", "base"},
}


def _modules():
    """{dotted name: path} of every module and package of damlite."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("damlite",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph():
    """{module: {damlite module it imports: first line that does}}."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = {}

        def add(target, line, name=name, edges=edges):
            if target != name:
                edges.setdefault(target, line)

        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    for k in range(len(parts), 0, -1):  # the deepest module of damlite the name names
                        if ".".join(parts[:k]) in modules:
                            add(".".join(parts[:k]), node.lineno)
                            break
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != "damlite":
                    continue
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    if sub in modules:  # a submodule: the import is of it
                        add(sub, node.lineno)
                    elif source in modules:
                        add(source, node.lineno)
        graph[name] = edges
    return graph


def _part(module):
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("kernels", "sweeps", "paper", "book"):
        return parts[1]
    if module in BASE:
        return "base"
    return "cli" if module == "damlite.__main__" else "model"


def _reach(graph, start):
    seen, todo = set(), list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def _cycle(graph):
    """One import circle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_the_reader_sees_every_import_of_the_kernels():
    """The reader itself: relative, absolute, function-level and package imports are all found."""
    graph = _graph()
    assert {"damlite.kernels.cpu_kernels", "damlite.kernels.gpu_kernels"} <= set(graph["damlite.network"])
    assert "damlite.kernels.cpu_fit" in graph["damlite.training"]  # inside a function
    assert "damlite.kernels._scalar" in graph["damlite.kernels._cpu_numba"]  # from . import _scalar
    assert "damlite.sweeps.experiments" in graph["damlite.book.plots._sweeps"]  # absolute, inside a function
    assert "damlite" in graph["damlite.sweeps.experiments"]  # from .. import __version__


def test_no_import_circle_inside_damlite():
    graph = _graph()
    cycle = _cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(
        f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_the_arrows_go_one_way():
    """Each part imports only itself and the parts below it: the model never imports the sweeps, the
    paper or the book's helpers; the sweeps never the paper; nothing but the command line imports them all."""
    graph = _graph()
    wrong = [f"{a} ({_part(a)}) imports {b} ({_part(b)}), line {line}"
             for a, edges in graph.items() for b, line in edges.items()
             if _part(b) not in ALLOWED[_part(a)]]
    assert not wrong, "\n".join(wrong)


def test_the_kernels_reach_only_the_backend_and_the_interactions_of_the_model():
    graph = _graph()
    kernels = [m for m in graph if _part(m) == "kernels"]
    assert len(kernels) >= 8  # the package and its seven modules
    for module in kernels:
        reach = {b for b in _reach(graph, module) if _part(b) not in ("kernels", "base")}
        assert not reach, f"{module} reaches {sorted(reach)}"


def test_the_model_reaches_nothing_above_it():
    """Not even through another module: the estimator's imports stay inside the model and the kernels."""
    graph = _graph()
    for module in graph:
        if _part(module) == "model":
            above = {b for b in _reach(graph, module) if _part(b) not in ("model", "kernels", "base")}
            assert not above, f"{module} reaches {sorted(above)}"


_IMPORTS = """
import runpy, sys
sys.argv = ["damlite", "--help"]
try:
    runpy.run_module("damlite", run_name="__main__")
except SystemExit:
    pass
import damlite.classification, damlite.sweeps.experiments, damlite.training
print("BEFORE", "sklearn" in sys.modules)
assert "DenseAssociativeMemory" in dir(damlite) and "equivalent_temperature" in dir(damlite)
from damlite import ConvergenceWarning, DenseAssociativeMemory
from damlite.classification import equivalent_temperature
assert damlite.model.DenseAssociativeMemory is DenseAssociativeMemory  # the submodule, as before
print("AFTER", "sklearn" in sys.modules, DenseAssociativeMemory.__module__, equivalent_temperature is damlite.equivalent_temperature)
"""


def test_scikit_learn_is_imported_with_the_estimator_only():
    """``import damlite``, the command line, the sweep engine and training import scikit-learn (~1.3 s) only when the
    estimator's names are used: ``python -m damlite --help`` took 2.4 s with it, ~1 s without."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "DAMLITE_QUIET": "1"}
    out = subprocess.run([sys.executable, "-c", _IMPORTS], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("BEFORE", "AFTER")))
    assert lines["BEFORE"] == "False"
    assert lines["AFTER"] == "True damlite.model True"
