"""The built pages as a reader on a phone sees them.

* Inline maths keeps the punctuation that touches it (``_ext/math_punctuation.py`` and
  ``span.math-nowrap`` in ``_static/custom.css``): no ";" or ")" alone at the start of a
  line.
* At 400 px no page is wider than the screen: a long equation, a wide table or a code
  cell may scroll inside its own box, the page body never scrolls sideways.

The second check needs a built book (``jupyter-book build .``, into ``_build/html``) and
a headless Chromium; it is skipped without them. MathJax comes from a CDN that a test
may not reach: point ``DAMLITE_MATHJAX_DIR`` at a local MathJax 3 ``es5`` folder (the one
holding ``tex-mml-chtml.js``) to measure the typeset equations; without it the TeX source
is measured instead.
"""
from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CDN = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"
WIDTH = 400


def _extension():
    spec = importlib.util.spec_from_file_location("math_punctuation", ROOT / "_ext" / "math_punctuation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _doctree(rst):
    from docutils.core import publish_doctree  # noqa: PLC0415

    return publish_doctree(rst, settings_overrides={"report_level": 5})


def test_math_keeps_its_punctuation():
    from docutils import nodes  # noqa: PLC0415

    ext = _extension()
    doc = _doctree("only 7 bits (:math:`p = 8`). Then :math:`n = 30`; and :math:`x` alone, "
                   "up to :math:`n = 1000`.")
    assert ext.keep_punctuation_with_math(doc) == 3
    boxes = [b for b in doc.findall(nodes.inline) if ext.CLASS in b["classes"]]
    assert [b.astext() for b in boxes] == ["(p = 8).", "n = 30;", "n = 1000."]
    # the text around them is unchanged, and a lone maths node is left alone
    assert doc.astext() == "only 7 bits (p = 8). Then n = 30; and x alone, up to n = 1000."
    assert sum(1 for m in doc.findall(nodes.math) if ext.CLASS not in m.parent["classes"]) == 1
    assert ext.keep_punctuation_with_math(doc) == 0  # idempotent


def test_math_punctuation_is_wired_into_the_build():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["sphinx"]["local_extensions"]["math_punctuation"] == "_ext"
    css = (ROOT / "_static" / "custom.css").read_text(encoding="utf-8")
    rule = re.search(r"span\.math-nowrap\s*\{([^}]*)\}", css)
    assert rule and "white-space: nowrap" in rule.group(1)


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


PROBE = """<script>
addEventListener('load', () => {
  const done = () => setTimeout(() => { window.__width = document.documentElement.scrollWidth; }, 300);
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(done);
  else done();
});
</script></head>"""

HARNESS = """<!doctype html><html><body><pre id="result"></pre><script>
const pages = %s, out = {};
async function run() {
  for (const p of pages) {
    const f = document.createElement('iframe');
    f.width = '%d'; f.height = '800'; f.src = p; document.body.appendChild(f);
    await new Promise(r => f.addEventListener('load', r));
    for (let i = 0; i < 200 && f.contentWindow.__width === undefined; i++)
      await new Promise(r => setTimeout(r, 100));
    out[p] = f.contentWindow.__width === undefined ? -1 : f.contentWindow.__width;
    f.remove();
  }
  document.getElementById('result').textContent = JSON.stringify(out);
}
run();
</script></body></html>"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the built book; pages get MathJax from a local folder and the width probe."""

    mathjax = None

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0]
        if path.startswith("/__mathjax__/") and self.mathjax:
            return self._send(Path(self.mathjax, path[len("/__mathjax__/"):]), "application/javascript")
        if path == "/__harness__.html":
            return self._body(self.server.harness.encode(), "text/html")
        if path.endswith(".html"):
            page = Path(self.directory, path.lstrip("/"))
            if page.is_file():
                text = page.read_text(encoding="utf-8")
                text = text.replace(CDN, "/__mathjax__/tex-mml-chtml.js" if self.mathjax else "/__none__.js")
                return self._body(text.replace("</head>", PROBE, 1).encode(), "text/html")
        return super().do_GET()

    def _send(self, path, kind):
        if not path.is_file():
            self.send_error(404)
            return None
        return self._body(path.read_bytes(), kind)

    def _body(self, data, kind):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return None


def run_harness(harness, *, mathjax, window, timeout):
    """Serve the built book with ``harness`` at /__harness__.html (MathJax from ``mathjax``, or none), load it in
    headless Chromium (``window``: "width,height") and return the JSON it writes into its ``<pre id="result">``."""
    handler = functools.partial(type("H", (_Handler,), {"mathjax": mathjax}), directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.harness = harness
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as profile:
            dom = subprocess.run(
                [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", f"--window-size={window}", "--virtual-time-budget=600000",
                 "--dump-dom", f"http://127.0.0.1:{server.server_address[1]}/__harness__.html"],
                capture_output=True, text=True, timeout=timeout, check=False).stdout
    finally:
        server.shutdown()
    found = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), "the harness reported nothing"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _pages():
    pages = [p.relative_to(HTML).as_posix() for p in sorted(HTML.glob("book/*.html"))]
    return ["index.html", *pages, "genindex.html"]


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium")
def test_no_page_is_wider_than_a_phone():
    pages = _pages()
    widths = run_harness(HARNESS % (json.dumps(["/" + p for p in pages]), WIDTH),
                         mathjax=os.environ.get("DAMLITE_MATHJAX_DIR"), window="800,900", timeout=600)
    assert set(widths) == {"/" + p for p in pages}
    unmeasured = [p for p, w in widths.items() if w < 0]
    assert not unmeasured, f"pages that never finished loading: {unmeasured}"
    wide = {p: w for p, w in widths.items() if w > WIDTH}
    assert not wide, f"pages wider than {WIDTH} px (the page scrolls sideways): {wide}"


EQUATIONS = """<!doctype html><html><body><pre id="result"></pre><script>
const pages = %s, out = {typeset: 0, wide: []};
async function run() {
  for (const p of pages) {
    const f = document.createElement('iframe');
    f.width = '%d'; f.height = '800'; f.src = p; document.body.appendChild(f);
    await new Promise(r => f.addEventListener('load', r));
    for (let i = 0; i < 300 && f.contentWindow.__width === undefined; i++)
      await new Promise(r => setTimeout(r, 100));
    for (const m of f.contentDocument.querySelectorAll('mjx-container[display="true"]')) {
      out.typeset += 1;
      if (m.offsetParent !== null && m.scrollWidth > m.clientWidth + 1)
        out.wide.push([p, m.scrollWidth, m.clientWidth, m.textContent.slice(0, 40)]);
    }
    f.remove();
  }
  document.getElementById('result').textContent = JSON.stringify(out);
}
run();
</script></body></html>"""


@pytest.mark.skipif(not (HTML / "index.html").is_file(), reason="no built book in _build/html")
@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium")
@pytest.mark.skipif(not os.environ.get("DAMLITE_MATHJAX_DIR"), reason="no local MathJax (DAMLITE_MATHJAX_DIR)")
def test_no_chapter_equation_scrolls_on_a_phone():
    """At 400 px every display equation of the chapters fits its column (split into aligned lines
    where it would not), rather than scrolling sideways in its own box."""
    pages = ["/" + p.relative_to(HTML).as_posix() for p in sorted(HTML.glob("book/0*.html"))]
    pages += ["/book/quickstart.html"]
    got = run_harness(EQUATIONS % (json.dumps(pages), WIDTH), mathjax=os.environ["DAMLITE_MATHJAX_DIR"],
                      window="800,900", timeout=900)
    assert got["typeset"], "MathJax typeset no display equation"
    assert not got["wide"], f"display equations that scroll sideways at {WIDTH} px: {got['wide']}"


def test_scorecard_words_as_a_page_shows_them():
    """The scorecard's ASCII (kept in the JSON) becomes the book's notation on the page."""
    from damlite.paper import scorecard  # noqa: PLC0415

    assert scorecard.prose("per n >= 20: 1/T' <= 0.9, 0.17 -> 0.11") == "per n ≥ 20: 1/T′ ≤ 0.9, 0.17 → 0.11"
    assert scorecard.prose("Krotov and Hopfield's beta = 1/T^n outside F") == (
        r"Krotov and Hopfield's $\beta_\text{out} = 1/T^n$ outside F")
    assert scorecard.where("Sec. 5.1, Fig. OriginalModelHyperparameterSearchN20") == (
        "Sec. 5.1, Fig. “original model hyperparameter search n = 20”")
    claim = {"paper": {"quote": "q", "where": "Sec. 5.3, Figs. ModifiedModelMNISTHyperparameterSearch"},
             "claim": "at n >= 10", "rule": "r", "readings": {},
             "bottom_line": {"verdict": "partly", "reason": "no reading reproduces it"}}
    text = scorecard.claim_markdown(claim)
    assert "“modified model MNIST hyperparameter search”" in text and "at n ≥ 10" in text
    assert "**Bottom line: partly.** No reading reproduces it." in text


def test_math_punctuation_moves_no_other_text():
    """Text nodes are strings: the wrap must not take an equal "." from elsewhere (MyST
    splits a paragraph into separate text nodes, such as a lone "." after a glued number)."""
    from docutils import nodes  # noqa: PLC0415

    ext = _extension()
    para = nodes.paragraph()
    para += [nodes.Text("float64 "), nodes.math(text="n \\le"), nodes.Text(" "),
             nodes.strong(text="154"), nodes.Text("."), nodes.Text(" merely "),
             nodes.math(text="\\pm\\infty"), nodes.Text(".")]
    doc = nodes.document(None, None)
    doc += para
    before = para.astext()
    assert ext.keep_punctuation_with_math(doc) == 1
    assert para.astext() == before == "float64 n \\le 154. merely \\pm\\infty."
    assert para[-1].astext() == "\\pm\\infty." and ext.CLASS in para[-1]["classes"]
