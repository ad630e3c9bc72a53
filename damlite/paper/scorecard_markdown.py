"""The scorecard as a page shows it: Markdown from ``scorecard.json``, nothing graded here.

:mod:`damlite.paper.scorecard` grades and writes the JSON; these functions only render it
(MyST Markdown for the book's pages): the claim x reading matrix of verdict symbols
(:func:`matrix_markdown`), a claim in full (:func:`claim_markdown`), its evidence as tables
(:func:`evidence_dropdown`), the rule book (:func:`rules_markdown`) and the plain words of
the JSON in the book's notation (:func:`prose`).
"""
from __future__ import annotations

import re

__all__ = ["EDGE_WORDS", "FIGURE_COLOURS", "SYMBOLS", "beside_centres_table", "float32_table", "bottom_words", "claim_dropdown", "dropdown", "claim_markdown", "claim_paragraph",
           "claim_section", "count_words", "counts_text", "evidence_dropdown", "evidence_html", "firmness",
           "group_table", "html_table", "legend_markdown", "matrix_markdown", "prose", "report_tables",
           "rules_markdown", "summary_figure", "symbol", "undetermined_markdown", "verdict_cell",
           "verdict_cell_words", "verdict_short", "verdict_table", "where", "words"]

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
    decide them, or the grids that disagree. An HTML table (:func:`html_table`)."""
    heads = headers or {}
    rows = []
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
            names = "; ".join(it["item"] for it in items)
            said = [EDGE_WORDS.get(w, w) for w in sorted(why)]
            shaky = " (unstable)" if g.get("unstable") else ""
            rows.append([c.get("short") or c["claim"], f"{heads.get(label, label)}{shaky}", names,
                         "; ".join(said) or "–"])
    return html_table(["claim", "reading", "undetermined", "why"], rows) if rows else ""


# ------------------------------------------------------------------------------ the page of issue 44
# Chapter 8 shows each claim as: the quote, the test in one sentence, a verdict table per reading
# (HTML with the class "sc-table": it wraps its words inside the text column and stacks its cells
# at phone width, see _static/custom.css), the bottom line, and a dropdown of evidence.

#: Plain words (no maths: these go into HTML tables) for the scorecard's ASCII.
_PLAIN = (("beta = 1/T^n", "β = 1/Tⁿ"), ("beta = 1/T", "β = 1/T"), ("1/T_B = (1/T_A)^n", "1/T_B = (1/T_A)ⁿ"),
          ("1/T_A = (1/T_B)^(1/n)", "1/T_A = (1/T_B)^(1/n)"), ("0.1^2", "0.1²"), ("decades^2", "decades²"),
          ("decade^2", "decade²"), (">=", "≥"), ("<=", "≤"), (" -> ", " → "), ("T'", "T′"))
_INTERVAL = re.compile(r"(?<![\w.])(-?[0-9][0-9.e+-]*|0|-inf)\.\.(\+?-?[0-9][0-9.e+-]*|\+?inf)")


def _interval_words(m):
    lo, hi = m.group(1), m.group(2).lstrip("+")
    if lo in ("0", "-inf") and hi == "inf":
        return "anywhere (both ends open)"
    if hi == "inf":
        return f"{lo} or more"
    if lo in ("0", "-inf"):
        return f"{hi} or less"
    return f"{lo} to {hi}"


def words(text):
    """The scorecard's plain text as a table cell shows it: notation in Unicode, an interval
    ``0.1..inf`` as "0.1 or more", raw edge names (``invT_low``) as words."""
    for old, new in _PLAIN:
        text = text.replace(old, new)
    text = _INTERVAL.sub(_interval_words, text)
    text = re.sub(r"(-?[0-9][0-9.e+-]*) to \+?inf\b", r"at least \1", text)  # a span open upward
    for edge, said in EDGE_WORDS.items():
        text = text.replace(edge, said.replace("runs ", ""))
    return text


def _html(text):
    import html  # noqa: PLC0415

    return html.escape(words(str(text)), quote=False)


def html_table(head, rows, cls="sc-table", widths=None):
    """An HTML table of words (escaped) with the page's class; each cell carries its column's
    heading (``data-label``) for the stacked layout at phone width. ``widths``: each column's share
    of the table's width in per cent (default: equal shares)."""
    cols = "" if not widths else "<colgroup>" + "".join(f'<col style="width: {w:g}%">' for w in widths) + "</colgroup>"
    out = [f'<table class="{cls}">{cols}<thead><tr>' + "".join(f"<th>{_html(h)}</th>" for h in head)
           + "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(f'<td data-label="{_html(h)}">{_html(c)}</td>' for h, c in zip(head, row))
                   + "</tr>")
    return "\n".join(out) + "</tbody></table>"


_VERDICT_WORD = {"supported": "supported", "refuted": "refuted", "undetermined": "undetermined",
                 "not tested": "not tested", "missing input": "missing input"}


def firmness(g):
    """How firm a reading's verdict is, in words: bootstrap share, noise floor, identity, margin."""
    out = []
    if g.get("identity"):
        out.append("identity: compares a network with itself; not counted")
    if g.get("noise"):
        out.append("unstable at rounding level: " + g["noise"])
    if g.get("bootstrap_same") is not None:
        share = f"{g['bootstrap_same']:.0%} of resamples agree"
        out.append(share + (" (unstable: not counted)" if g["bootstrap_same"] < 0.8 else ""))
    elif g.get("total") and g.get("margin"):
        out.append(f"one repeat; turned by {g['margin']}")
    if g.get("slice"):
        out.append(f"one learning rate ({g['slice']['learning_rate']:g})")
    return "; ".join(out) or "–"


def count_words(g):
    """``2 of 3 n support it`` (or tests, for a claim tested across n)."""
    if not g.get("total"):
        return "–"
    per = "n" if any(it.get("n") is not None for it in g.get("items", [])) else "tests"
    return f"{g['supported']} of {g['total']} {per} support it"


def _short_firmness(g):
    if g.get("identity"):
        return "identity: not counted"
    if g.get("noise"):
        return "unstable at rounding level"
    if g.get("bootstrap_same") is not None:
        share = g["bootstrap_same"]
        return f"unstable ({share:.0%} agree)" if share < 0.8 else f"{share:.0%} agree"
    if g.get("total") and g.get("margin"):
        return f"one run; margin {g['margin']}"
    return ""


def verdict_cell_words(g):
    """One reading's verdict in a few words: symbol, verdict, how many n (or tests) support it, how
    firm it is; the verdict over every n (rule ``concession``) and "one learning rate" where they apply."""
    if g["verdict"] == "not tested":
        return "– not run yet" if g.get("slice") else "– not tested"
    if g["verdict"] == "missing input":
        return "! missing input"
    per = "n" if any(it.get("n") is not None for it in g.get("items", [])) else "tests"
    parts = [f"{symbol(g)} {g['verdict']}, {g['supported']} of {g['total']} {per}"]
    firm = _short_firmness(g)
    if firm:
        parts.append(firm)
    if g.get("all_n") and g["all_n"]["total"]:
        parts.append(f"every n: {g['all_n']['verdict']}")
    if g.get("slice"):
        parts.append("one learning rate")
    return "; ".join(parts)


def verdict_table(c, heads=None, *, skip_untested=True):
    """A claim's verdict per reading as an HTML table of one row, a column per reading (each cell:
    :func:`verdict_cell_words`); at phone width the cells stack as "reading: verdict" lines."""
    heads = heads or {}
    shown = [(label, g) for label, g in c["readings"].items()
             if not (skip_untested and g["verdict"] == "not tested" and not g.get("slice")
                     and not (g.get("all_n") or {}).get("total"))]
    return html_table([heads.get(label, label) for label, _ in shown],
                      [[verdict_cell_words(g) for _, g in shown]])


def claim_section(c, heads=None):
    """A claim for the page: one paragraph (the paper's words in italics, the test in one sentence,
    the bottom line), then the verdict table (:func:`verdict_table`)."""
    bl = c["bottom_line"]
    test = f"**Test**: {prose(c['rule'])}."
    if c.get("about"):
        test += f" ({_sentence(prose(c['about']['why']))}.)"
    test += f" **Bottom line: {bl['verdict']}.** {_sentence(prose(bl['reason']))}."
    quote = f"*“{c['paper']['quote']}”* ({where(c['paper']['where'])})."
    return "\n".join([f"{quote} {test}", "", verdict_table(c, heads), ""])


def _evidence_rows(g):
    rows = []
    for p in g["per_n"]:
        best = p.get("best_distance", p.get("best_f1"))
        unit = "distance" if "best_distance" in p else "F1"
        net = p["network"] + (f", {p['setting']}" if "setting" in p else "")
        grid = p["grid"] + ("" if p["N"] in (100, 794) else f", N = {p['N']}")
        past = ", ".join(EDGE_WORDS[e].replace("runs ", "") for e in p["censored"]) or "inside the grid"
        rows.append([p.get("item") or "", net, grid, p["repeats"], f"{unit} {_num(best, '.3g')}",
                     _num(p.get("area")), _num(p["centre_inv_T"]), past, p["outcome"]])
    return rows


def evidence_html(c, heads=None):
    """The evidence of a claim in a collapsed MyST dropdown: per reading, what decided each item
    (in words) and a table of the good regions behind it (n, network, grid, repeats, best cell,
    good area in decades², 1/T centre, the edges the region runs past, outcome)."""
    heads = heads or {}
    body = []
    for label, g in c["readings"].items():
        if g["verdict"] == "not tested" and not g.get("items"):
            why = g.get("note") or ("not run: " + ", ".join(g["slice"]["not_run"]) if g.get("slice") else "")
            if why:
                body += [f"**{heads.get(label, label)}**: not tested ({words(why)}).", ""]
            continue
        body += [f"**{heads.get(label, label)}**: {g['verdict']}, {count_words(g)}.", ""]
        for it in g.get("items", []):
            said = [f"{p['grid']}: {p['note']}" if len(it.get("grids", {})) > 1 else p["note"]
                    for p in g["per_n"] if p.get("item") == it["item"] and p.get("note")]
            own = it.get("note", "")
            note = "; ".join(said + ([own] if own and not any(own in x for x in said) else []))
            extra = "; ".join(x for x in (note, f"turned by {it['margin']}" if it.get("margin") else "") if x)
            body.append(f"- {words(prose(it['item']))}: **{it['outcome']}**" + (f". {words(extra)}" if extra else ""))
        if g.get("slice") and g["slice"]["not_run"]:
            body.append(f"- not run yet: {', '.join(g['slice']['not_run'])}")
        if g["per_n"]:
            body += ["", html_table(["item", "network", "grid", "repeats", "best cell", "good area (decades²)",
                                     "centre 1/T (1/T′)", "runs past", "outcome"], _evidence_rows(g),
                                    cls="sc-table sc-evidence")]
        body.append("")
    text = "\n".join(body).rstrip()
    return f":::{{dropdown}} The evidence: {c['short']}\n{text}\n:::"


#: Colours of the summary figure, one per verdict (colour-blind safe: blue, orange, grey).
FIGURE_COLOURS = {"supported": "#3b75af", "refuted": "#d9822b", "undetermined": "#b8b8b8",
                  "not tested": "#ffffff", "missing input": "#ffffff"}


def summary_figure(card, heads=None, *, width=6.88):
    """The claims x readings matrix as a figure: one square per graded reading, coloured by its verdict
    and marked with its symbol; unstable verdicts (bootstrap or noise floor) hatched, identities pale.
    Returns the matplotlib figure."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    heads = heads or {}
    labels = []
    for task in ("aa", "mnist", "secondary", "run", "theory"):  # the autoassociative readings first, exact last
        for c in card["claims"]:
            if c["task"] == task:
                labels += [k for k in c["readings"] if k not in labels]
    cs = card["claims"]
    fig, ax = plt.subplots(figsize=(width, 0.15 * len(cs) + 1.5))
    for i, c in enumerate(cs):
        for j, label in enumerate(labels):
            g = c["readings"].get(label)
            if g is None:
                continue
            colour = FIGURE_COLOURS.get(g["verdict"], "#ffffff")
            alpha = 0.35 if g.get("identity") else 1.0
            ax.add_patch(Rectangle((j, i), 0.92, 0.86, facecolor=colour, alpha=alpha, edgecolor="#666666",
                                   linewidth=0.4, hatch="////" if g.get("unstable") and not g.get("identity") else None))
            mark = "" if g["verdict"] == "not tested" else SYMBOLS["identity"] if g.get("identity") else \
                SYMBOLS.get(g["verdict"], "")  # an unstable verdict keeps its symbol, hatched
            ax.text(j + 0.46, i + 0.45, mark, ha="center", va="center", fontsize=8.5)
        verdict = c["bottom_line"]["verdict"]
        if verdict.startswith("only under "):  # which readings: the squares say
            k = len(verdict[len("only under "):].split("; "))
            verdict = f"only under {k} reading{'s' * (k != 1)}"
        ax.text(len(labels) + 0.2, i + 0.45, verdict, va="center", fontsize=8)
    ax.set_xlim(0, len(labels) + 5.4)
    ax.set_ylim(len(cs), 0)
    ax.set_yticks([i + 0.45 for i in range(len(cs))], [c["short"] for c in cs], fontsize=8)
    ax.set_xticks([j + 0.46 for j in range(len(labels))], [heads.get(k, k) for k in labels], fontsize=8,
                  rotation=55, ha="left")
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.text(len(labels) + 1.2, -0.4, "bottom line", fontsize=8, fontweight="bold")
    fig.tight_layout()
    return fig


def report_tables(card):
    """The report's parts as page blocks: {name: markdown} for the effect sizes, the sensitivity
    table, compute, the manifest of unused blocks and the protocol deviations."""
    rep = card.get("report") or {}
    out = {}
    eff = rep.get("effect_sizes") or []
    rows = []
    for e in eff:
        ci = (f"{e['interval'][0]:+.2f} to {e['interval'][1]:+.2f}" if e.get("interval") else "one repeat: none")
        bound = {"at most": "at most (runs past the low 1/T edge)", "at least": "at least (runs past the high 1/T edge)",
                 "unbounded": "no bound (runs past both 1/T edges)"}.get(e.get("bound"), "measured")
        rows.append([e["claim"], e["reading"], e["n"], e["grid"], f"{e['centre']:.3g} vs {e['paper']:g}",
                     f"{e['decades']:+.2f}", ci, bound])
    out["effects"] = html_table(["claim", "reading", "n", "grid", "centre vs paper (1/T)", "decades",
                                 "95 % interval (decades)", "the value is"], rows, cls="sc-table sc-evidence")
    rows = [[f"{s['tolerance']} = {s['value']:g}", f"× {s['factor']:g} → {s['tried']:g}",
             "; ".join(f"{m['claim']}: {m['from']} → {m['to']}" for m in s["moved"]) or "none moves"]
            for s in rep.get("sensitivity") or []]
    out["sensitivity"] = html_table(["tolerance", "changed to", "bottom lines that move"], rows)
    comp = rep.get("compute") or {"files": []}
    rows = [[f["file"].split("/")[-1], f["blocks"], f"{f['block_hours']:.2f}", ", ".join(f["hardware"]),
             ", ".join(f["dtype"]), ", ".join(f["days"])] for f in comp["files"]]
    out["compute"] = html_table(["result file", "blocks", "block-hours", "hardware", "dtype", "days"], rows,
                                cls="sc-table sc-evidence")
    man = rep.get("manifest") or {"rows": []}
    rows = [[m["file"].split("/")[-1], m["blocks"], ", ".join(m["networks"]), ", ".join(map(str, m["n"])), m["why"]]
            for m in man["rows"]]
    out["manifest"] = html_table(["result file", "blocks", "networks", "n", "why no claim reads them"], rows)
    rows = [[d["what"], d["paper"], d["ours"]] for d in rep.get("deviations") or []]
    out["deviations"] = html_table(["what", "the paper", "these runs"], rows)
    return out


# ------------------------------------------------------------------------------ one claim, short
# Chapter 8 at a glance and short (issue 44: under 12,000 px at 1280 px): per group of claims one
# verdict table (a row per claim, a column per reading), then per claim one paragraph (its name,
# the paper's words, the bottom line) and one collapsed dropdown (the test, how firm each verdict
# is, the evidence in one table). Collapsed content adds nothing to the page's height.

def verdict_short(g):
    """One reading's verdict in a table cell that fits ~100 px: ``✗ 0/3`` (k of m n or tests support
    it), marked *unstable*, *identity* or *every n ✗* (rule ``concession``) where those apply."""
    if g["verdict"] == "not tested":
        return "– not run yet" if g.get("slice") else "–"
    if g["verdict"] == "missing input":
        return "! missing"
    text = f"{symbol(g) if not g.get('identity') else SYMBOLS[g['verdict']]} {g['supported']}/{g['total']}"
    if g.get("identity"):
        text += " identity"
    elif g.get("unstable"):
        text += " unstable"
    if g.get("all_n") and g["all_n"]["total"]:
        text += f" (every n {SYMBOLS.get(g['all_n']['verdict'], '')})"
    return text


def group_table(claims, heads=None, titles=None):
    """The verdicts of a group of claims: a row per claim (its title, a cell per reading of
    :func:`verdict_short`, the bottom line), as an HTML table that fits the column and stacks at phone
    width. ``titles``: claim id -> the name shown (default: the claim's ``short``)."""
    heads, titles = heads or {}, titles or {}
    labels = []
    for c in claims:
        labels += [k for k, g in c["readings"].items() if k not in labels]
    rows = [[titles.get(c["id"], c["short"])] + [verdict_short(c["readings"][k]) if k in c["readings"] else ""
                                               for k in labels] + [bottom_words(c["bottom_line"]["verdict"], heads)]
            for c in claims]
    share = 56 / max(len(labels), 1)  # the readings share what the claim and its bottom line leave
    return html_table(["claim"] + [heads.get(k, k) for k in labels] + ["bottom line"], rows,
                      widths=[22] + [share] * len(labels) + [22])


def bottom_words(verdict, heads=None):
    """A bottom line in the page's short reading names: ``only under A + leak; A + leak, K = P`` becomes
    ``only under A + leak; K = P`` with ``heads`` = {"A + leak, K = P": "K = P"}."""
    heads = heads or {}
    if not verdict.startswith("only under "):
        return verdict
    return "only under " + "; ".join(heads.get(k, k) for k in verdict[len("only under "):].split("; "))


def claim_paragraph(c, title=None, heads=None, *, place=False):
    """A claim in one line of MyST: its name (``title``; the claim's ``short`` when None, none when ""),
    the paper's words in italics (and where they stand, with ``place``), the bottom line (reading names
    shortened by ``heads``)."""
    name = prose(c["short"]) if title is None else title
    at = f" ({where(c['paper']['where'])})" if place else ""
    verdict = bottom_words(c["bottom_line"]["verdict"], heads)
    return (f"**{name}.** " if name else "") + f"*“{c['paper']['quote']}”*{at}. **{_sentence(verdict)}.**"


def _grouped_evidence(c, heads):
    """All readings' evidence of a claim in one table (a reading column), or "" when none has any."""
    rows = []
    for label, g in c["readings"].items():
        for r in _evidence_rows(g):
            rows.append([heads.get(label, label)] + r)
    if not rows:
        return ""
    return html_table(["reading", "item", "network", "grid", "repeats", "best cell", "good area (decades²)",
                       "centre 1/T (1/T′)", "runs past", "outcome"], rows, cls="sc-table sc-evidence")


def claim_dropdown(c, heads=None, extra="", title="The test and the evidence", name=None):
    """A claim's test, its verdict per reading with how firm each is (:func:`verdict_table`), what decided
    each item and the evidence in one table, in a collapsed MyST dropdown headed ``title`` (one line of
    MyST, e.g. :func:`claim_paragraph`; in body weight, the dropdowns of a page close together) and
    labelled ``name`` (a target for ``{ref}``). ``extra``: MyST added after the bottom line (e.g. the
    upper edges beside a centre test)."""
    heads = heads or {}
    bl = c["bottom_line"]
    test = f"**Test**: {prose(c['rule'])}."
    if c.get("about"):
        test += f" ({_sentence(prose(c['about']['why']))}.)"
    body = [f"*{where(c['paper']['where'])}.* {test}", "",
            f"**Bottom line: {bl['verdict']}.** {_sentence(prose(bl['reason']))}.", ""]
    if extra:
        body += [extra, ""]
    body += [verdict_table(c, heads), ""]
    for label, g in c["readings"].items():
        if g["verdict"] == "not tested" and not g.get("items"):
            why = g.get("note") or ("not run: " + ", ".join(g["slice"]["not_run"]) if g.get("slice") else "")
            if why:
                body += [f"**{heads.get(label, label)}**: not tested ({words(why)}).", ""]
            continue
        lines = []
        for it in g.get("items", []):
            said = [f"{p['grid']}: {p['note']}" if len(it.get("grids", {})) > 1 else p["note"]
                    for p in g["per_n"] if p.get("item") == it["item"] and p.get("note")]
            own = it.get("note", "")
            note = "; ".join(said + ([own] if own and not any(own in x for x in said) else []))
            more = "; ".join(x for x in (note, f"turned by {it['margin']}" if it.get("margin") else "") if x)
            lines.append(f"- {words(prose(it['item']))}: **{it['outcome']}**" + (f". {words(more)}" if more else ""))
        if g.get("slice") and g["slice"]["not_run"]:
            lines.append(f"- not run yet: {', '.join(g['slice']['not_run'])}")
        body += [f"**{heads.get(label, label)}**: {g['verdict']}, {count_words(g)}.", ""] + lines + [""]
    table = _grouped_evidence(c, heads)
    if table:
        body += ["The good regions behind them:", "", table]
    text = "\n".join(body).rstrip()
    return dropdown(title, text, name=name, weight="normal")


def dropdown(title, body, *, name=None, weight=None):
    """A collapsed MyST dropdown of ``body`` headed ``title`` (its title in body weight with
    ``weight="normal"``), labelled ``name`` for ``{ref}``; a page's dropdowns sit close together (a
    small margin and padding: collapsed, each is one line of the page)."""
    opts = [":margin: 0 1 0 0", ":class-title: sd-py-1" + (f" sd-font-weight-{weight}" if weight else "")]
    opts += [f":name: {name}"] if name else []
    return "::::{dropdown} " + title + "\n" + "\n".join(opts) + "\n\n" + body + "\n::::"


def beside_centres_table(rows, heads=None):
    """Beside a centre test (``rows``: its entries of ``measurements.beside_centres``): per reading and
    (network, grid, N), over the n whose region counts, how many decades the centres, the upper edges and
    the best cells span, and the n whose lower edge follows the optimiser's step floor. An HTML table, or
    "" without rows."""
    heads = heads or {}
    if not rows:
        return ""

    def dec(x):
        return "–" if x is None else f"{x:.2f}"
    body = [[heads.get(r["reading"], r["reading"]),
             f"{r['network']}, {r['grid']}" + ("" if r["N"] in (100, 794) else f", N = {r['N']}"),
             ", ".join(map(str, r["n"])), dec(r["centre_decades"]), dec(r["upper_decades"]),
             dec(r["best_decades"]), ", ".join(map(str, r["floor_n"])) or "none"] for r in rows]
    return html_table(["reading", "network, grid", "n", "centres span (decades)", "upper edges span",
                       "best cells' top span", "lower edge on the step floor at n"], body,
                      cls="sc-table sc-evidence")


def float32_table(rows):
    """The committed float32 runs (``measurements.float32_runs``) per file, network, F, N and n: runs and
    how many are not finite. An HTML table, or "" without rows."""
    if not rows:
        return ""
    body = [[r["file"].replace("autoassociative-", ""), r["network"], r["F"], r["N"], r["n"], r["runs"],
             r["not_finite"]] for r in rows]
    return html_table(["file", "network", "F", "N", "n", "runs", "not finite"], body, cls="sc-table sc-evidence")
