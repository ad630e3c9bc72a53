"""Every picture on a page says what it shows, for a reader who cannot see it.

Sphinx writes an image's file path as its ``alt`` when none is given ("../_images/3107….png"),
which is what a screen reader then reads out. Each figure cell therefore carries one sentence
in its ``mystnb.image.alt`` metadata, and each kernel-free explorer frame its own (from
:func:`damlite.book.widgets.static_explorer`'s ``alt``). Checked three ways: the notebooks'
source (every cell that draws a figure), the executed notebooks (``.ci/check_pages.py``, every
cell that shows a picture) and, where a built book exists, every ``<img>`` of its pages.
"""
from __future__ import annotations

import html.parser
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
#: A cell whose source contains one of these draws a figure.
DRAWS = re.compile(r"plt\.show\(|\bplots\.plot_\w+\(|\bplot_memories\(")


def _check_pages():
    spec = importlib.util.spec_from_file_location("check_pages", ROOT / ".ci" / "check_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECK = _check_pages()


def _notebooks():
    entries = [TOC["root"]] + [c["file"] for part in TOC.get("parts", []) for c in part.get("chapters", [])]
    return [e for e in entries if (ROOT / f"{e}.ipynb").is_file()]


def test_the_alt_reader():
    assert CHECK.alt_problem("../_images/31075c0ffee.png")
    assert CHECK.alt_problem("")
    assert CHECK.alt_problem(None)
    assert CHECK.alt_problem("n = 2, N = 100")  # control values alone are not a sentence
    assert CHECK.alt_problem("Line plot of the loss against the epoch for four settings.") is None
    cell = {"metadata": {}, "outputs": [{"data": {"image/png": "iVBOR"}}]}
    assert CHECK.picture_problems(cell) == ["no alternative text"]
    cell["metadata"] = {"mystnb": {"image": {"alt": "Heatmaps of recall distance, one row per n."}}}
    assert CHECK.picture_problems(cell) == []
    explorer = {"metadata": {}, "outputs": [{"data": {"text/html": [
        '<div><img class="dlx-frame" width="700" src="data:image/png;base64,AAAA" ',
        'alt="Heatmaps of recall distance over the grid (n = 2)."></div><img src="x.png">']}}]}
    assert CHECK.picture_problems(explorer) == ["no alternative text"]
    hidden = {"metadata": {"tags": ["remove-output"]}, "outputs": [{"data": {"image/png": "iVBOR"}}]}
    assert CHECK.picture_problems(hidden) == []


@pytest.mark.parametrize("entry", _notebooks())
def test_every_figure_cell_says_what_it_shows(entry):
    nb = nbformat.read(ROOT / f"{entry}.ipynb", as_version=4)
    missing = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        meta = cell.metadata.get("mystnb", {})
        if tags & {"remove-output", "remove-cell"} or not ("figure" in meta or DRAWS.search(cell.source)):
            continue
        if "static_explorer(" in cell.source and "figure" not in meta:
            continue  # its frames' sentence is the call's alt= (static_explorer refuses none)
        problem = CHECK.alt_problem(meta.get("image", {}).get("alt"))
        if problem:
            missing.append(f"cell {cell.get('id')}: {problem}")
    assert not missing, f"{entry}: figure cells without a describing sentence (mystnb.image.alt): {missing}"


class _Alts(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.alts = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            attrs = dict(attrs)
            self.alts.append((attrs.get("src", "")[:60], attrs.get("alt")))


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
def test_every_built_image_says_what_it_shows():
    pages = sorted(HTML.glob("book/*.html")) + [HTML / "index.html"]
    bad, seen = [], 0
    for page in pages:
        parser = _Alts()
        parser.feed(page.read_text(encoding="utf-8"))
        for src, alt in parser.alts:
            if "logo" in src or src.startswith("https://"):  # the theme's logo and badges
                continue
            seen += 1
            problem = CHECK.alt_problem(alt)
            if problem:
                bad.append(f"{page.name}: {src}: {problem}")
    assert seen, "no image found in the built pages"
    assert not bad, f"{len(bad)} images a screen reader cannot describe: {bad[:8]}"
