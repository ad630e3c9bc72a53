"""The explorers draw into an Image widget and redraw when a slider moves."""
import numpy as np
import pytest

widgets_lib = pytest.importorskip("ipywidgets")

from damlite.book import widgets  # noqa: E402

PNG = b"\x89PNG"


class _Png:
    """The Image widget's value as bytes (ipywidgets stores a memoryview)."""

    def __init__(self, image):
        self.image = image

    @property
    def value(self):
        return bytes(self.image.value)


def _parts(explorer):
    sliders, image, note = explorer.children
    return sliders.children, _Png(image), note


def test_frontier_explorer_redraws_and_reports_the_frontier():
    sliders, image, note = _parts(widgets.frontier_explorer(N=100, n=10))
    first = image.value
    assert first.startswith(PNG) and "largest safe n" in note.value
    n_slider = next(s for s in sliders if s.description == "n")
    n_slider.value = 40  # past float32's frontier for N = 100 (19)
    assert image.value.startswith(PNG) and image.value != first
    assert "float32: largest safe n =   19  -&gt;  inf" in note.value


def test_recall_and_scaling_explorers_draw():
    sliders, image, _ = _parts(widgets.recall_explorer(N=36, P=4, n=3))
    assert image.value.startswith(PNG)
    rng = np.random.default_rng(0)
    memories = rng.uniform(-1, 1, (5, 20))
    probe = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    sliders, image, _ = _parts(widgets.scaling_explorer(memories, probe, n=10))
    before = image.value
    sliders[0].value = 300
    assert image.value.startswith(PNG) and image.value != before


def test_book_explorers_run_live_only():
    """Without a kernel an explorer is an inert slider over a blank image, so the chapters
    call them in cells tagged ``remove-output`` (the page shows the code, Jupyter and Colab
    run it) and draw the static figure in an ordinary cell."""
    import json
    import re
    from pathlib import Path

    book = Path(__file__).resolve().parents[1] / "book"
    calls = 0
    for path in sorted(book.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            # live explorers only: static_explorer output is plain HTML that works without a kernel
            if cell["cell_type"] == "code" and re.search(r"widgets\.(?!static_)\w+_explorer\(", source):
                calls += 1
                tags = cell["metadata"].get("tags", [])
                assert "remove-output" in tags, f"{path.name}: explorer cell without remove-output"
    assert calls >= 3


def test_heatmap_explorer_redraws_when_n_moves():
    records = [dict(variant=v, n=n, grid="coarse", dtype="float64", N=100, inv_temperature=t,
                    learning_rate=lr, distance=float(n * t * lr), repeat=0)
               for v in ("original", "normalized") for n in (2, 3) for t in (0.5, 1.0) for lr in (0.01, 0.1)]
    sliders, image, _ = _parts(widgets.heatmap_explorer(records, [2, 3]))
    first = image.value
    assert first.startswith(PNG)
    sliders[0].value = 3
    assert image.value.startswith(PNG) and image.value != first
