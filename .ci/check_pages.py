#!/usr/bin/env python
"""After the book build: every executed page is clean (no stderr, errors or warnings,
no printed line wider than the column) and every picture it shows says what it shows
(alternative text for screen readers: one sentence, not a file name).

    python .ci/check_pages.py [_build/jupyter_execute]

Prints one line per problem and exits 1 if there is any.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

WIDTH = 88  # characters a page's output block shows without a horizontal scrollbar
WARNING = re.compile(r"\b\w*Warning\b|Traceback \(most recent call last\)")
IMAGES = ("image/png", "image/jpeg", "image/svg+xml")
HTML_ALT = re.compile(r"<img\b[^>]*?(?:\balt=\"([^\"]*)\"[^>]*)?>", re.S)


def alt_problem(alt):
    """Why ``alt`` does not describe a picture (None when it does): missing, empty, a file
    name or path (what Sphinx writes when none is given), or not a sentence of a few words."""
    text = (alt or "").strip()
    if not text:
        return "no alternative text"
    if re.search(r"\.(png|jpe?g|svg|gif)\b|_images/|^data:|^[0-9a-f]{16,}", text, re.I):
        return f"alternative text is a file name: {text[:60]!r}"
    if len(text.split()) < 5 or not text.endswith("."):
        return f"alternative text is not a sentence saying what the picture shows: {text[:60]!r}"
    return None


def picture_problems(cell):
    """Problems of the pictures one executed cell shows: each image output needs the cell's
    ``mystnb.image.alt``, each ``<img>`` of an HTML output its own ``alt``."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    if tags & {"remove-output", "remove-cell"}:
        return []
    alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")
    out = []
    for o in cell.get("outputs", []):
        data = o.get("data", {})
        if any(kind in data for kind in IMAGES):
            out.append(alt_problem(alt))
        elif "text/html" in data:
            out += [alt_problem(m.group(1)) for m in HTML_ALT.finditer("".join(data["text/html"]))]
    return [p for p in out if p]


def problems(path):
    """Problems of one executed notebook, as 'file: cell N: what' lines."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        out += [f"{path}: cell {i}: a picture with {p}" for p in dict.fromkeys(picture_problems(cell))]
        tags = set(cell.get("metadata", {}).get("tags", []))
        collapsed = bool(tags & {"hide-output", "remove-output", "hide-cell", "remove-cell"})
        for o in cell.get("outputs", []):
            kind = o.get("output_type")
            text = "".join(o.get("text", "")) if kind == "stream" else ""
            data = o.get("data", {})
            plain = "".join(data.get("text/plain", "")) if set(data) == {"text/plain"} else ""
            wide = [line for line in (text + plain).splitlines() if len(line) > WIDTH]
            if wide and "remove-output" not in tags:
                out.append(f"{path}: cell {i}: {len(wide)} output lines over {WIDTH} characters: "
                           f"{wide[0][:60]!r}...")
            if kind == "error":
                out.append(f"{path}: cell {i}: error {o.get('ename')}: {o.get('evalue', '')[:120]}")
            elif kind == "stream" and o.get("name") == "stderr":
                out.append(f"{path}: cell {i}: stderr output: {text.strip()[:120]!r}")
            elif kind == "stream" and WARNING.search(text):
                out.append(f"{path}: cell {i}: a warning in the output: {text.strip()[:120]!r}")
            elif kind == "stream" and len(text.splitlines()) > 40 and not collapsed:
                out.append(f"{path}: cell {i}: {len(text.splitlines())} lines of output (collapse or summarise)")
    return out


def main(argv=None):
    root = Path((argv or sys.argv[1:] or ["_build/jupyter_execute"])[0])
    found = [p for nb in sorted(root.rglob("*.ipynb")) for p in problems(nb)]
    for line in found:
        print(line)
    print(f"checked {len(list(root.rglob('*.ipynb')))} executed pages: {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
