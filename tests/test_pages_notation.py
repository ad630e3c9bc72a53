"""The book's notation, kept on its pages and in what damlite itself says.

The normalized network's temperature is T′ (the original's is T = N T′); a message about the
normalized network that prints "T=0.7" sends a reader to the wrong axis. The pages keep ε (not
ϵ), "decade²" (not "decade^2") and Δ for the energy difference only.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

import damlite

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("0[1-7]_*.ipynb")) + [ROOT / "book" / "quickstart.ipynb"]
#: A temperature printed as plain T ("T=0.7", "T = 0.7"), not T′ or T'.
PLAIN_T = re.compile(r"(?<![\w′'])T\s?=\s?[0-9]")


def normalized_messages():
    """What damlite says when a normalized network's fit freezes (n = 25 in float32: the
    outputs vanish; a small fit, three epochs: a fit's checks judge no fewer)."""
    rng = np.random.default_rng(0)
    patterns = rng.choice([-1.0, 1.0], size=(8, 40))
    net = damlite.DenseAssociativeMemory(8, interaction="polynomial", n=25, variant="normalized",
                                         temperature=0.7, dtype="float32", backend="numpy", random_state=0,
                                         epochs=3, batch_size=4, learning_rate=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net.fit(patterns)
    return [str(w.message) for w in caught]


def test_the_temperature_reader():
    assert PLAIN_T.search("in the normalized network (N=100, n=25, T=0.7)")
    assert PLAIN_T.search("(T = 0.5)")
    assert not PLAIN_T.search("(N=100, n=25, T′=0.7)")
    assert not PLAIN_T.search("T'=0.7 and 1/T′ = 2")


def test_messages_about_the_normalized_network_write_t_prime():
    said = [m for m in normalized_messages() if "normalized network" in m]
    assert said, "the frozen fit no longer warns: choose another setting that does"
    plain = [m for m in said if PLAIN_T.search(m)]
    assert not plain, f"messages about the normalized network that print T for T′: {plain[0][:160]!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_pages_keep_the_notation(path):
    nb = nbformat.read(path, as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    captions = "\n".join(c.metadata.get("mystnb", {}).get("figure", {}).get("caption", "") for c in nb.cells)
    text = prose + "\n" + captions
    assert "\\epsilon" not in text and "ϵ" not in text, "write ε (\\varepsilon), as the rest of the book does"
    assert "decade^2" not in text and "decades^2" not in text, "write decade²"
    assert not re.search(r"(?<![\w`$])1e-\d", prose), "write 10⁻² ($10^{-2}$) in prose, not 1e-2"
    assert "Δ distance" not in text and "\\Delta \\text{distance" not in text, "Δ is the energy difference"


EXERCISE = re.compile(r"^:::\{admonition\} Exercise\n:class: tip\n", re.M)


@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.stem[:2].isdigit()], ids=lambda p: p.stem)
def test_one_exercise_style(path):
    """Every chapter sets its exercises alike: a tip admonition "Exercise", the solution's code
    behind one toggle ("Solution: show the code and what it prints"), then a "Solution" dropdown
    that says what the numbers mean."""
    cells = nbformat.read(path, as_version=4).cells
    starts = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and "{admonition} Exercise" in c.source]
    assert starts, f"{path.stem}: no exercises"
    for i in starts:
        assert EXERCISE.search(cells[i].source), f"{path.stem}: cell {i}: exercise box not a tip admonition"
        follow = cells[i + 1:i + 4]
        code = [c for c in follow if c.cell_type == "code"]
        if code:  # an exercise solved by reasoning alone has no code
            meta = code[0].metadata
            assert "hide-cell" in meta.get("tags", []), f"{path.stem}: cell {i}: solution code not behind a toggle"
            assert meta.get("mystnb", {}).get("code_prompt_show", "").startswith("Solution"), (
                f"{path.stem}: cell {i}: the toggle does not say it holds the solution")
        assert any(c.cell_type == "markdown" and c.source.startswith(":::{dropdown} Solution") for c in follow), (
            f"{path.stem}: cell {i}: no worked solution (a Solution dropdown) after the exercise")


def test_scorecard_claims_keep_the_notation_in_a_chapter_table():
    """Chapters 6 and 7 show the scorecard's claims (kept in ASCII in the JSON) in a table."""
    from damlite.book.tables import claim_html  # noqa: PLC0415

    shown = str(claim_html("near 1/T = 1e-2; at least 1 decade^2 for n >= 10 (T' up to 1e3)"))
    assert shown == "near 1/T = 10<sup>−2</sup>; at least 1 decade² for n ≥ 10 (T′ up to 10<sup>3</sup>)"


@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.stem[:2].isdigit()], ids=lambda p: p.stem)
def test_chapter_opens_with_its_result(path):
    """A chapter says what it finds, in one sentence under its title, before the setup."""
    first = nbformat.read(path, as_version=4).cells[0].source
    lines = [line for line in first.splitlines() if line.strip()]
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    lead = lines[title + 1]
    assert lead.startswith("**The result in one sentence.** "), f"{path.stem}: no result sentence under the title"
    assert lead.count(". ") <= 1 and lead.endswith("."), f"{path.stem}: the result is one sentence"
