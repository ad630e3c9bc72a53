"""``fit(progress=True)``'s bar (issue 45): a text bar in a terminal, tqdm's one-line notebook widget for a person
at a notebook, and nothing in a notebook executed unattended (``jupyter nbconvert --execute``, Jupyter Book).

The notebook tests start a real Jupyter kernel: nbclient runs a notebook as nbconvert and Jupyter Book do,
and a client that allows input stands for a person at JupyterLab, Notebook, VS Code or Colab.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import damlite
from damlite.training import progress_bar

ROOT = Path(__file__).resolve().parents[1]

FIT = """
import warnings; warnings.simplefilter("ignore")  # the tiny fit's ConvergenceWarning is not under test
import numpy as np, damlite
P = np.random.default_rng(0).choice([-1.0, 1.0], (4, 16))
dam = damlite.DenseAssociativeMemory(8, n=3, epochs=3, backend="numpy", random_state=0).fit(P, progress=True)
print("fitted", dam.loss_curve_.shape)
"""


@pytest.fixture
def kernel_env(monkeypatch):
    """The kernel imports this checkout's damlite, quietly (no compile line), with warnings left to the test."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("DAMLITE_QUIET", "1")


def _outputs_text(outputs):
    """Every output of a cell as text, widget views and their plain-text stand-ins included."""
    parts = []
    for out in outputs:
        parts.append(out.get("text", ""))
        parts.extend(str(v) for v in out.get("data", {}).values())
    return "\n".join(parts)


@pytest.mark.slow
def test_a_notebook_executed_unattended_shows_no_bar(kernel_env):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FIT)])
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3").execute()  # what nbconvert --execute runs
    outputs = nb.cells[0].outputs
    text = _outputs_text(outputs)
    assert "fitted (3,)" in text
    assert "training" not in text and "epoch" not in text and "it/s" not in text, text
    assert not any(o.get("name") == "stderr" for o in outputs), outputs
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs), outputs


@pytest.mark.slow
def test_a_person_at_a_notebook_gets_the_one_line_widget(kernel_env):
    pytest.importorskip("ipywidgets")
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive(FIT, allow_stdin=True, timeout=600,
                               output_hook=(messages := []).append)  # a frontend that can answer input()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    kinds = [(m["msg_type"], m["content"]) for m in messages]
    streams = "".join(c.get("text", "") for t, c in kinds if t == "stream")
    views = [c for t, c in kinds if t == "display_data" and "application/vnd.jupyter.widget-view+json" in c["data"]]
    assert "fitted (3,)" in streams
    assert "training" not in streams, streams  # no text bar beside the widget
    assert len(views) == 1, kinds  # one widget, updated in place: not a line per update
    assert "training" in views[0]["data"].get("text/plain", ""), views[0]


def test_outside_a_kernel_the_bar_is_text_on_stderr(capsys):
    for _ in progress_bar(range(3), progress=True, desc="training"):
        pass
    assert "training" in capsys.readouterr().err
    for _ in progress_bar(range(3), progress=False, desc="training"):
        pass
    assert capsys.readouterr().err == ""


class _Kernel:
    def __init__(self, allow_stdin):
        self.allow_stdin = allow_stdin

    def get_parent(self):
        return {"content": {"allow_stdin": self.allow_stdin}}


@pytest.mark.parametrize("allow_stdin", [False, True])
def test_the_rule_reads_the_running_cells_request(monkeypatch, capsys, allow_stdin):
    """Without a real kernel: the cell's ``allow_stdin`` decides (no bar for unattended runs)."""
    import IPython
    import tqdm.notebook  # noqa: F401 - loaded before the stubs below (ipywidgets asks the kernel at import)

    import damlite.training as training

    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel") or type(sys)("ipykernel"))
    shell = type("Shell", (), {"kernel": _Kernel(allow_stdin)})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.setattr("tqdm.notebook.IProgress", None)  # no widgets: the text bar stands in
    bar = training.progress_bar(range(2), progress=True, desc="training")
    assert bar.disable is (not allow_stdin)
    list(bar)
    bar.close()
    assert ("training" in capsys.readouterr().err) is allow_stdin
    assert damlite.training.progress_bar is progress_bar
