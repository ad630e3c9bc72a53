"""A page read on a phone (400 px): figure text at least 9 px tall, code cells that wrap.

* **Figure text.** The figures are drawn with text of at least ``SMALLEST_PT`` points
  (checked in the plotting helpers and the chapters' own figure code); at matplotlib's
  100 dpi that is ``SMALLEST_PT * 100 / 72`` px at the size MyST-NB writes into each
  ``<img>``. ``_static/custom.css`` shows figures at ``zoom`` of at least ``MIN_SCALE`` of
  that size below 600 px, scrolling sideways in their own box, so the smallest text stays at
  ``MIN_PX`` or more. Where a headless Chromium and a built book exist, every figure's
  rendered width at 400 px is measured against its written width.
* **Code cells** wrap at the screen's edge below 600 px (``white-space: pre-wrap``); in
  Chromium no code cell of a built page scrolls sideways at 400 px.
* **The theme's colour mode** is set, so no page logs "Got invalid theme mode".
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CSS = ROOT / "_static" / "custom.css"
SMALLEST_PT = 8
MIN_PX = 9
MIN_SCALE = MIN_PX / (SMALLEST_PT * 100 / 72)  # 0.81
SIZE = re.compile(r"\b(?:fontsize|labelsize|titlesize)\s*=\s*([0-9.]+)|[\"']size[\"']\s*:\s*([0-9.]+)")


def _figure_code():
    """(where, source) of every piece of code that draws the book's figures."""
    for path in sorted([*(ROOT / "damlite" / "book").rglob("*.py"), *(ROOT / "damlite" / "paper").glob("*.py")]):
        text = path.read_text(encoding="utf-8")
        if path.parent.name == "book" or "matplotlib" in text:  # the scorecard's summary figure is drawn in paper/
            yield path.relative_to(ROOT).as_posix(), text
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                yield f"{path.name}:{cell.get('id')}", cell.source


def test_figures_use_no_text_under_8_pt():
    small = [f"{where}: {m.group(0)}" for where, source in _figure_code() for m in SIZE.finditer(source)
             if float(m.group(1) or m.group(2)) < SMALLEST_PT]
    assert not small, f"figure text under {SMALLEST_PT} pt (under {MIN_PX} px on a phone): {small}"
    assert not any(re.search(r"x{1,2}-small", s) for _, s in _figure_code()), "no x-small text in figures"


def _narrow_block(css):
    """The declarations of the @media (max-width: 600px) blocks, comments dropped."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, k = [], 0
    for m in re.finditer(r"@media\s*\(max-width:\s*600px\)\s*\{", css):
        depth, k = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(css[k], 0)
            k += 1
        out.append(css[m.end():k - 1])
    return "\n".join(out)


def test_the_stylesheet_keeps_figures_legible_and_wraps_code():
    narrow = _narrow_block(CSS.read_text(encoding="utf-8"))
    rule = re.search(r"figure img\s*\{([^}]*)\}", narrow)
    assert rule and "max-width: none" in rule.group(1), "below 600 px figures keep their size (max-width: none)"
    zoom = re.search(r"zoom:\s*([0-9.]+)", rule.group(1))
    assert zoom and float(zoom.group(1)) >= MIN_SCALE, f"figures shown at {MIN_SCALE:.2f} of their size or more"
    box = re.search(r"div\.cell_output:has\(img[^{]*\{([^}]*)\}", narrow)
    assert box and "overflow-x: auto" in box.group(1), "a figure scrolls inside its own box, not the page"
    frame = re.search(r"img\.dlx-frame\s*\{([^}]*)\}", narrow)
    assert frame and "max-width: none" in frame.group(1), "an explorer's frame keeps its size too"
    zoom = re.search(r"zoom:\s*([0-9.]+)", frame.group(1))
    assert zoom and float(zoom.group(1)) >= MIN_SCALE, f"explorer frames at {MIN_SCALE:.2f} of their size or more"
    box = re.search(r"div\.dlx-frame-box\s*\{([^}]*)\}", narrow)
    assert box and "overflow-x: auto" in box.group(1), "an explorer's frame scrolls in its own box"
    code = re.search(r"div\.cell_input[^{]*pre\s*\{([^}]*)\}", narrow)
    assert code and "pre-wrap" in code.group(1), "code cells wrap on a phone"


def test_the_theme_mode_is_set():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["config"]["html_context"]["default_mode"] in {"auto", "light", "dark"}


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
def test_every_built_page_names_its_theme_mode():
    """pydata-sphinx-theme reads the mode from <html data-theme=...>; without it the console logs
    "Got invalid theme mode: . Resetting to auto." on every page."""
    pages = sorted(HTML.glob("book/*.html"))  # (index.html only redirects to the first chapter)
    assert pages, "no built pages"
    for page in [*pages, HTML / "genindex.html", HTML / "search.html"]:
        tag = re.search(r"<html[^>]*>", page.read_text(encoding="utf-8")).group(0)
        assert re.search(r'data-theme="(auto|light|dark)"', tag), f"{page.name}: {tag}"


MEASURE = """<!doctype html><html><body><pre id="result"></pre><script>
const pages = %s, out = {figures: [], code: []};
async function run() {
  for (const p of pages) {
    const f = document.createElement('iframe');
    f.width = '400'; f.height = '900'; f.src = p; document.body.appendChild(f);
    await new Promise(r => f.addEventListener('load', r));
    const doc = f.contentDocument;
    for (const i of doc.querySelectorAll('article.bd-article img')) {
      const written = parseFloat((i.getAttribute('style') || '').match(/width:\\s*([0-9.]+)px/)?.[1])
                      || parseFloat(i.getAttribute('width'));  // an explorer's frame: width="720"
      if (written && i.getBoundingClientRect().width > 0)  // a figure behind a closed toggle is not shown
        out.figures.push([p, (i.alt || '').slice(0, 50), i.getBoundingClientRect().width / written]);
    }
    for (const pre of doc.querySelectorAll('div.cell_input pre')) {
      if (pre.offsetParent !== null && pre.scrollWidth > pre.clientWidth + 1)
        out.code.push([p, pre.textContent.slice(0, 50)]);
    }
    f.remove();
  }
  document.getElementById('result').textContent = JSON.stringify(out);
}
run();
</script></body></html>"""


def _chromium():
    import test_pages_render as render  # noqa: PLC0415

    return render._chromium()


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium")
def test_figures_and_code_read_on_a_phone_in_chromium():
    import test_pages_render as render  # noqa: PLC0415

    pages = ["/" + p.relative_to(HTML).as_posix() for p in sorted(HTML.glob("book/*.html"))]
    got = render.run_harness(MEASURE % json.dumps(pages), mathjax=None, window="800,900", timeout=900)
    assert got["figures"], "no figure measured"
    small = [f"{p}: {alt}: {scale:.2f}" for p, alt, scale in got["figures"] if scale < MIN_SCALE - 0.01]
    assert not small, (f"figures shown under {MIN_SCALE:.2f} of their size at 400 px "
                       f"(text under {MIN_PX} px): {small[:8]}")
    assert not got["code"], f"code cells that scroll sideways at 400 px: {got['code'][:8]}"
