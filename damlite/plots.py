"""Plotting helpers for the book's chapters (matplotlib; small, one figure idea each).

Chapters call these so that their cells stay short. Colours come from the
Okabe-Ito palette (distinguishable with the common colour-vision deficiencies)
and every series also differs in line style or marker, so nothing relies on
colour alone.
"""
from __future__ import annotations

import numpy as np

#: Okabe-Ito colours.
OKABE_ITO = {
    "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "black": "#000000",
}


def _axes(ax, ncols=1, figsize=(6.4, 4.0)):
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if ax is not None:
        return ax
    _, ax = plt.subplots(1, ncols, figsize=figsize, constrained_layout=True)
    return ax


# ------------------------------------------------------------------ numerics (chapter 3)
#: One style per floating-point format: colour, line style, marker.
FORMAT_STYLES = {
    "float16": dict(color=OKABE_ITO["orange"], linestyle="-", marker="s"),
    "bfloat16": dict(color=OKABE_ITO["purple"], linestyle="--", marker="^"),
    "float32": dict(color=OKABE_ITO["green"], linestyle="-", marker="o"),
    "float64": dict(color=OKABE_ITO["blue"], linestyle="-", marker="D"),
}


def plot_overflow_frontier(Ns, curves, *, mark=None, ax=None, title=None):
    """Largest safe n against N (log-log), one step curve per format.

    ``curves`` maps a format name to the largest safe n for each N in ``Ns``
    (:func:`damlite.numerics.frontier_curve`); ``mark`` = (N, n, label) adds a point.
    Below a curve the original network's largest term N**n is finite in that format.
    """
    ax = _axes(ax)
    for name, ns in curves.items():
        style = FORMAT_STYLES.get(name, {})
        ns = np.asarray(ns, dtype=float)
        ns[ns < 1] = np.nan  # not even n = 1 fits: nothing to draw on a log axis
        ax.step(Ns, ns, where="post", color=style.get("color"), linestyle=style.get("linestyle", "-"),
                label=name, linewidth=2 if name != "bfloat16" else 1.5)
    if mark is not None:
        N, n, label = mark
        ax.plot([N], [n], marker="*", markersize=14, color=OKABE_ITO["vermillion"], linestyle="none", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("network dimension N (largest similarity score)")
    ax.set_ylabel("largest interaction vertex n with N$^n$ finite")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(title="format")
    if title:
        ax.set_title(title)
    return ax


def plot_power_and_limits(N, n, formats=("float16", "bfloat16", "float32", "float64"), *, axes=None):
    """Two panels for one (N, n): log10 F_n(x) = n log10 x up to x = N against each format's
    largest value, and the overflow frontier over N with (N, n) marked.

    Works in log10 so that no value overflows while drawing it.
    """
    from . import numerics  # noqa: PLC0415

    axes = _axes(axes, ncols=2, figsize=(11, 4.0))
    left, right = axes
    x = np.logspace(0, np.log10(N), 200)
    left.plot(x, n * np.log10(x), color=OKABE_ITO["black"], label=f"$F_{{{n}}}(x) = x^{{{n}}}$")
    for name in formats:
        fmt = numerics.get_format(name)
        style = FORMAT_STYLES.get(name, {})
        left.axhline(float(numerics.mpmath.log10(fmt.max)), color=style.get("color"),
                     linestyle=style.get("linestyle", "-"), label=f"{name} max")
    top = float(n * np.log10(N))
    left.plot([N], [top], marker="*", markersize=14, color=OKABE_ITO["vermillion"], linestyle="none",
              label=f"x = N: $10^{{{top:.1f}}}$")
    left.set_xscale("log")
    left.set_xlabel("similarity score x")
    left.set_ylabel("log$_{10}$ F$_n$(x)")
    left.legend(fontsize="small")
    left.set_title(f"N = {N:,}, n = {n}")
    Ns = np.unique(np.round(np.logspace(np.log10(3), 6, 160)).astype(int))
    curves = {name: numerics.frontier_curve(Ns, name) for name in formats}
    plot_overflow_frontier(Ns, curves, mark=(N, n, f"(N, n) = ({N:,}, {n})"), ax=right)
    return axes


def plot_precision_study(study, *, axes=None, cap=10.0):
    """Median relative error of the energy differences, and wrong signs, against n.

    Colour = variant (original, normalized, adaptive), line style = dtype. A median
    that is inf or NaN is drawn at ``cap`` with a cross.
    """
    axes = _axes(axes, ncols=2, figsize=(11, 4.0))
    colours = {"original": OKABE_ITO["vermillion"], "normalized": OKABE_ITO["blue"], "adaptive": OKABE_ITO["green"]}
    styles = {"float32": "-", "float64": ":"}
    markers = {"original": "o", "normalized": "s", "adaptive": "^"}
    ns = np.asarray(study.ns)
    for c, (variant, dtype) in enumerate(study.configs):
        kw = dict(color=colours.get(variant), linestyle=styles.get(dtype, "-"), marker=markers.get(variant),
                  markersize=4, label=f"{variant}, {dtype}")
        err = np.asarray(study.median_error[c], dtype=float)
        bad = ~np.isfinite(err)
        axes[0].plot(ns, np.where(bad, np.nan, np.minimum(err, cap)), **kw)
        if bad.any():
            axes[0].plot(ns[bad], np.full(bad.sum(), cap), linestyle="none", marker="x", color=kw["color"],
                         markersize=8)
        axes[1].plot(ns, 100.0 * np.asarray(study.sign_errors[c]) / study.entries, **kw)
    axes[0].set_yscale("log")
    axes[0].axhline(cap, color="grey", linewidth=0.8)
    axes[0].set_xlabel("interaction vertex n")
    axes[0].set_ylabel("median relative error of Δ")
    axes[0].set_title(f"× at the top: inf/NaN (N={study.N}, K={study.K})")
    axes[1].set_xlabel("interaction vertex n")
    axes[1].set_ylabel("neurons with the wrong update sign (%)")
    axes[1].legend(fontsize="small")
    return axes


def plot_underflow_frontier(xs, formats=("float16", "bfloat16", "float32", "float64"), *, marks=None, ax=None):
    """Largest n for which x**n does not round to 0, against the normalized score x (log-log).

    ``marks`` maps a label to an x value to annotate (for example 1 - 2/N).
    """
    from . import numerics  # noqa: PLC0415

    ax = _axes(ax)
    for name in formats:
        style = FORMAT_STYLES.get(name, {})
        ns = [numerics.underflow_frontier(1, name, overlap=float(x)) for x in xs]
        ax.plot(xs, ns, color=style.get("color"), linestyle=style.get("linestyle", "-"), label=name, linewidth=2)
    for label, x in (marks or {}).items():
        ax.axvline(x, color="grey", linewidth=0.8, linestyle=":")
        ax.annotate(label, (x, 1.2), rotation=90, fontsize="small", ha="right", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("normalized similarity score x = overlap / N")
    ax.set_ylabel("largest n with x$^n$ not rounded to 0")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(title="format")
    return ax
