"""Pages true at every width: figures keep their shape, shown code runs as shown, tables fit.

* **Figures.** MyST-NB writes each figure's size into its ``<img>`` (``style="width: 731px;
  height: 452px"``); on a column narrower than that the theme's ``max-width: 100%`` narrows
  the width, and a fixed height would stretch the picture. ``_static/custom.css`` lets the
  height follow the width. Checked three ways: the rule itself; every image of a built book
  against it (parsed HTML, no browser); and, where a headless Chromium and a built book
  exist, each image's rendered width/height against its PNG's, at 1280 px and 400 px.
* **Shown code.** A chapter's code cells run in order, but a reader sees only some of them.
  A cell's source is shown at once (no tag that hides it), behind a toggle (``hide-input``,
  ``hide-cell``) or not at all (``remove-input``, ``remove-cell``). A cell shown at once may
  use only names that earlier cells shown at once define; a cell behind a toggle may also use
  names from earlier toggled cells. Names are read with :mod:`symtable` (every binding and
  every use, functions and comprehensions included), IPython's ``!`` and ``%`` lines left out.
* **Tables** (:mod:`damlite.book.tables`): words wrap, numbers do not; a row of the
  wrong length is refused.
"""
from __future__ import annotations

import builtins
import html.parser
import json
import re
import symtable
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CSS = ROOT / "_static" / "custom.css"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
STRETCH = 0.02  # the largest relative change of an image's aspect ratio on a page


def _notebooks():
    entries = [TOC["root"]] + [c["file"] for part in TOC.get("parts", []) for c in part.get("chapters", [])]
    return [e for e in entries if (ROOT / f"{e}.ipynb").is_file()]


# ------------------------------------------------------------------ figures keep their shape
def _rules(css):
    """(selectors, declarations) of each rule of ``css`` outside @-blocks (@media), comments dropped."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    top, depth, skipping = [], 0, False
    for k, ch in enumerate(css):
        if ch == "@" and depth == 0:
            skipping = True
        if ch == "{":
            depth += 1
        if not skipping:
            top.append(ch)
        if ch == "}":
            depth -= 1
            if depth == 0 and skipping:
                skipping = False
    return [([s.strip() for s in m.group(1).split(",")], m.group(2))
            for m in re.finditer(r"([^{}]+)\{([^{}]*)\}", "".join(top))]


def _height_follows_width(css):
    """Selectors of the top-level rules that set ``height: auto !important``."""
    return [sel for sels, body in _rules(css) if re.search(r"height\s*:\s*auto\s*!important", body)
            for sel in sels]


def test_figures_keep_their_shape_in_the_stylesheet():
    selectors = _height_follows_width(CSS.read_text(encoding="utf-8"))
    assert "article.bd-article img" in selectors, (
        "custom.css: images in a page's article need height: auto !important (their inline height is the "
        "figure's at full width)")


def test_the_rule_reader_sees_media_blocks_apart():
    css = "a img { height: auto !important; } @media (max-width: 600px) { b img { height: auto !important; } }"
    assert _height_follows_width(css) == ["a img"]


class _Images(html.parser.HTMLParser):
    """Each <img> of a page with its ancestors' (tag, classes)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.images = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append((attrs, list(self.stack)))
        elif tag not in self.VOID:
            self.stack.append((tag, set((attrs.get("class") or "").split())))

    def handle_endtag(self, tag):
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                break


def _matches(selector, ancestors, tag="img"):
    """Whether a descendant selector of ``tag.class`` parts ("article.bd-article img") matches an
    element ``tag`` under ``ancestors``."""
    parts = selector.split()
    if not parts or parts[-1] != tag:
        return False
    k = 0
    for part in parts[:-1]:
        name, *classes = part.split(".")
        while k < len(ancestors) and not ((not name or ancestors[k][0] == name) and set(classes) <= ancestors[k][1]):
            k += 1
        if k == len(ancestors):
            return False
        k += 1
    return True


def _built_pages():
    return sorted(HTML.glob("book/*.html")) + [HTML / "index.html"]


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
def test_every_built_image_follows_its_width():
    """Each image with a height written into it sits where the stylesheet lets that height follow
    the width (the stylesheet of the build itself)."""
    selectors = _height_follows_width((HTML / "_static" / "custom.css").read_text(encoding="utf-8"))
    fixed, seen = [], 0
    for page in _built_pages():
        parser = _Images()
        parser.feed(page.read_text(encoding="utf-8"))
        for attrs, ancestors in parser.images:
            if re.search(r"(^|;)\s*height\s*:", attrs.get("style") or "") or "height" in attrs:
                seen += 1
                if not any(_matches(s, ancestors) for s in selectors):
                    fixed.append(f"{page.name}: {(attrs.get('alt') or attrs.get('src', ''))[:60]}")
    assert seen, "no image with a written height: has MyST-NB changed how it writes figures?"
    assert not fixed, f"images whose height stays fixed when the column narrows: {fixed[:10]}"


def test_the_selector_reader():
    article = [("html", set()), ("body", set()), ("article", {"bd-article", "x"}), ("div", {"cell_output"})]
    assert _matches("article.bd-article img", article)
    assert _matches("div.cell_output img", article)
    assert not _matches("figure img", article)
    assert not _matches("article.other img", article)


# ------------------------------------------------------------------ figures in Chromium
MEASURE = """<!doctype html><html><body><pre id="result"></pre><script>
const pages = %s, widths = %s, out = [];
async function run() {
  for (const w of widths) for (const p of pages) {
    const f = document.createElement('iframe');
    f.width = String(w); f.height = '900'; f.src = p; document.body.appendChild(f);
    await new Promise(r => f.addEventListener('load', r));
    const doc = f.contentDocument;
    const imgs = Array.from(doc.querySelectorAll('article.bd-article img'));
    await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = r; i.onerror = r; })));
    for (const i of imgs) {
      const box = i.getBoundingClientRect();
      if (i.naturalWidth && box.width && box.height)
        out.push([w, p, (i.alt || i.src).slice(0, 60), box.width, box.height, i.naturalWidth, i.naturalHeight]);
    }
    f.remove();
  }
  document.getElementById('result').textContent = JSON.stringify(out);
}
run();
</script></body></html>"""


def _serve_and_measure(pages, widths):
    import test_pages_render as render  # noqa: PLC0415 - the served book, without MathJax

    harness = MEASURE % (json.dumps(["/" + p for p in pages]), json.dumps(widths))
    return render.run_harness(harness, mathjax=None, window="1400,1000", timeout=900)


def _chromium():
    import test_pages_render as render  # noqa: PLC0415

    return render._chromium()


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium")
def test_no_figure_is_stretched_in_chromium():
    pages = [p.relative_to(HTML).as_posix() for p in _built_pages()]
    measured = _serve_and_measure(pages, [1280, 400])
    assert measured, "no image measured"
    stretched = [f"{w} px, {p}, {alt}: {bw:.0f}x{bh:.0f} shown, {nw}x{nh} in the PNG"
                 for w, p, alt, bw, bh, nw, nh in measured
                 if abs((bw / bh) / (nw / nh) - 1) > STRETCH]
    assert not stretched, f"figures stretched by more than {STRETCH:.0%}: {stretched[:8]}"


# ------------------------------------------------------------------ shown code runs as shown
#: How far out of sight a tag puts a cell's source: 0 shown, 1 behind a toggle, 2 not on the page.
SIGHT = {"hide-input": 1, "hide-cell": 1, "remove-input": 2, "remove-cell": 2}
#: Names a notebook has without defining them: Python's builtins and IPython's display.
GIVEN = set(dir(builtins)) | {"display", "get_ipython"}
#: Pages whose shown code still uses names from out of sight, and why they are left for now.
PENDING = {}


def sight(cell):
    """0 when the cell's source is shown on the page, 1 when behind a toggle, 2 when removed."""
    return max([SIGHT.get(t, 0) for t in cell.get("metadata", {}).get("tags", [])], default=0)


def names_of(source):
    """(names the cell defines at the top level, names it uses from the top level)."""
    code = "\n".join("" if line.lstrip().startswith(("!", "%")) else line for line in source.splitlines())
    table = symtable.symtable(code, "<cell>", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    used = {s.get_name() for s in table.get_symbols() if s.is_referenced()}

    def inner(t):  # names a function or a comprehension takes from the top level
        for child in t.get_children():
            used.update(s.get_name() for s in child.get_symbols() if s.is_global() and s.is_referenced())
            inner(child)

    inner(table)
    return defined, used


def unseen_names(cells):
    """[(cell index, names)] of the cells that use a name no earlier cell as visible defines."""
    seen, out = {}, []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        level = sight(cell)
        defined, used = names_of(cell["source"])
        if level < 2:
            missing = sorted(n for n in used - defined - GIVEN if seen.get(n, 3) > level)
            if missing:
                out.append((i, missing))
        for n in defined:
            seen[n] = min(seen.get(n, 3), level)
    return out


@pytest.mark.parametrize("entry", [pytest.param(e, marks=pytest.mark.xfail(reason=PENDING[e], strict=False))
                                   if e in PENDING else e for e in _notebooks()])
def test_shown_code_uses_only_shown_names(entry):
    cells = nbformat.read(ROOT / f"{entry}.ipynb", as_version=4).cells
    bad = unseen_names(cells)
    assert not bad, (f"{entry}: cells that use names defined only out of sight (cell, names): {bad}; "
                     "import or define them in a shown cell, or move the plumbing into damlite.book")


def _cell(source, *tags):
    return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)}}


def test_the_name_reader():
    cells = [_cell("import numpy as np\nx = 1", "remove-cell"), _cell("y = np.ones(3)"),
             _cell("def f():\n    return [z * x for z in range(3)]", "hide-input"),
             _cell("!pip install nothing\nprint(len([1]))\ndisplay(1)"), _cell("w = f()\nq = x", "remove-input")]
    assert unseen_names(cells) == [(1, ["np"]), (2, ["x"])]
    assert unseen_names([_cell("a = 1", "hide-input"), _cell("b = a", "hide-cell"), _cell("c = a")]) == [(2, ["a"])]
    assert names_of("for k in range(2):\n    t = k\nwith open(p) as fh:\n    pass")[0] >= {"k", "t", "fh"}


# ------------------------------------------------------------------ tables that fit
def test_tables_wrap_words_and_keep_numbers_whole():
    from damlite.book.tables import Markup, Table  # noqa: PLC0415

    t = Table(["claim", "n", "best\nF1"], [["a long claim <b>", 2, "0.980"], "a line across", ["x", 10, "1e-05"]])
    page = t._repr_html_()
    assert t.align == ["left", "right", "right"] and len(t) == 2
    assert page.count('class="dl-text"') == 3 and page.count('class="dl-num"') == 6  # headings and cells
    assert "white-space: normal" in page and "white-space: nowrap" in page
    assert "a long claim &lt;b&gt;" in page and "best<br>F1" in page
    assert '<td colspan="3"' in page and 'data-label="best F1"' in page
    assert "dl-stack" not in page and "dl-stack" in Table(["a"], [[1]], stack=True)._repr_html_()
    assert "<sub>out</sub>" in Table([Markup("β<sub>out</sub>")], [[1]])._repr_html_()
    text = str(t).splitlines()
    assert text[0].split() == ["claim", "n", "best", "F1"] and text[3] == "a line across"
    with pytest.raises(ValueError, match="rows"):
        Table(["a", "b"], [[1]])


def test_verdict_table_reads_the_scorecard():
    from damlite.book.tables import verdict_table  # noqa: PLC0415

    card = json.loads((ROOT / "book" / "results" / "scorecard.json").read_text(encoding="utf-8"))
    claims = [c for c in card["claims"] if c["task"] == "aa"]
    t = verdict_table(card, "aa")
    assert len(t) == len(claims) and len(t.rows) == 2 * len(claims)
    assert [h.replace("\n", " ") for h in t.header] == list(claims[0]["readings"])
    assert "≥" in t._repr_html_() and ">=" not in str(t.rows)
    with pytest.raises(ValueError, match="task"):
        verdict_table(card, "nothing")


def test_result_files_with_their_provenance(tmp_path):
    from damlite.book import results  # noqa: PLC0415

    assert results.commit_of({"git_commit": "0123456789" * 4}) == "0123456789"
    assert results.commit_of({"git_commit": "dirty"}) == "not recorded"
    missing = results.load(tmp_path / "none.jsonl", "autoassociative", "quick")
    assert missing.records == [] and missing.blocks and "0 of" in missing.summary()
    with pytest.raises(ValueError, match="timed"):
        results.cpu_hours(missing)
    full = results.load(ROOT / "book" / "results" / "autoassociative" / "autoassociative-full.jsonl",
                        "autoassociative", "full")
    keys = {b.key for b in full.blocks}
    assert full.records and {r["key"] for r in full.records} <= keys
    assert len(full.provenance_table()) == len(full.on_file) <= len(keys)
    assert results.ns_on_file(full.records, [2, 999], "coarse") == [2]
    assert results.ns_on_file(full.records, [999], "coarse") == [999]


def test_each_script_once_per_page():
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("single_scripts", ROOT / "_ext" / "single_scripts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Script(str):
        def __new__(cls, filename, **attributes):
            self = super().__new__(cls, filename or "")
            self.filename, self.attributes = filename, attributes
            return self

    scripts = [Script("a.js"), Script(None, body="const X = 1"), Script("", body="const X = 1"),
               Script("a.js"), Script(None, body="const Y = 2")]
    assert [s.attributes.get("body", s.filename) for s in module.unique_scripts(scripts)] == [
        "a.js", "const X = 1", "const Y = 2"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"]["single_scripts"] == "_ext"
