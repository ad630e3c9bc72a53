"""Floating-point formats and where they break (chapter 3)."""
from __future__ import annotations

import functools

import numpy as np

from ._style import OKABE_ITO, _axes

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
    (:func:`damlite.paper.numerics.frontier_curve`); ``mark`` = (N, n, label) adds a point.
    Below a curve the original network's largest term N**n is finite in that format.
    Sized for a 7.2-inch column; the legend sits in the empty upper right.
    """
    ax = _axes(ax, figsize=(7.2, 4.2))
    top = 1.0
    for name, ns in curves.items():
        style = FORMAT_STYLES.get(name, {})
        ns = np.asarray(ns, dtype=float)
        ns[ns < 1] = np.nan  # not even n = 1 fits: nothing to draw on a log axis
        if np.isfinite(ns).any():
            top = max(top, float(np.nanmax(ns)))
        dashed = style.get("linestyle", "-") != "-"
        ax.step(Ns, ns, where="post", color=style.get("color"), linestyle=style.get("linestyle", "-"),
                label=name, linewidth=1.5 if dashed else 2, zorder=3 if dashed else 2)
    if mark is not None:
        N, n, label = mark
        ax.plot([N], [n], marker="*", markersize=14, color=OKABE_ITO["vermillion"], linestyle="none", label=label)
        top = max(top, float(n))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.7, top * 30)  # head room for the legend
    ax.set_xlabel("network dimension N (largest similarity score)")
    ax.set_ylabel("largest n with N$^n$ finite")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right", ncol=2, fontsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


@functools.lru_cache(maxsize=8)
def _frontier_curves(formats):
    """(Ns, {format: largest safe n}) on a fixed log grid of N, computed once (explorer redraws)."""
    from ...paper import numerics  # noqa: PLC0415

    Ns = np.unique(np.round(np.logspace(np.log10(3), 6, 160)).astype(int))
    return Ns, {name: numerics.frontier_curve(Ns, name) for name in formats}


def plot_power_and_limits(N, n, formats=("float16", "bfloat16", "float32", "float64"), *, axes=None,
                          frontier=True):
    """log10 F_n(x) = n log10 x up to x = N against each format's largest value, and
    (``frontier=True``, below it) the overflow frontier over N with (N, n) marked.

    Works in log10 so that no value overflows while drawing it. The y axis ends just above
    the curve (or the nearest format limit above it); a limit far above is named in the
    legend only. Returns the list of axes (one or two).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from ...paper import numerics  # noqa: PLC0415

    if axes is None:
        rows, height = (2, 7.6) if frontier else (1, 4.0)
        _, axes = plt.subplots(rows, 1, figsize=(7.2, height), constrained_layout=True, squeeze=False)
        axes = list(axes[:, 0])
    left = axes[0]
    x = np.logspace(0, np.log10(N), 200)
    left.plot(x, n * np.log10(x), color=OKABE_ITO["black"], label=f"$F_{{{n}}}(x) = x^{{{n}}}$")
    top = float(n * np.log10(N))
    limits = {name: float(numerics.mpmath.log10(numerics.get_format(name).max)) for name in formats}
    # the y axis ends just above the curve, or above the next format's limit if that is near:
    # a limit far above (float64's 10**308 for a curve ending at 10**40) would squeeze the curve
    above = [v for v in limits.values() if v > top]
    ceiling = min(above) if above and min(above) <= 3 * max(top, 1.0) else top
    ymax = 1.15 * max(ceiling, top, 1.0)
    for name, limit in limits.items():
        style = FORMAT_STYLES.get(name, {})
        dashed = style.get("linestyle", "-") != "-"
        kw = dict(color=style.get("color"), zorder=3 if dashed else 2, linestyle=style.get("linestyle", "-"))
        if limit <= ymax:
            left.axhline(limit, label=f"{name} max", **kw)
        else:  # off the top: named in the legend only
            left.plot([], [], label=f"{name} max, $10^{{{limit:.0f}}}$ (above)", **kw)
    left.set_ylim(0, ymax)
    left.plot([N], [top], marker="*", markersize=14, color=OKABE_ITO["vermillion"], linestyle="none",
              label=f"x = N: $10^{{{top:.1f}}}$".replace(".0}", "}"))  # 10^{120}, not 10^{120.0}
    left.set_xscale("log")
    left.set_xlabel("similarity score x")
    left.set_ylabel("log$_{10}$ F$_n$(x)")
    left.legend(fontsize=9, loc="center left")
    left.set_title(f"N = {N:,}, n = {n}", fontsize=10)
    if frontier:
        Ns, curves = _frontier_curves(tuple(formats))
        plot_overflow_frontier(Ns, curves, mark=(N, n, f"(N, n) = ({N:,}, {n})"), ax=axes[1])
    return axes


def plot_precision_study(study, *, axes=None, cap=10.0):
    """Median relative error of the energy differences (top), and wrong signs (bottom), against n.

    Colour and marker = variant (original, normalized, adaptive), line style = dtype
    (solid float32, dotted float64 with open markers). Series that coincide stay
    visible: each variant is drawn thinner and with smaller markers than the one
    before, so a series lying on another shows as a core inside a halo. A median that
    is inf or NaN is drawn at ``cap`` with a cross (a legend entry says so).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if axes is None:
        _, axes = plt.subplots(2, 1, figsize=(7.2, 6.8), sharex=True, constrained_layout=True)
    colours = {"original": OKABE_ITO["vermillion"], "normalized": OKABE_ITO["blue"], "adaptive": OKABE_ITO["green"]}
    styles = {"float32": "-", "float64": ":"}
    markers = {"original": "o", "normalized": "s", "adaptive": "^"}
    widths = {"original": (3.4, 9), "normalized": (2.2, 6.5), "adaptive": (1.1, 4)}  # line width, marker size
    ns = np.asarray(study.ns)
    for c, (variant, dtype) in enumerate(study.configs):
        lw, ms = widths.get(variant, (1.5, 5))
        kw = dict(color=colours.get(variant), linestyle=styles.get(dtype, "-"), marker=markers.get(variant),
                  markersize=ms, linewidth=lw, label=f"{variant}, {dtype}",
                  mfc="white" if dtype == "float64" else None)
        err = np.asarray(study.median_error[c], dtype=float)
        bad = ~np.isfinite(err)
        axes[0].plot(ns, np.where(bad, np.nan, np.minimum(err, cap)), **kw)
        if bad.any():
            axes[0].plot(ns[bad], np.full(bad.sum(), cap), linestyle="none", marker="x", color=kw["color"],
                         markersize=9, markeredgewidth=2)
        axes[1].plot(ns, 100.0 * np.asarray(study.sign_errors[c]) / study.entries, **kw)
    axes[0].set_yscale("log")
    axes[0].axhline(cap, color="grey", linewidth=0.8)
    axes[0].set_ylabel("median relative error of Δ")
    axes[0].set_title(f"N = {study.N}, K = {study.K}: {study.entries} energy differences per point", fontsize=10)
    axes[1].set_xlabel("interaction vertex n")
    axes[1].set_ylabel("wrong update signs (%)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    handles, labels = axes[1].get_legend_handles_labels()
    handles.append(axes[0].plot([], [], linestyle="none", marker="x", color="0.3", markersize=9,
                                markeredgewidth=2)[0])
    labels.append("median inf/NaN (top edge)")
    axes[0].figure.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=9)
    return axes


def plot_underflow_frontier(xs, formats=("float16", "bfloat16", "float32", "float64"), *, marks=None, ax=None):
    """Largest n for which x**n does not round to 0, against the normalized score x (log-log).

    ``marks`` maps a label to an x value to annotate (for example 1 - 2/N).
    """
    from ...paper import numerics  # noqa: PLC0415

    ax = _axes(ax, figsize=(7.2, 4.2))
    for name in formats:
        style = FORMAT_STYLES.get(name, {})
        ns = [numerics.underflow_frontier(1, name, overlap=float(x)) for x in xs]
        dashed = style.get("linestyle", "-") != "-"
        ax.plot(xs, ns, color=style.get("color"), linestyle=style.get("linestyle", "-"), label=name, linewidth=2,
                zorder=3 if dashed else 2)
    for label, x in (marks or {}).items():
        ax.axvline(x, color="grey", linewidth=0.8, linestyle=":")
        ax.text(x, 0.02, " " + label, transform=ax.get_xaxis_transform(), rotation=90, fontsize=9,
                ha="right", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("normalized similarity score x = overlap / N")
    ax.set_ylabel("largest n with x$^n$ not rounded to 0")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(title="format", loc="upper left", fontsize=9, title_fontsize=9)
    return ax
