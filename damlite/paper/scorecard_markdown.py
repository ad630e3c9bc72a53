"""The scorecard as a page shows it: Markdown from ``scorecard.json``, nothing graded here.

:mod:`damlite.paper.scorecard` grades and writes the JSON; these functions only render it
(MyST Markdown for the book's pages): the claim x reading matrix of verdict symbols
(:func:`matrix_markdown`), a claim in full (:func:`claim_markdown`), its evidence as tables
(:func:`evidence_dropdown`), the rule book (:func:`rules_markdown`) and the plain words of
the JSON in the book's notation (:func:`prose`).
"""
from __future__ import annotations

import re

__all__ = ["SYMBOLS", "claim_markdown", "counts_text", "evidence_dropdown", "legend_markdown", "matrix_markdown",
           "prose", "rules_markdown", "symbol", "verdict_cell", "where"]

#: One symbol per verdict in the matrix (:func:`symbol`).
SYMBOLS = {"supported": "✓", "refuted": "✗", "undetermined": "?", "unstable": "~", "identity": "=",
           "not tested": "–", "missing input": "!"}
_SYMBOL_WORDS = {"supported": "supported", "refuted": "refuted", "undetermined": "undetermined",
                 "unstable": "unstable (fewer than 80 % of bootstrap resamples repeat the verdict)",
                 "identity": "identity (the claim compares a network with itself under this reading)",
                 "not tested": "not tested (not run, or not applicable, under this reading)",
                 "missing input": "missing input"}

#: ASCII notation in the scorecard's words (kept plain in the JSON) and how a page shows it.
_PROSE = (
    ("beta = 1/T^n", r"$\beta_\text{out} = 1/T^n$"),
    ("beta = 1/T", r"$\beta_\text{out} = 1/T$"),
    ("1/T_B = (1/T_A)^n", "$1/T_B = (1/T_A)^n$"),
    ("decades^2", "decades²"),
    ("decade^2", "decade²"),
    (">=", "≥"),
    ("<=", "≤"),
    (" -> ", " → "),
    ("T'", "T′"),
)


def prose(text):
    r"""The scorecard's plain-text words as a page shows them: ``n >= 20`` as ``n ≥ 20``,
    ``beta = 1/T^n`` as the maths :math:`\beta_\text{out} = 1/T^n`, ``T'`` as ``T′``.

    Only for rendering (MyST markdown); the JSON keeps the ASCII the tests compare.
    """
    for old, new in _PROSE:
        text = text.replace(old, new)
    return text


def _figure_words(label):
    """A figure of the paper named by its LaTeX label, as words: ``OriginalModelHyperparameterSearchN20``
    becomes “original model hyperparameter search n = 20” (the paper's text keeps the labels)."""
    words = re.findall(r"MNIST|N\d+|[A-Z][a-z]+", label)
    text = " ".join(w if w == "MNIST" else f"n = {w[1:]}" if w[0] == "N" else w.lower() for w in words)
    return f"“{text}”"


def where(text):
    """The paper's place of a claim (``Sec. 5.1, Fig. OriginalModelHyperparameterSearch``), its
    figure labels as words."""
    return re.sub(r"\b(?:Original|Modified)Model\w+", lambda m: _figure_words(m.group()), text)


def _sentence(text):
    return text[:1].upper() + text[1:]


def _kind(g):
    """The matrix's word for a graded reading: its verdict, or identity / unstable over it."""
    if g["verdict"] in ("not tested", "missing input"):
        return g["verdict"]
    if g.get("identity"):
        return "identity"
    if g.get("unstable"):
        return "unstable"
    return g["verdict"]


def symbol(g):
    """The verdict symbol of one graded reading (:data:`SYMBOLS`)."""
    return SYMBOLS[_kind(g)]


def counts_text(g):
    """``1 supported / 2 refuted / 0 undetermined of 3``."""
    if not g.get("total"):
        return "–"
    return (f"{g['supported']} supported / {g['refuted']} refuted / {g['undetermined']} undetermined "
            f"of {g['total']}")


def verdict_cell(g, bootstrap=True):
    """A verdict as a table cell: ``refuted (1/3, 96%)`` (k supported of m, bootstrap agreement),
    with *identity* or *unstable* added where they apply."""
    if g["verdict"] in ("not tested", "missing input"):
        return "–" if g["verdict"] == "not tested" else "missing input"
    boot = "" if not bootstrap or g.get("bootstrap_same") is None else f", {g['bootstrap_same']:.0%}"
    mark = " identity" if g.get("identity") else " unstable" if g.get("unstable") else ""
    return f"{g['verdict']}{mark} ({g['supported']}/{g['total']}{boot})"


def _matrix_cell(g):
    if g["verdict"] in ("not tested", "missing input"):
        return SYMBOLS[g["verdict"]]
    return f"{symbol(g)} {g['supported']}/{g['total']}"


def matrix_markdown(card, tasks, *, headers=None, link=None):
    """The claim x reading matrix of verdict symbols for the claims of ``tasks``.

    A cell reads *symbol k/m*: the verdict's symbol (:data:`SYMBOLS`) and k supported of
    the m values of n (or tests) it covers. ``headers``: reading label -> column heading.
    ``link``: claim id -> a MyST reference for the claim's name.
    """
    cs = [c for c in card["claims"] if c["task"] in tasks]
    if not cs:
        return ""
    labels = []
    for c in cs:
        labels += [k for k in c["readings"] if k not in labels]
    heads = [(headers or {}).get(k, k) for k in labels]
    lines = ["| claim | " + " | ".join(heads) + " | bottom line |", "|---" * (len(labels) + 2) + "|"]
    for c in cs:
        name = prose(c["claim"])
        if link and c["id"] in link:
            name = f"[{name}]({link[c['id']]})"
        cells = [_matrix_cell(c["readings"][k]) if k in c["readings"] else "" for k in labels]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {c['bottom_line']['verdict']} |")
    return "\n".join(lines)


def legend_markdown():
    """The symbols of :func:`matrix_markdown`, in words."""
    return "; ".join(f"**{s}** {_SYMBOL_WORDS[k]}" for k, s in SYMBOLS.items()) + "."


def rules_markdown(card, names=None):
    """The rule book as a numbered list (only ``names`` if given), each rule named."""
    rules = [r for r in card["rules"] if names is None or r["name"] in names]
    return "\n".join(f"{i}. **{r['name']}**: {prose(r['text'])}" for i, r in enumerate(rules, 1))


def _caveats(g):
    out = []
    if g.get("identity"):
        out.append("identity: " + prose(g["identity"]))
    if g.get("unstable"):
        out.append("unstable: no bottom line")
    reps = g.get("repeats") or []
    if reps:
        out.append("repeats " + "/".join(map(str, reps)))
    if g.get("margin"):
        out.append(f"margin {g['margin']}")
    if g.get("note"):
        out.append(g["note"])
    return "; ".join(out)


def claim_markdown(c):
    """A claim in full: the paper's words, the rule and the rules it uses, a verdict per reading, the bottom line."""
    out = [f"> “{c['paper']['quote']}” ({where(c['paper']['where'])})", "",
           f"**Graded as**: {prose(c['claim'])}. **Rule**: {prose(c['rule'])}."]
    if c.get("rules"):
        grids = f"; grids: {', '.join(c['grids'])}" if c.get("grids") else ""
        out[-1] += f" *Rules used*: {', '.join(c['rules'])}{grids}."
    out.append("")
    if c["readings"]:
        out += ["| reading | verdict | of the n (or tests) | bootstrap | caveats |", "|---|---|---|---|---|"]
        for label, g in c["readings"].items():
            boot = "–" if g.get("bootstrap_same") is None else f"{g['bootstrap_same']:.0%}"
            out.append(f"| {label} | {symbol(g)} {g['verdict']} | {counts_text(g)} | {boot} | {_caveats(g)} |")
        out.append("")
    out += [f"**Bottom line: {c['bottom_line']['verdict']}.** {_sentence(prose(c['bottom_line']['reason']))}.", ""]
    return "\n".join(out)


def _num(x, fmt=".2g"):
    return "–" if x is None else format(x, fmt)


def _evidence_table(g):
    lines = ["| item | network | grid | best | good area | centre 1/T | centre rate | edges | outcome |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in g["per_n"]:
        best = p.get("best_distance", p.get("best_f1"))
        net = p["network"] + (f", {p['setting']}" if "setting" in p else "")
        grid = p["grid"] + ("" if p["N"] in (100, 794) else f", N = {p['N']}")
        lines.append(f"| {prose(p.get('item') or '')} | {net} | {grid} | {_num(best, '.3g')} | {_num(p.get('area'))} "
                     f"| {_num(p['centre_inv_T'])} | {_num(p['centre_lr'])} | {', '.join(p['censored']) or '–'} "
                     f"| {p['outcome']} |")
    return lines


def evidence_dropdown(c):
    """The evidence of a claim in a collapsed MyST dropdown: per reading, one line per item
    (its outcome and what decided it) and a table of the good regions behind it."""
    body = []
    for label, g in c["readings"].items():
        body.append(f"**{label}**: {counts_text(g)}" + (f" ({g['verdict']})" if g.get("total") else
                                                          f" ({g['verdict']})"))
        body.append("")
        for it in g.get("items", []):
            grids = ", ".join(f"{k} {v}" for k, v in it.get("grids", {}).items())
            extra = "; ".join(x for x in (it.get("note", ""), f"grids: {grids}" if len(it.get("grids", {})) > 1
                                          else "", f"margin {it['margin']}" if it.get("margin") else "") if x)
            body.append(f"- {prose(it['item'])}: **{it['outcome']}**" + (f". {prose(extra)}" if extra else ""))
        if g["per_n"]:
            body += [""] + _evidence_table(g)
        body.append("")
    text = "\n".join(body).rstrip()
    return f":::{{dropdown}} The evidence, item by item\n{text}\n:::"
