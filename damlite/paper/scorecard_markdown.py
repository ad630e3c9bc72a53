"""The scorecard as a page shows it: Markdown from ``scorecard.json``, nothing graded here.

:mod:`damlite.paper.scorecard` grades and writes the JSON; these functions only render it
(MyST Markdown for the book's pages): the claim x reading matrix of verdict symbols
(:func:`matrix_markdown`), a claim in full (:func:`claim_markdown`), its evidence as tables
(:func:`evidence_dropdown`), the rule book (:func:`rules_markdown`) and the plain words of
the JSON in the book's notation (:func:`prose`).
"""
from __future__ import annotations

import re

__all__ = ["EDGE_WORDS", "SYMBOLS", "claim_markdown", "counts_text", "evidence_dropdown", "legend_markdown", "matrix_markdown",
           "prose", "rules_markdown", "symbol", "undetermined_markdown", "verdict_cell", "where"]

#: One symbol per verdict in the matrix (:func:`symbol`).
SYMBOLS = {"supported": "✓", "refuted": "✗", "undetermined": "?", "unstable": "~", "identity": "=",
           "not tested": "–", "missing input": "!"}
_SYMBOL_WORDS = {"supported": "supported", "refuted": "refuted", "undetermined": "undetermined",
                 "unstable": "unstable, before the verdict's symbol (fewer than 80 % of bootstrap resamples "
                             "repeat it: no bottom line)",
                 "identity": "identity (the claim compares a network with itself under this reading)",
                 "not tested": "not tested (not run, or not applicable, under this reading)",
                 "missing input": "missing input"}

#: The grid edges a good region can run past, in words.
EDGE_WORDS = {"invT_low": "runs below the lowest 1/T", "invT_high": "runs above the highest 1/T",
              "lr_low": "runs below the lowest rate", "lr_high": "runs above the highest rate"}

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
    margin = f" ({g['margin']})" if g.get("margin") else ""  # one repeat: the cells that would turn it
    if g.get("unstable") and not g.get("identity"):  # the verdict, marked: it carries no bottom line
        return f"{SYMBOLS['unstable']}{SYMBOLS[g['verdict']]} {g['supported']}/{g['total']}{margin}"
    return f"{symbol(g)} {g['supported']}/{g['total']}{margin}"


def matrix_markdown(card, tasks, *, headers=None, link=None, one_column=None):
    """The claim x reading matrix of verdict symbols for the claims of ``tasks``.

    A cell reads *symbol k/m*: the verdict's symbol (:data:`SYMBOLS`) and k supported of
    the m values of n (or tests) it covers. ``headers``: reading label -> column heading.
    ``link``: claim id -> a MyST label; the claim's short name links there. ``one_column``:
    a heading for claims graded under one reading each (a column says which reading).
    """
    cs = [c for c in card["claims"] if c["task"] in tasks]
    if not cs:
        return ""
    heads = headers or {}

    def name(c):
        text = prose(c.get("short") or c["claim"])
        return f"{{ref}}`{text} <{link[c['id']]}>`" if link and c["id"] in link else text
    if one_column:
        lines = [f"| claim | reading | {one_column} | bottom line |", "|---|---|---|---|"]
        for c in cs:
            (label, g), = c["readings"].items()
            lines.append(f"| {name(c)} | {heads.get(label, label)} | {_matrix_cell(g)} | {c['bottom_line']['verdict']} |")
        return "\n".join(lines)
    labels = []
    for c in cs:
        labels += [k for k in c["readings"] if k not in labels]
    lines = ["| claim | " + " | ".join(heads.get(k, k) for k in labels) + " | bottom line |",
             "|---" * (len(labels) + 2) + "|"]
    for c in cs:
        cells = [_matrix_cell(c["readings"][k]) if k in c["readings"] else "" for k in labels]
        lines.append(f"| {name(c)} | " + " | ".join(cells) + f" | {c['bottom_line']['verdict']} |")
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
    lines = ["| item | network | grid | best | good area | centre 1/T (1/T′) | centre rate | edges | outcome |",
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
            said = [f"{p['grid']}: {p['note']}" if len(it.get("grids", {})) > 1 else p["note"]
                    for p in g["per_n"] if p.get("item") == it["item"] and p.get("note")]
            own = it.get("note", "")
            note = "; ".join(said + ([own] if own and not any(own in x for x in said) else []))
            extra = "; ".join(x for x in (note, f"grids: {grids}" if len(it.get("grids", {})) > 1
                                          else "", f"margin {it['margin']}" if it.get("margin") else "") if x)
            body.append(f"- {prose(it['item'])}: **{it['outcome']}**" + (f". {prose(extra)}" if extra else ""))
        if g["per_n"]:
            body += [""] + _evidence_table(g)
        body.append("")
    text = "\n".join(body).rstrip()
    return f":::{{dropdown}} The evidence, item by item\n{text}\n:::"


def undetermined_markdown(card, *, headers=None):
    """One row per claim and reading with undetermined items (identities left out; an unstable
    verdict says so): the items and why: the grid edges their regions run past that could
    decide them, or the grids that disagree."""
    heads = headers or {}
    lines = ["| claim | reading | undetermined | why |", "|---|---|---|---|"]
    for c in card["claims"]:
        matter = set(c.get("edges_that_matter") or ())
        for label, g in c["readings"].items():
            if g.get("identity"):
                continue
            items = [it for it in g.get("items", []) if it["outcome"] == "undetermined"]
            if not items:
                continue
            why = set()
            for it in items:
                if "disagree" in it.get("note", ""):
                    why.add("grids disagree")
                why |= {e for p in g["per_n"] if p.get("item") == it["item"] and p["outcome"] == "undetermined"
                        for e in p["censored"] if e in matter}
            names = "; ".join(prose(it["item"]) for it in items)
            words = [EDGE_WORDS.get(w, w) for w in sorted(why)]
            shaky = " (unstable)" if g.get("unstable") else ""
            lines.append(f"| {prose(c.get('short') or c['claim'])} | {heads.get(label, label)}{shaky} | {names} "
                         f"| {'; '.join(words) or '–'} |")
    return "\n".join(lines) if len(lines) > 2 else ""
