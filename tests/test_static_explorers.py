"""Kernel-free explorers (damlite.book.widgets.static_explorer): frames, HTML, and a real browser.

The browser test starts headless Chromium on a page holding one explorer, moves a
slider the way a reader would (an ``input`` event), and checks that another picture is
shown: a different frame, decoded by the browser, with different pixels. It is skipped
where Chromium is not installed (CI); ``apt-get install -y chromium`` provides it.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from damlite.book import widgets  # noqa: E402


def _draw(a, b):
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(3, 2), constrained_layout=True)
    ax.plot([0, 1], [0, a * b], linewidth=3)
    ax.set_ylim(0, 20)
    ax.set_title(f"a = {a}, b = {b}")
    return fig, f"a * b = {a * b}"


@pytest.fixture(scope="module")
def explorer():
    return widgets.static_explorer(_draw, {"a": [1, 2, 3], "b": [4, 5]}, initial={"a": 2},
                                   alt="A rising line whose height is a times b.")


def test_every_frame_says_what_it_shows(explorer):
    """Each frame's alternative text is the explorer's sentence and its control values;
    an explorer without the sentence is refused (a screen reader would hear only numbers)."""
    assert explorer.frames["1-0"]["alt"] == "A rising line whose height is a times b (a = 2, b = 4)."
    assert 'alt="A rising line whose height is a times b (a = 2, b = 4)."' in explorer._repr_html_()
    with pytest.raises(ValueError, match="alt"):
        widgets.static_explorer(_draw, {"a": [1]})


def test_one_frame_per_combination_and_distinct_pictures(explorer):
    assert len(explorer) == 6
    assert set(explorer.frames) == {f"{i}-{j}" for i in range(3) for j in range(2)}
    assert len({f["png"] for f in explorer.frames.values()}) == 6
    assert explorer.frames["1-0"]["text"] == "a * b = 8" and explorer.initial == [1, 0]


def test_html_is_self_contained(explorer):
    page = explorer._repr_html_()
    assert page.count('type="range"') == 2 and 'id="' + explorer.id + '"' in page
    assert "http://" not in page and "https://" not in page and "require" not in page
    data = re.search(r'<script type="application/json" class="dlx-frames">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data.replace("<\\/", "</"))["labels"] == [["1", "2", "3"], ["4", "5"]]


_BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)

_MOVE = """<script>
window.addEventListener("load", async function () {
  const root = document.querySelector(".damlite-explorer");
  const img = root.querySelector("img.dlx-frame");
  const pixels = async () => {
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    c.getContext("2d").drawImage(img, 0, 0);
    return c.toDataURL();
  };
  const before = {src: img.src, pixels: await pixels(), text: root.querySelector("pre").textContent};
  const slider = root.querySelectorAll("input.dlx-slider")[0];
  slider.value = "2";
  slider.dispatchEvent(new Event("input", {bubbles: true}));
  const after = {src: img.src, pixels: await pixels(), text: root.querySelector("pre").textContent};
  document.body.setAttribute("data-result", JSON.stringify({
    src_changed: before.src !== after.src, pixels_changed: before.pixels !== after.pixels,
    width: img.naturalWidth, before: before.text, after: after.text,
    label: root.querySelector("output.dlx-value").textContent}));
});
</script>"""


@pytest.mark.skipif(_BROWSER is None, reason="no Chromium here (CI has none): apt-get install -y chromium")
def test_moving_the_slider_changes_the_picture_in_a_browser(explorer, tmp_path):
    page = tmp_path / "explorer.html"
    page.write_text(f"<!doctype html><html><body>{explorer._repr_html_()}{_MOVE}</body></html>", encoding="utf-8")
    for attempt in range(3):  # the image decodes in real time, the page runs in virtual time: on a machine full
        # of other work (a parallel test run) Chromium can dump the page before the decode is done; a broken page
        # fails every attempt
        out = subprocess.run(
            [_BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={tmp_path / f'profile-{attempt}'}", "--virtual-time-budget=10000",
             "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
        found = re.search(r'data-result="([^"]*)"', out.stdout)
        if found:
            break
    assert found, f"the page's script did not finish in 3 attempts: {out.stderr[-500:]}"
    result = json.loads(found.group(1).replace("&quot;", '"'))
    assert result["src_changed"] and result["pixels_changed"] and result["width"] > 0
    assert (result["before"], result["after"], result["label"]) == ("a * b = 8", "a * b = 12", "3")


def test_frontier_frames_report_the_frontier():
    explorer = widgets.frontier_frames(Ns=(100,), ns=(10, 30), initial=(100, 10))
    assert len(explorer) == 2
    assert "float32: largest safe n =   19  ->  finite" in explorer.frames["0-0"]["text"]
    assert "float32: largest safe n =   19  ->  inf" in explorer.frames["0-1"]["text"]


def test_frontier_frames_fit_their_fixed_margins(monkeypatch):
    """The explorer's frames keep their axes in place (fixed margins, no layout pass): at the extreme N and n,
    every axes with its tick labels, axis labels and title lies inside the figure."""
    inside = []
    real = widgets._png

    def check(fig, dpi, colors):
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            box = ax.get_tightbbox(renderer)
            inside.append(box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1)
        return real(fig, dpi, colors)

    monkeypatch.setattr(widgets, "_png", check)
    explorer = widgets.frontier_frames(Ns=(100, 1_000_000), ns=(2, 150), initial=(100, 2))
    assert len(explorer) == 4 and len(inside) == 8 and all(inside), inside


def test_heatmap_frames_one_frame_per_n():
    records = [dict(variant=v, n=n, grid="coarse", dtype="float64", N=100, inv_temperature=t,
                    learning_rate=lr, distance=float(n * t * lr), repeat=0)
               for v in ("original", "normalized") for n in (2, 3) for t in (0.5, 1.0) for lr in (0.01, 0.1)]
    explorer = widgets.heatmap_frames(records, [2, 3])
    assert len(explorer) == 2 and explorer.frames["0"]["png"] != explorer.frames["1"]["png"]


def test_retina_figures_only_inside_ipython():
    from damlite.book import plots  # noqa: PLC0415

    assert plots.sharp_inline_figures() is False  # plain Python: nothing to configure


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # matplotlib_inline's traitlets hook
def test_retina_figures_in_an_ipython_shell():
    pytest.importorskip("IPython")
    pytest.importorskip("matplotlib_inline")
    from IPython.core.interactiveshell import InteractiveShell  # noqa: PLC0415
    from matplotlib_inline.backend_inline import InlineBackend  # noqa: PLC0415

    from damlite.book import plots  # noqa: PLC0415

    shell = InteractiveShell.instance()
    backend = InlineBackend.instance()
    before = set(backend.figure_formats)
    try:
        backend.figure_formats = {"png"}
        assert plots.sharp_inline_figures() is True
        assert "image/png" in shell.display_formatter.formatters
        backend.figure_formats = {"svg"}
        assert plots.sharp_inline_figures() is False  # a format the user chose is kept
    finally:
        backend.figure_formats = before
        InteractiveShell.clear_instance()
