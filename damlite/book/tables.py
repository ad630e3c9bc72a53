"""Tables for a book page: HTML whose words wrap and whose numbers stay on one line.

A computed table on a page is HTML, not printed text: printed columns are cut at the
right edge of a phone, and a Markdown table cannot size its columns to their content.
:class:`Table` renders as HTML in the book, Jupyter and Colab (``_repr_html_``) and
prints as aligned text elsewhere. Its text columns wrap; its number columns do not, and
are right-aligned. ``_static/custom.css`` styles the class ``dl-table`` on the book's
pages; the inline styles here are what Jupyter and Colab show without that stylesheet.
"""
from __future__ import annotations

import html
import re

__all__ = ["Markup", "Table", "verdict_table"]


class Markup(str):
    """A cell (or a heading) that is HTML already, shown as it is: ``Markup("β<sub>out</sub>")``.

    Everything else in a :class:`Table` is text and is escaped.
    """


_NUMBER = re.compile(r"^[−+\-]?(\d[\d\s,]*)?(\.\d+)?(e[−+\-]?\d+)?\s*%?$|^[−+\-]?(inf|nan)$", re.I)
_EMPTY = {"", "–", "—", "-", "none", "n/a"}


def _is_number(value):
    """True for numbers and for text that reads as one (``"1.2e-05"``, ``"95%"``, ``"3 000"``)."""
    if isinstance(value, Markup):
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    text = str(value).strip()
    return bool(text) and any(ch.isdigit() for ch in text) and bool(_NUMBER.match(text))


def _plain(value):
    """A cell as plain text (a heading's line breaks become spaces; HTML tags are dropped)."""
    text = re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", " ", str(value))) if isinstance(value, Markup) else str(value)
    return " ".join(html.unescape(text).split())


def _html(value):
    """A cell as HTML: Markup as it is, text escaped, a line break in a heading kept."""
    if isinstance(value, Markup):
        return str(value)
    return "<br>".join(html.escape(part) for part in str(value).split("\n"))


class Table:
    """A table of rows under a header; a row that is a single string spans the whole table.

    Parameters
    ----------
    header : sequence of str
        Column headings; a ``"\\n"`` in a heading breaks its line.
    rows : sequence
        Each row a sequence of cells (numbers or text, one per column; :class:`Markup`
        for HTML), or a single string: a line across the whole table (a claim above its
        verdicts, a group's name above its rows).
    caption : str
        A line above the table.
    note : str
        A line of small print under the table.
    align : sequence of {"left", "right"}, optional
        One per column; by default a column of numbers is right-aligned and does not
        wrap, and any other column is left-aligned and wraps.
    stack : bool
        On a narrow screen (the book's pages at phone width) show each row as a block of
        "heading: value" lines instead of columns: for tables too wide for a phone.
    """

    def __init__(self, header, rows, *, caption="", note="", align=None, stack=False):
        self.header = list(header)
        self.rows = [r if isinstance(r, str) else list(r) for r in rows]
        widths = {len(r) for r in self.rows if not isinstance(r, str)}
        if widths - {len(self.header)}:
            raise ValueError(f"rows: every row needs {len(self.header)} cells (one per heading), got {sorted(widths)}")
        if align is not None and len(align) != len(self.header):
            raise ValueError(f"align: one entry per column ({len(self.header)}), got {len(align)}")
        self.caption, self.note, self.stack = caption, note, stack
        self.align = list(align) if align is not None else [self._guess_align(i) for i in range(len(self.header))]

    def _guess_align(self, i):
        cells = [r[i] for r in self.rows if not isinstance(r, str) and _plain(r[i]).lower() not in _EMPTY]
        return "right" if cells and all(_is_number(c) for c in cells) else "left"

    def column(self, name):
        """The cells of the column headed ``name`` (spanning rows left out)."""
        i = [_plain(h) for h in self.header].index(name)
        return [r[i] for r in self.rows if not isinstance(r, str)]

    def __len__(self):
        return sum(not isinstance(r, str) for r in self.rows)

    # ------------------------------------------------------------------ text
    def __str__(self):
        body = [r if isinstance(r, str) else [_plain(c) for c in r] for r in self.rows]
        head = [_plain(h) for h in self.header]
        widths = [max([len(head[i])] + [len(r[i]) for r in body if not isinstance(r, str)])
                  for i in range(len(head))]

        def line(cells):
            return "  ".join(c.rjust(w) if a == "right" else c.ljust(w)
                             for c, w, a in zip(cells, widths, self.align)).rstrip()

        out = [self.caption] if self.caption else []
        out += [line(head), "  ".join("-" * w for w in widths)]
        out += [_plain(r) if isinstance(r, str) else line(r) for r in body]
        return "\n".join(out + ([self.note] if self.note else []))

    __repr__ = __str__

    # ------------------------------------------------------------------ HTML
    #: Inline styles: the table reads well in Jupyter and Colab without the book's stylesheet.
    TABLE_STYLE = "border-collapse: collapse; margin: 0.5em 0"
    HEAD_STYLE = "padding: 0.25em 0.6em; vertical-align: bottom; border-bottom: 1px solid currentColor"
    TEXT_STYLE = "padding: 0.25em 0.6em; white-space: normal; text-align: left; vertical-align: top"
    NUMBER_STYLE = ("padding: 0.25em 0.6em; white-space: nowrap; text-align: right; vertical-align: top; "
                    "font-variant-numeric: tabular-nums")
    SPAN_STYLE = "padding: 0.5em 0.6em 0.1em; white-space: normal; text-align: left; font-weight: 600"

    def _repr_html_(self):
        labels = [html.escape(_plain(h), quote=True) for h in self.header]
        kinds = ["dl-num" if a == "right" else "dl-text" for a in self.align]
        styles = [self.NUMBER_STYLE if a == "right" else self.TEXT_STYLE for a in self.align]
        head = "".join(f'<th class="{k}" style="{self.HEAD_STYLE}; text-align: {a}">{_html(h)}</th>'
                       for h, k, a in zip(self.header, kinds, self.align))
        body = []
        for r in self.rows:
            if isinstance(r, str):
                body.append(f'<tr class="dl-span"><td colspan="{len(self.header)}" style="{self.SPAN_STYLE}">'
                            f"{_html(r)}</td></tr>")
            else:
                body.append("<tr>" + "".join(f'<td class="{k}" data-label="{lab}" style="{s}">{_html(c)}</td>'
                                             for c, k, lab, s in zip(r, kinds, labels, styles)) + "</tr>")
        classes = "dl-table dl-stack" if self.stack else "dl-table"
        caption = (f'<caption style="caption-side: top; text-align: left; padding: 0.2em 0">'
                   f"{_html(self.caption)}</caption>") if self.caption else ""
        note = f'<p class="dl-note" style="font-size: 0.85em; margin: 0">{_html(self.note)}</p>' if self.note else ""
        return (f'<div class="dl-table-wrap"><table class="{classes}" style="{self.TABLE_STYLE}">{caption}'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}</div>")


# ------------------------------------------------------------------ the scorecard's verdicts
#: The scorecard's plain-text notation (kept in its JSON) as HTML for a table cell.
_WORDS = (
    ("beta = 1/T^n", "β<sub>out</sub> = 1/T<sup>n</sup>"),
    ("beta = 1/T", "β<sub>out</sub> = 1/T"),
    ("1/T_B = (1/T_A)^n", "1/T<sub>B</sub> = (1/T<sub>A</sub>)<sup>n</sup>"),
    (">=", "≥"),
    ("<=", "≤"),
    (" -> ", " → "),
    ("T'", "T′"),
    ("decades^2", "decades²"),
    ("decade^2", "decade²"),
)
#: A power of ten written as a float literal ("1e-2"), shown as 10 to that power.
_POWER_OF_TEN = re.compile(r"\b1e([+-]?)0*(\d+)\b")
#: How a verdict reads in a cell (the scorecard's three outcomes, :mod:`damlite.paper.claims`).
_VERDICT = {"supported": "supported", "refuted": "refuted", "undetermined": "undetermined",
            "missing input": "missing input"}


def claim_html(text):
    """A claim of the scorecard as HTML: ``n >= 20`` as ``n ≥ 20``, ``beta = 1/T^n`` with
    sub- and superscripts, ``T'`` as ``T′``, ``decade^2`` as ``decade²``, ``1e-2`` as 10⁻²."""
    out = html.escape(text, quote=False)
    for old, new in _WORDS:
        out = out.replace(html.escape(old, quote=False), new)
    out = _POWER_OF_TEN.sub(lambda m: f"10<sup>{'−' if m.group(1) == '-' else ''}{m.group(2)}</sup>", out)
    return Markup(out)


def verdict_html(graded):
    """One reading's verdict on one claim: the word, and under it k/m (the values of n supported),
    with *identity* or *unstable* where the scorecard marks them (they carry no bottom line)."""
    if graded.get("verdict", "not tested") == "not tested":
        return Markup('<span title="not tested">–</span>')
    word = _VERDICT.get(graded["verdict"], graded["verdict"])
    mark = " (identity)" if graded.get("identity") else " (unstable)" if graded.get("unstable") else ""
    count = f"{graded.get('supported', 0)}/{graded.get('total', 0)}"
    return Markup(f'{html.escape(word + mark)}<br><span class="dl-count" style="font-size: 0.85em; opacity: 0.8">'
                  f"{count}</span>")


def verdict_table(card, task, *, readings=None):
    """The scorecard's claims of one task as a table: each claim across the table, its
    verdict under each reading in the row below it.

    Parameters
    ----------
    card : dict
        The scorecard (``book/results/scorecard.json``, read with ``json.loads``).
    task : str
        ``"aa"`` (autoassociative) or ``"mnist"``.
    readings : sequence of str, optional
        The readings to show, in order (default: those of the task's first claim).

    Returns
    -------
    Table
        One column per reading; a cell reads the verdict (supported, refuted or undetermined)
        over "k/m": k of the m values of n (or grids) the claim covers are supported.
    """
    claims = [c for c in card["claims"] if c["task"] == task]
    if not claims:
        raise ValueError(f"task: no claims of task {task!r} in the scorecard")
    labels = list(readings or claims[0]["readings"])
    rows = []
    for c in claims:
        rows.append(claim_html(c["claim"][:1].upper() + c["claim"][1:]))
        rows.append([verdict_html(c["readings"].get(k, {})) for k in labels])
    header = [k.replace(", ", ",\n") for k in labels]
    return Table(header, rows, align=["left"] * len(labels), stack=True,
                 note="Each cell: the verdict, and k/m, the values of n (or grids) supported of those the "
                      "claim covers; – not tested.")
