"""Sphinx extension: inline maths keeps its punctuation on its line.

MathJax renders inline maths as an inline block, and a browser may break a line on
either side of one, so a narrow page can show "… and $n = 30$" with the ";" that
follows it alone at the start of the next line, or an opening "(" left at the end of
a line. This post-transform wraps each inline ``math`` node together with the
punctuation that touches it (an opening bracket just before, closing punctuation just
after) in ``<span class="math-nowrap">``, which ``_static/custom.css`` keeps on one
line (``white-space: nowrap``). Nothing else changes: the text, the maths and the
spaces around them stay as written.
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

CLASS = "math-nowrap"
_AFTER = re.compile(r"^[.,;:!?)\]}’”»%]+")  # punctuation glued to the end of the maths
_BEFORE = re.compile(r"[(\[{‘“«]+$")  # an opening bracket glued to its start


def keep_punctuation_with_math(document: nodes.Node) -> int:
    """Wrap every inline ``math`` node with its touching punctuation; return how many.

    A math node whose neighbours are text starting with ``. , ; : ! ? ) ] }`` (or
    ending with ``( [ {``), with no space between, gets that punctuation moved into a
    ``nodes.inline`` with class ``math-nowrap`` that also holds the maths.
    """
    wrapped = 0
    for math in list(document.findall(nodes.math)):
        parent = math.parent
        if parent is None or (isinstance(parent, nodes.inline) and CLASS in parent["classes"]):
            continue
        # by position, never parent.remove(): docutils Text nodes are strings, so removing
        # one removes the first *equal* string in the paragraph (another ".")
        kids = parent.children
        i = next(k for k, child in enumerate(kids) if child is math)
        nxt = kids[i + 1] if i + 1 < len(kids) else None
        prv = kids[i - 1] if i > 0 else None
        after = _AFTER.match(nxt.astext()) if isinstance(nxt, nodes.Text) else None
        before = _BEFORE.search(prv.astext()) if isinstance(prv, nodes.Text) else None
        if not (after or before):
            continue
        box = nodes.inline(classes=[CLASS])
        if before:
            box += nodes.Text(before.group())
        box += math.deepcopy()
        if after:
            box += nodes.Text(after.group())
        replacement = []
        if before and prv.astext()[: before.start()]:
            replacement.append(nodes.Text(prv.astext()[: before.start()]))
        replacement.append(box)
        if after and nxt.astext()[after.end():]:
            replacement.append(nodes.Text(nxt.astext()[after.end():]))
        first, last = (i - 1 if before else i), (i + 1 if after else i)
        for node in replacement:
            node.parent = parent
        kids[first:last + 1] = replacement
        wrapped += 1
    return wrapped


class MathPunctuation(SphinxPostTransform):
    default_priority = 900  # after references are resolved; only layout changes here
    formats = ("html",)

    def run(self, **kwargs) -> None:
        keep_punctuation_with_math(self.document)


def setup(app):
    app.add_post_transform(MathPunctuation)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
