"""Plotting helpers for the book's chapters (matplotlib; small, one figure idea each).

Chapters call these so that their cells stay short. Colours come from the
Okabe-Ito palette (distinguishable with the common colour-vision deficiencies)
and every series also differs in line style or marker, so nothing relies on
colour alone.
"""
from __future__ import annotations

import functools

import numpy as np


def sharp_inline_figures():
    """Draw inline figures (Jupyter, Colab, the book's build) as PNGs at twice the resolution.

    IPython's ``retina`` format: the PNG has twice the pixels and is shown at the
    figure's normal size, so figures stay sharp on high-DPI screens and when a phone
    zooms in. Called once when this module is imported inside IPython; outside
    IPython (scripts, tests) it does nothing. A format the user chose is kept.
    """
    try:
        from IPython import get_ipython  # noqa: PLC0415
        from matplotlib_inline.backend_inline import InlineBackend, set_matplotlib_formats  # noqa: PLC0415
    except ImportError:  # pragma: no cover - IPython is not a damlite dependency
        return False
    shell = get_ipython()
    if shell is None or "Terminal" in type(shell).__name__:
        return False
    if set(InlineBackend.instance().figure_formats) - {"png"}:
        return False  # the user asked for something else (svg, retina, ...)
    set_matplotlib_formats("retina")
    return True


sharp_inline_figures()

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
    from ..paper import numerics  # noqa: PLC0415

    Ns = np.unique(np.round(np.logspace(np.log10(3), 6, 160)).astype(int))
    return Ns, {name: numerics.frontier_curve(Ns, name) for name in formats}


def plot_power_and_limits(N, n, formats=("float16", "bfloat16", "float32", "float64"), *, axes=None,
                          frontier=True):
    """log10 F_n(x) = n log10 x up to x = N against each format's largest value, and
    (``frontier=True``, below it) the overflow frontier over N with (N, n) marked.

    Works in log10 so that no value overflows while drawing it. Returns the list of
    axes (one or two).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from ..paper import numerics  # noqa: PLC0415

    if axes is None:
        rows, height = (2, 7.6) if frontier else (1, 4.0)
        _, axes = plt.subplots(rows, 1, figsize=(7.2, height), constrained_layout=True, squeeze=False)
        axes = list(axes[:, 0])
    left = axes[0]
    x = np.logspace(0, np.log10(N), 200)
    left.plot(x, n * np.log10(x), color=OKABE_ITO["black"], label=f"$F_{{{n}}}(x) = x^{{{n}}}$")
    for name in formats:
        fmt = numerics.get_format(name)
        style = FORMAT_STYLES.get(name, {})
        dashed = style.get("linestyle", "-") != "-"
        left.axhline(float(numerics.mpmath.log10(fmt.max)), color=style.get("color"), zorder=3 if dashed else 2,
                     linestyle=style.get("linestyle", "-"), label=f"{name} max")
    top = float(n * np.log10(N))
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
    from ..paper import numerics  # noqa: PLC0415

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


# ------------------------------------------------------------------ capacity (chapter 2)
def _seq_colors(k, cmap="viridis", stop=0.75):
    """k colours along a perceptually uniform, colour-blind-safe colormap."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return [plt.get_cmap(cmap)(v) for v in np.linspace(0.0, stop, max(k, 1))]


def plot_hopfield_capacity(result, *, alpha_c=0.138):
    """Fixed-point, retrieval and overlap curves of a Hebbian network against P/N.

    ``result`` from :func:`damlite.paper.capacity.hopfield_capacity_curve`.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    r = result
    fig, ax = plt.subplots(figsize=(7.2, 4.2), constrained_layout=True)
    ax.plot(r["load"], r["fixed"], "o-", color=OKABE_ITO["blue"], label="pattern is an exact fixed point")
    ax.plot(r["load"], r["recovered"], "s--", color=OKABE_ITO["orange"],
            label="noisy probe retrieved (overlap ≥ 0.9)")
    ax.plot(r["load"], r["overlap"], "^:", color=OKABE_ITO["green"], label="mean overlap after relaxing")
    ax.axvline(alpha_c, color="0.3", ls="-.", lw=1.2)
    ax.text(alpha_c, 0.03, f" P/N = {alpha_c}", color="0.3", fontsize=9)
    N = r["N"]
    ax.axvline(1 / (2 * np.log(N)), color="0.6", ls="--", lw=1)
    ax.text(1 / (2 * np.log(N)), 0.12, " 1/(2 ln N)", color="0.45", fontsize=9)
    ax.set_xlabel("load P/N (stored patterns per neuron)")
    ax.set_ylabel("fraction of patterns / overlap")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title(f"Hebbian network, N = {N}, {int(round(r['noise'] * 100))} % of the bits flipped in the probes",
                 fontsize=10)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.18), fontsize=9)
    return fig


def plot_interactions(ns=(2, 3, 4, 6), epsilon=0.1, x=None):
    """The four interaction functions of :mod:`damlite.interactions`, several n each (2 x 2 panels)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from ..interactions import make_interaction  # noqa: PLC0415

    x = np.linspace(-1.5, 1.5, 601) if x is None else x
    fig, grid = plt.subplots(2, 2, figsize=(7.2, 6.0), sharex=True, constrained_layout=True)
    axes = grid.ravel()
    names = [("polynomial", "polynomial $x^n$"), ("rectified_polynomial", "rectified $\\max(x,0)^n$"),
             ("leaky_rectified_polynomial", f"leaky rectified, $\\epsilon$ = {epsilon}")]
    styles = ["-", "--", "-.", ":"]
    for ax, (name, title) in zip(axes, names):
        for i, (color, n) in enumerate(zip(_seq_colors(len(ns)), ns)):
            ax.plot(x, make_interaction(name, n, epsilon)(x), color=color, ls=styles[i % 4], lw=1.8,
                    label=f"n = {n}")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(-1.5, 3)
    axes[3].plot(x, make_interaction("exponential")(x), color=OKABE_ITO["blue"], lw=1.8, label="$e^x$")
    axes[3].set_title("exponential $e^x$", fontsize=10)
    for ax in axes:
        ax.axhline(0, color="0.8", lw=0.8)
        ax.axvline(0, color="0.8", lw=0.8)
    for ax in grid[1]:
        ax.set_xlabel("similarity score x")
    for ax in grid[:, 0]:
        ax.set_ylabel("F(x)")
    axes[1].legend(fontsize=9, loc="upper left")  # the same n in the first three panels
    axes[3].legend(fontsize=9, loc="upper left")
    return fig


def plot_dam_capacity(curves, capacities, theory):
    """Top: fraction of stored patterns that are fixed points against P / P_KH(N, n).

    Bottom: the measured capacity (90 % level) against N, log-log, with the
    Krotov-Hopfield estimate N^(n-1) / (2 (2n-3)!! ln N) as lines.
    ``curves``: dicts from :func:`damlite.paper.capacity.dam_capacity_curve`;
    ``capacities``: {(n, N): P_90}; ``theory``: callable (N, n) -> P_KH.
    Colour = n; in the top panel the marker gives the size rank of N within its n
    (smallest, middle, ... largest), so that the legend stays short.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    ns = sorted({c["n"] for c in curves})
    col = dict(zip(ns, _seq_colors(len(ns))))
    sizes = {n: sorted({c["N"] for c in curves if c["n"] == n}) for n in ns}
    most = max(len(v) for v in sizes.values())
    markers, lines = "osD^v<>ph*", ["-", "--", ":", "-."]
    fig, (a0, a1) = plt.subplots(2, 1, figsize=(7.2, 8.0), constrained_layout=True)
    for c in curves:
        k = sizes[c["n"]].index(c["N"])
        a0.plot(c["P"] / theory(c["N"], c["n"]), c["fixed"], marker=markers[k % 10], ms=5, ls=lines[k % 4],
                lw=1.3, color=col[c["n"]], alpha=0.9)
    a0.axvline(1, color="0.4", ls=":")
    a0.axhline(0.9, color="0.6", ls="--", lw=1)
    a0.set_xscale("log")
    a0.set_xticks([0.25, 0.5, 1, 2, 4], labels=["1/4", "1/2", "1", "2", "4"])
    a0.minorticks_off()
    a0.set_xlabel("P / P$_{KH}$(N, n): stored patterns over the Krotov-Hopfield estimate")
    a0.set_ylabel("fraction that are fixed points")
    by_n = [Line2D([], [], color=col[n], lw=2, label=f"n = {n} (N = {', '.join(map(str, sizes[n]))})")
            for n in ns]
    rank_names = ["smallest N", "middle N", "largest N"] if most == 3 else [f"N no. {k + 1}" for k in range(most)]
    by_rank = [Line2D([], [], color="0.3", marker=markers[k % 10], ls=lines[k % 4], label=rank_names[k])
               for k in range(most)]
    first = a0.legend(handles=by_n, fontsize=9, loc="lower left")
    a0.add_artist(first)
    a0.legend(handles=by_rank, fontsize=9, loc="upper right")
    ymax = 1.0
    for n in ns:
        pts = sorted((N, P) for (m, N), P in capacities.items() if m == n)
        Nn = np.array([p[0] for p in pts], dtype=float)
        a1.plot(Nn, [p[1] for p in pts], "o", color=col[n], ms=7)
        grid = np.geomspace(Nn.min() * 0.8, Nn.max() * 1.25, 50)
        a1.plot(grid, theory(grid, n), "-", color=col[n], lw=1.2, alpha=0.8)
        ymax = max(ymax, float(np.max(theory(grid, n))), max(p[1] for p in pts))
        a1.annotate(f"n = {n}", (grid[-1], theory(grid[-1], n)), xytext=(4, 0), textcoords="offset points",
                    fontsize=9, va="center", color="0.2")
    a1.plot([], [], "o", color="0.4", label="measured capacity")
    a1.plot([], [], "-", color="0.4", label="estimate $N^{n-1} / (2 (2n-3)!!\\, \\ln N)$")
    a1.set_xscale("log")
    a1.set_yscale("log")
    a1.set_ylim(top=ymax * 12)  # head room for the legend
    a1.set_xlabel("N (neurons)")
    a1.set_ylabel("capacity P (90 % of patterns fixed)")
    a1.legend(fontsize=9, loc="upper left")
    return fig


def plot_recall(pattern, probe, final, *, title="", shape=None):
    """Three +-1 images side by side: stored pattern, noisy probe, relaxed state."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    N = np.asarray(pattern).size
    shape = shape or (int(np.sqrt(N)), -1)
    fig, axes = plt.subplots(1, 3, figsize=(7.2, 2.8), constrained_layout=True)
    for ax, img, t in zip(axes, (pattern, probe, final), ("stored pattern", "noisy probe", "after relaxing")):
        ax.imshow(np.asarray(img).reshape(shape), cmap="cividis", vmin=-1, vmax=1)
        ax.set_title(t, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(title, fontsize=10)
    return fig


# ------------------------------------------------------------------ homogeneity (chapter 4)
def plot_scale_sweep(scales, values, *, marks=None, ylabel="", title=""):
    """A quantity (e.g. a sign-safe energy difference) against the similarity scale a (log x)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6.5, 3.6), constrained_layout=True)
    ax.plot(scales, values, color=OKABE_ITO["blue"])
    ax.axhline(0, color="0.5", lw=0.8)
    top = ax.get_ylim()[1]
    for a, label in (marks or {}).items():
        ax.axvline(a, color="0.4", ls=":")
        ax.text(a, top * 0.85, f" {label}", color="0.3", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlabel("similarity scale a inside F")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return fig


def plot_disagreement_table(rows, *, x="n", group="epsilon", panel="networks", value="disagreement"):
    """Disagreement fractions (log y) against ``x``, one line per ``group``, one panel per ``panel``.

    ``rows``: list of dicts with those keys. Zero fractions are drawn as open
    markers on the bottom edge (a log axis cannot show 0). The panels are stacked
    (one row each, shared axes) so that the figure fits a 7.2-inch column.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    panels = list(dict.fromkeys(r[panel] for r in rows))
    groups = list(dict.fromkeys(r[group] for r in rows))
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.2, 1.2 + 2.0 * len(panels)), sharex=True, sharey=True,
                             squeeze=False, constrained_layout=True)
    positive = [r[value] for r in rows if r[value] > 0]
    floor = min(positive) / 3 if positive else 1e-4
    styles = ["o-", "s--", "^-.", "D:"]
    for ax, p in zip(axes[:, 0], panels):
        for i, (color, g) in enumerate(zip(_seq_colors(len(groups), stop=0.65), groups)):
            sel = [r for r in rows if r[panel] == p and r[group] == g]
            xs = np.array([r[x] for r in sel], dtype=float)
            ys = np.array([r[value] for r in sel], dtype=float)
            ax.plot(xs, np.where(ys > 0, ys, np.nan), styles[i % 4], color=color, label=f"{group} = {g}")
            ax.plot(xs[ys == 0], np.full(int((ys == 0).sum()), floor), styles[i % 4][0], mfc="none", color=color)
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 1.0)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(str(p), fontsize=10)
    fig.supylabel("fraction of updates that disagree", fontsize=10)
    axes[-1, 0].set_xlabel(x)
    axes[-1, 0].set_xticks(sorted({r[x] for r in rows}))
    axes[0, 0].legend(fontsize=9, loc="lower right")
    return fig


# ------------------------------------------------------------------ normalized in practice (chapter 5)
#: One colour and marker per way of scaling the update (original, normalized, adaptive).
SCALING_STYLES = {
    "original": dict(color=OKABE_ITO["vermillion"], marker="o"),
    "normalized": dict(color=OKABE_ITO["blue"], marker="s"),
    "adaptive": dict(color=OKABE_ITO["green"], marker="^"),
}


def plot_trajectory_gap(gaps, losses, *, controls=None, axes=None):
    """Top: largest ``|zeta_original - zeta_normalized|`` after each epoch (log y), one line per n.
    Bottom: the normalized network's training loss per epoch (log y).

    ``gaps`` and ``losses`` map n to arrays of shape (epochs,); ``controls`` (same
    form, optional) is drawn as thin dotted lines without markers in the same colours
    (no main line is dotted, so a control never looks like a curve). A gap of exactly 0
    (bitwise-equal memories) is drawn as an open marker on the bottom edge.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if axes is None:
        _, axes = plt.subplots(2, 1, figsize=(7.2, 6.4), sharex=True, constrained_layout=True)
    styles = ["o-", "s--", "^-.", "D-"]
    positive = [g[g > 0].min() for g in map(np.asarray, gaps.values()) if np.any(g > 0)]
    floor = min(positive) / 10 if positive else 1e-17
    for i, (color, n) in enumerate(zip(_seq_colors(len(gaps)), gaps)):
        g = np.asarray(gaps[n], dtype=float)
        epochs = np.arange(1, g.size + 1)
        style = styles[i % 4]
        axes[0].plot(epochs, np.where(g > 0, g, np.nan), style, color=color, markersize=4,
                     markevery=max(1, g.size // 12), label=f"n = {n}")
        if np.any(g == 0):
            axes[0].plot(epochs[g == 0], np.full(int((g == 0).sum()), floor), style[0], mfc="none", color=color,
                         markersize=4)
        if controls is not None and n in controls:
            c = np.asarray(controls[n], dtype=float)
            axes[0].plot(epochs, np.where(c > 0, c, np.nan), ":", color=color, linewidth=1.2, alpha=0.8)
        axes[1].plot(epochs, np.asarray(losses[n], dtype=float), style, color=color, markersize=4,
                     markevery=max(1, g.size // 12), label=f"n = {n}")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("max |ζ$_{original}$ − ζ$_{normalized}$|")
    axes[0].set_title("difference between the two networks' memories", fontsize=10)
    if controls is not None:
        axes[0].plot([], [], ":", color="0.3", linewidth=1.2, label="dotted: one-ulp control")
    axes[0].legend(fontsize=9, ncol=2)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("epoch")
    axes[1].set_ylabel("training loss")
    axes[1].set_title("training loss of the normalized network", fontsize=10)
    return axes


def plot_survival_map(Ns, ns, outcomes, *, frontier=None, axes=None, frozen=None):
    """Which (N, n) pairs each variant trains through, one panel per variant (side by side).

    ``outcomes`` maps a panel title to an int array (len(Ns), len(ns)): -1 = the
    training finished with finite numbers, e >= 0 = NumericalOverflowError in epoch
    e (printed next to the cross). ``frozen`` (optional, same keys) holds boolean
    arrays of the same shape: True where a run finished but its memories never moved
    (drawn as an open circle: finishing is not training). ``frontier`` = (N values,
    largest n with N**n finite) adds the analytic float32 line. The legend goes below
    the panels.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if axes is None:
        fig, axes = plt.subplots(1, len(outcomes), figsize=(7.2, 4.0), sharey=True, squeeze=False,
                                 constrained_layout=True)
        axes = axes[0]
    axes = np.atleast_1d(axes)
    for ax, (title, grid) in zip(axes, outcomes.items()):
        grid = np.asarray(grid)
        still = np.asarray((frozen or {}).get(title, np.zeros(grid.shape, bool)))
        for a, N in enumerate(Ns):
            for b, n in enumerate(ns):
                if grid[a, b] < 0:
                    ax.plot(n, N, "o", color=OKABE_ITO["blue"], markersize=7, mfc="white" if still[a, b] else None)
                else:
                    ax.plot(n, N, "X", color=OKABE_ITO["vermillion"], markersize=8)
                    ax.annotate(str(int(grid[a, b])), (n, N), textcoords="offset points", xytext=(4, 3), fontsize=9)
        if frontier is not None:
            ax.plot(frontier[1], frontier[0], "-", color="0.4", linewidth=1)
        ax.set_yscale("log", base=2)
        ax.set_ylim(min(Ns) / 1.5, max(Ns) * 1.5)
        ax.set_xlim(0, max(ns) + 4)
        ax.set_xlabel("interaction vertex n")
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("neurons N")
    finished = "finished, memories moved" if frozen is not None else "finished with finite numbers"
    handles = [axes[0].plot([], [], "o", color=OKABE_ITO["blue"], label=finished)[0]]
    if frozen is not None:
        handles.append(axes[0].plot([], [], "o", color=OKABE_ITO["blue"], mfc="white",
                                    label="finished, memories never moved")[0])
    handles.append(axes[0].plot([], [], "X", color=OKABE_ITO["vermillion"], label="overflow (epoch)")[0])
    if frontier is not None:
        handles.append(axes[0].plot([], [], "-", color="0.4", linewidth=1, label="N$^n$ = float32 max")[0])
    axes[0].figure.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 2), fontsize=9)
    return axes


def plot_sign_error_rates(ns, rates, *, ax=None, title=None):
    """Fraction of updates whose sign differs from the exact (mpmath) one, against n (log x).

    ``rates`` maps (scaling, dtype) to an array over ``ns``; colour and marker =
    scaling, line style = dtype (solid float32, dotted float64).
    """
    ax = _axes(ax)
    lines = {"float32": "-", "float64": ":"}
    for (scaling, dtype), r in rates.items():
        style = SCALING_STYLES.get(scaling, {})
        ax.plot(ns, 100 * np.asarray(r, dtype=float), linestyle=lines.get(dtype, "-"), color=style.get("color"),
                marker=style.get("marker"), markersize=6 if dtype == "float32" else 4,
                mfc="none" if dtype == "float64" else None, label=f"{scaling}, {dtype}")
    ax.set_xscale("log")
    ax.set_xlabel("interaction vertex n")
    ax.set_ylabel("updates with the wrong sign (%)")
    ax.set_ylim(-3, 103)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_energy_magnitudes(deltas, exact_sign, *, dtype="float32", ax=None, title=None):
    """``|Delta_i|`` per neuron as each scaling computes it, against the dtype's range (log y).

    ``deltas`` maps a scaling name to a (N,) array; ``exact_sign`` (N,) holds the
    correct update signs. Filled markers: right sign; open markers: wrong sign
    (sign(0) = +1). inf/NaN are pinned to the top edge, exact zeros to the bottom
    edge; the grey band is the range of normal ``dtype`` numbers. The legend goes
    below the axes.
    """
    ax = _axes(ax, figsize=(7.2, 5.4))
    info = np.finfo(dtype)
    top, bottom = float(info.max) * 1e6, float(info.smallest_subnormal) / 1e6
    exact_sign = np.asarray(exact_sign)
    for k, (scaling, delta) in enumerate(deltas.items()):
        delta = np.asarray(delta, dtype=np.float64)
        style = SCALING_STYLES.get(scaling, {})
        i = np.arange(delta.size) + (k - 1) * 0.2
        with np.errstate(invalid="ignore"):
            decided = np.where(delta > 0, 1, np.where(delta < 0, -1, 1))
            right = np.isfinite(delta) & (decided == exact_sign)
        shown = np.where(~np.isfinite(delta), top, np.where(delta == 0, bottom, np.abs(delta)))
        ax.plot(i[right], shown[right], linestyle="none", color=style.get("color"), marker=style.get("marker"),
                markersize=5, label=f"{scaling}: right sign ({int(right.sum())})")
        ax.plot(i[~right], shown[~right], linestyle="none", color=style.get("color"), marker=style.get("marker"),
                markersize=6, mfc="none", label=f"{scaling}: wrong sign or inf/NaN ({int((~right).sum())})")
    ax.axhspan(float(info.tiny), float(info.max), color="0.9", zorder=0, label=f"normal {dtype} numbers")
    ax.set_yscale("log")
    ax.set_ylim(bottom / 10, top * 10)
    edge = ax.get_yaxis_transform()  # x in axes units, y in data units: labels beside the axes
    ax.text(1.01, top, "inf / NaN", fontsize=9, va="center", transform=edge)
    ax.text(1.01, bottom, "exactly 0", fontsize=9, va="center", transform=edge)
    ax.set_xlabel("neuron i")
    ax.set_ylabel(f"|Δ$_i$| as computed in {dtype}")
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


# ------------------------------------------------------- hyperparameter sweeps (chapter 6)
#: Each network's own temperature axis: 1/T for the original network, 1/T' for the normalized one.
INV_TEMPERATURE_LABELS = {"original": "$1/T$", "normalized": "$1/T'$"}


def plain_log_labels(axis):
    """Label a log ``axis`` (``ax.xaxis`` or ``ax.yaxis``) with plain numbers at 1, 2 and 5 times a
    power of ten (every tick when the view spans under a decade), major and minor ticks alike:
    under two decades matplotlib otherwise labels every minor tick as "3 x 10^-1"."""
    from matplotlib.ticker import FuncFormatter  # noqa: PLC0415

    def one_two_five(v, _):
        lo, hi = sorted(axis.get_view_interval())
        mantissa = round(v / 10 ** np.floor(np.log10(v)), 6) if v > 0 else 0
        return f"{v:g}" if mantissa in (1, 2, 5) or (lo > 0 and hi / lo < 10) else ""  # < 1 decade: all

    axis.set_major_formatter(FuncFormatter(one_two_five))
    axis.set_minor_formatter(FuncFormatter(one_two_five))


def _range_bars(ax, ns, lo, hi, *, color, shift=0.0):
    """The range [lo, hi] at each n as a vertical bar with caps, shifted sideways by ``shift``
    (a fraction of the n axis' span) so that two networks' bars sit side by side instead of
    overlapping into a third colour. Missing values (NaN) draw nothing."""
    ns, lo, hi = (np.asarray(a, dtype=float) for a in (ns, lo, hi))
    ok = np.isfinite(lo) & np.isfinite(hi)
    if not ok.any():
        return None
    x = ns[ok] + shift * (np.nanmax(ns) - np.nanmin(ns) or 1.0)
    mid = np.sqrt(lo[ok] * hi[ok])
    return ax.errorbar(x, mid, yerr=[mid - lo[ok], hi[ok] - mid], fmt="none", ecolor=color,
                       elinewidth=2.5, capsize=3, alpha=0.55)
def _log_edges(values):
    v = np.log10(np.asarray(values, dtype=float))
    if v.size == 1:
        return 10 ** np.array([v[0] - 0.5, v[0] + 0.5])
    mid = (v[1:] + v[:-1]) / 2
    return 10 ** np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def _major_log_ticks(ax, xs=None, ys=None):
    """Decade ticks on both log axes; an axis whose grid ``xs``/``ys`` spans under two decades
    (one decade tick or none would show) is ticked at its grid values instead."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: PLC0415

    for axis, values in ((ax.xaxis, xs), (ax.yaxis, ys)):
        values = None if values is None else np.asarray(values, dtype=float)
        if values is not None and values.size and np.log10(values.max() / values.min()) < 2:
            axis.set_major_locator(FixedLocator(values))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.2g}"))
            axis.set_minor_locator(NullLocator())
        else:
            axis.set_major_locator(LogLocator(base=10))
        axis.set_minor_formatter(NullFormatter())


def plot_sweep_heatmaps(records, ns, grid="coarse", *, variants=("original", "normalized"), N=100, dtype="float64",
                        metric="distance", vmax=None, title=None):
    """Mean ``metric`` over repeats on the (learning rate, 1/T) grid: one row per n, one column per network
    (a single network wraps its n into rows of three).

    Log axes, cividis colours (dark = small distance = good), a shared colour scale
    (0 to 2 sqrt(N), the distance of a random state), the best cell marked by a star.
    Each panel's y axis is its network's own inverse temperature: 1/T for the
    original, 1/T' for the normalized. Missing results leave an empty panel that says so;
    with no ``ns`` (or no ``variants``) nothing is drawn and None is returned.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from damlite.sweeps.experiments import heatmap_table  # noqa: PLC0415

    vmax = 2 * np.sqrt(N) if vmax is None else vmax
    panels = [(n, v) for n in ns for v in variants]
    if not panels:
        return None  # nothing on file: no figure (plt.subplots refuses 0 rows)
    ncols = len(variants) if len(variants) > 1 else min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(min(7.2, 3.1 * ncols + 0.9), 2.3 * nrows + 0.3),
                             squeeze=False, constrained_layout=True)
    mesh = None
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.axis("off")
            continue
        (n, variant), r, c = panels[k], k // ncols, k % ncols
        table = heatmap_table(records, variant, n, grid, metric, dtype=dtype, N=N)
        if table is None:
            ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([]), ax.set_yticks([])
        else:
            its, lrs, z = table
            mesh = ax.pcolormesh(_log_edges(lrs), _log_edges(its), z, cmap="cividis", vmin=0, vmax=vmax)
            ax.set_xscale("log"), ax.set_yscale("log")
            _major_log_ticks(ax, lrs, its)
            i, j = np.unravel_index(np.nanargmin(np.where(np.isfinite(z), z, np.inf)), z.shape)
            ax.plot(lrs[j], its[i], marker="*", color="white", markeredgecolor="black", markersize=11)
        ax.set_title(f"{variant}, n = {n}", fontsize=10)
        ax.tick_params(labelsize=9)
        if r == nrows - 1 or k + ncols >= len(panels):
            ax.set_xlabel("initial learning rate", fontsize=10)
        # two networks: every column is labelled (their axes differ); one network: the first column
        if len(variants) > 1 or c == 0:
            ax.set_ylabel(INV_TEMPERATURE_LABELS.get(variant, "$1/T$"), fontsize=10)
    if mesh is not None:
        cbar = fig.colorbar(mesh, ax=axes, shrink=0.6, label=f"mean {metric}\n(lower is better)")
        cbar.ax.tick_params(labelsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_optimum_vs_n(rows, *, N=100, grid="coarse", dtype="float64", axes=None):
    """Where the good region sits (geometric centre of its cells) and its size against n, both networks.

    ``rows`` come from :func:`damlite.sweeps.experiments.summarize`. Both networks share one
    temperature axis, 1/T': the original network's 1/T is drawn as N/T, the 1/T' at
    which the normalized network computes the same thing (the two are one network
    when 1/T' = N/T). Three panels at column width (7.2 in): 1/T' across the top (centre
    and range of the good cells, the two networks' range bars side by side), below it
    the learning rate (centre) and the fraction of the grid that is good; one legend
    below. ``axes``: three axes to draw on instead.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if axes is None:
        fig = plt.figure(figsize=(7.2, 5.6), layout="constrained")
        mosaic = fig.subplot_mosaic([["T", "T"], ["lr", "good"]])
        axes = [mosaic["T"], mosaic["lr"], mosaic["good"]]
    styles = {"original": dict(color=OKABE_ITO["vermillion"], marker="s", linestyle="--", markerfacecolor="none",
                               markersize=8),
              "normalized": dict(color=OKABE_ITO["blue"], marker="o", linestyle="-", markersize=5)}
    for variant, style in styles.items():
        sel = sorted((r for r in rows if r["variant"] == variant and r["N"] == N and r["grid"] == grid
                      and r["dtype"] == dtype), key=lambda r: r["n"])
        if not sel:
            continue
        ns = [r["n"] for r in sel]
        factor = N if variant == "original" else 1
        label = f"original network, at $N/T$ (N = {N})" if variant == "original" else "normalized network"
        _range_bars(axes[0], ns, [r["good_inv_temperature_min"] * factor for r in sel],
                    [r["good_inv_temperature_max"] * factor for r in sel], color=style["color"],
                    shift=0.008 if variant == "original" else -0.008)
        axes[0].plot(ns, [r["good_inv_temperature_center"] * factor for r in sel], label=label, **style)
        axes[1].plot(ns, [r["good_learning_rate_center"] for r in sel], **style)
        axes[2].plot(ns, [r["good_fraction"] for r in sel], **style)
    axes[0].set(yscale="log", ylabel="$1/T'$ of the good cells\n(line: centre; bars: range)")
    axes[1].set(yscale="log", ylabel="learning rate of the\ngood cells (centre)", ylim=(1e-3, 1.5))
    axes[2].set(ylabel="fraction of the grid\nthat is good", ylim=(0, 1))
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    for ax in axes:
        ax.set_xlabel("interaction vertex n", fontsize=10)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))  # no 2.5, 7.5
        ax.yaxis.label.set_size(10)
        ax.tick_params(labelsize=9)
    lo, hi = axes[0].get_ylim()
    if hi / lo < 100:  # under two decades matplotlib labels minor ticks "3 x 10^0"
        plain_log_labels(axes[0].yaxis)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[0].figure.legend(handles, labels, loc="outside lower center", ncols=len(handles), fontsize=9)
    return axes


#: Line colours of the readings in :func:`plot_readings` (Okabe-Ito, in order).
_READING_COLORS = ("blue", "vermillion", "green", "orange", "purple", "sky")


def plot_readings(readings, *, N=100, axes=None, per_reading=False, titles=None):
    """The good region against n for both networks under several readings of the experiment.

    ``readings`` maps a label to summary rows (:func:`damlite.sweeps.experiments.summarize`,
    one grid). Left: the centre of the good cells (line) and their range (bars, side by
    side where two series share an n, never blended) on one axis, 1/T': the original
    network's 1/T is drawn as N/T, the 1/T' at which the normalized network computes the
    same thing; right: the fraction of the grid that is good (0 where no cell comes
    within 0.5 of perfect recall). Solid: normalized; dashed, open markers: original. A
    network with no near-perfect cell at some n leaves a gap on the left (point and bar).

    ``per_reading=False`` overlays the readings, one colour each, on ``axes`` (two
    axes; range bars for the normalized networks only; one legend below the figure). ``per_reading=True`` gives each
    reading a row of two panels (``axes`` of shape (len(readings), 2), made at column
    width when not given), colours by network, the row titled by ``titles[label]``
    (default: the label); the caller adds one legend for the figure (the returned axes
    carry the labels in row 0).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    styles = {"normalized": dict(linestyle="-", marker="o"),
              "original": dict(linestyle="--", marker="s", markerfacecolor="none")}
    net_colors = {"normalized": OKABE_ITO["blue"], "original": OKABE_ITO["vermillion"]}
    if per_reading:
        if axes is None:
            _, axes = plt.subplots(len(readings), 2, figsize=(7.2, 2.0 * len(readings) + 0.7), sharex=True,
                                   squeeze=False, layout="constrained")
        pairs = [tuple(row) for row in np.asarray(axes, dtype=object).reshape(len(readings), 2)]
    else:
        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(7.2, 3.4), constrained_layout=True)
        pairs = [tuple(axes)] * len(readings)
    n_bars = 2 if per_reading else len(readings)  # series with range bars per panel
    for k, ((label, rows), (ax_c, ax_f)) in enumerate(zip(readings.items(), pairs)):
        for v, (variant, style) in enumerate(styles.items()):
            sel = sorted((r for r in rows if r["variant"] == variant and r.get("N", N) == N), key=lambda r: r["n"])
            if not sel:
                continue
            color = net_colors[variant] if per_reading else OKABE_ITO[_READING_COLORS[k % len(_READING_COLORS)]]
            factor = N if variant == "original" else 1
            ns = [r["n"] for r in sel]
            ok = [r["best"] <= 0.5 for r in sel]  # cells within 0.5 of a failing best say nothing
            centre = [r["good_inv_temperature_center"] * factor if g else np.nan for r, g in zip(sel, ok)]
            if per_reading or variant == "normalized":
                slot = v if per_reading else k
                lo = [r["good_inv_temperature_min"] * factor if g else np.nan for r, g in zip(sel, ok)]
                hi = [r["good_inv_temperature_max"] * factor if g else np.nan for r, g in zip(sel, ok)]
                _range_bars(ax_c, ns, lo, hi, color=color, shift=0.012 * (slot - (n_bars - 1) / 2))
            network = "original, at $N/T$" if variant == "original" else "normalized"
            name = network if per_reading else f"{label}, {network}"
            ax_c.plot(ns, centre, color=color, label=name, markersize=5, **style)
            size = [r["good_fraction"] if g else 0.0 for r, g in zip(sel, ok)]  # none near perfect: 0
            ax_f.plot(ns, size, color=color, markersize=5, **style)
        if per_reading:
            ax_c.set_title((titles or {}).get(label, label), fontsize=10, loc="left")
            ax_c.set(yscale="log")
            ax_c.set_ylabel("$1/T'$ of good cells", fontsize=10)
            ax_f.set_ylabel("fraction good", fontsize=10)
            ax_f.set_ylim(0, 1)
            for ax in (ax_c, ax_f):
                ax.tick_params(labelsize=9)
            if k == len(readings) - 1:
                for ax in (ax_c, ax_f):
                    ax.set_xlabel("interaction vertex n", fontsize=10)
    if per_reading:
        from matplotlib.ticker import LogLocator, NullFormatter  # noqa: PLC0415

        lims = [ax_c.get_ylim() for ax_c, _ in pairs]
        for ax_c, _ in pairs:  # one 1/T' scale for every row, labelled at the decades
            ax_c.set_ylim(min(lo for lo, _ in lims), max(hi for _, hi in lims))
            ax_c.yaxis.set_major_locator(LogLocator(base=10))
            ax_c.yaxis.set_minor_formatter(NullFormatter())
        return axes
    axes[0].set(yscale="log", xlabel="interaction vertex n", ylabel="$1/T'$ of the good cells")
    axes[1].set(xlabel="interaction vertex n", ylabel="fraction of the grid that is good", ylim=(0, 1))
    handles, labels = axes[0].get_legend_handles_labels()
    axes[0].figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=9)  # clear of the data
    for ax in axes:
        ax.tick_params(labelsize=9)
    return axes


def plot_convention_b(rows, *, band=(1e-3, 1.0), ax=None, legend=True, color=None, label="original network"):
    """The original network's good region in convention B's 1/T (= (1/T_A)**n), against n.

    ``rows`` are reading A's summary rows relabelled by :func:`damlite.paper.claims.convention_b`;
    the shaded band is a three-decade grid around the paper's 1e-2. Black by default, so
    that it is not taken for a reading A curve beside it; ``label`` names the curve in the
    legend. ``legend=True`` puts the legend below the axes (clear of the data);
    ``legend=False`` leaves it to the caller (the artists carry labels).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.6), constrained_layout=True)
    sel = sorted((r for r in rows if r["variant"] == "original"), key=lambda r: r["n"])
    ns = [r["n"] for r in sel]
    color = OKABE_ITO["black"] if color is None else color
    ax.plot(ns, [r["good_inv_temperature_center"] for r in sel], color=color, marker="s",
            label=f"{label}: centre")
    ax.fill_between(ns, [r["good_inv_temperature_min"] for r in sel], [r["good_inv_temperature_max"] for r in sel],
                    color=color, alpha=0.15, linewidth=0, label=f"{label}: range")
    ax.axhspan(*band, color=OKABE_ITO["blue"], alpha=0.12, label="a grid of 3 decades around $10^{-2}$")
    ax.axhline(1e-2, color=OKABE_ITO["blue"], linewidth=0.8, linestyle=":")
    ax.set(yscale="log", xlabel="interaction vertex n", ylabel="original network: $1/T_B = (1/T_A)^n$")
    if legend:
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)
    ax.tick_params(labelsize=9)
    return ax


def plot_dtype_agreement(records, ns, *, grid="coarse", N=100, tolerance=0.5, ax=None):
    """Fraction of grid cells where float32 and float64 give the same mean distance (within ``tolerance``)."""
    from damlite.sweeps.experiments import heatmap_table  # noqa: PLC0415

    ax = _axes(ax, figsize=(6.4, 3.4))
    xs, agree, good = [], [], []
    for n in ns:
        a = heatmap_table(records, "normalized", n, grid, dtype="float64", N=N)
        b = heatmap_table(records, "normalized", n, grid, dtype="float32", N=N)
        if a is None or b is None:
            continue
        same = np.abs(a[2] - b[2]) <= tolerance
        xs.append(n)
        agree.append(float(np.mean(same)))
        mask = a[2] <= np.nanmin(a[2]) + tolerance
        good.append(float(np.mean(same[mask])))
    ax.plot(xs, agree, color=OKABE_ITO["blue"], marker="o", label="all cells")
    ax.plot(xs, good, color=OKABE_ITO["orange"], marker="s", linestyle="--", label="good cells (float64)")
    ax.set(xlabel="interaction vertex n", ylabel=f"cells with |Δ distance| ≤ {tolerance}", ylim=(0, 1.05))
    ax.legend(fontsize=8, loc="lower left")
    return ax


# ------------------------------------------------------------------ MNIST (chapter 7)
def plot_digits(X, y, *, per_class=6, shape=(28, 28)):
    """A grid of digits: one column per class, ``per_class`` rows (grey scale, pixel values -1..1)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    classes = np.unique(y)
    fig, axes = plt.subplots(per_class, len(classes), figsize=(0.75 * len(classes), 0.75 * per_class),
                             squeeze=False)
    for c, label in enumerate(classes):
        rows = np.flatnonzero(y == label)[:per_class]
        for r in range(per_class):
            ax = axes[r, c]
            if r < len(rows):
                ax.imshow(np.asarray(X[rows[r]]).reshape(shape), cmap="gray_r", vmin=-1, vmax=1)
            ax.set_xticks([]), ax.set_yticks([])
            if r == 0:
                ax.set_title(str(label), fontsize=9)
    fig.subplots_adjust(wspace=0.05, hspace=0.05)
    return fig


def plot_accuracy_curves(curves, *, reference=None, ax=None, ylim=(0.8, 1.0)):
    """Test accuracy against epoch. ``curves``: label -> (epochs, accuracy);
    ``reference``: label -> {epoch: accuracy} drawn as large open markers."""
    ax = _axes(ax)
    styles = [dict(color=OKABE_ITO["blue"], linestyle="-", marker="o", markersize=4),
              dict(color=OKABE_ITO["orange"], linestyle="--", marker="x", markersize=6),
              dict(color=OKABE_ITO["green"], linestyle=":", marker="^", markersize=4)]
    for k, (label, (epochs, acc)) in enumerate(curves.items()):
        ax.plot(epochs, acc, label=label, **styles[k % len(styles)])
    for label, points in (reference or {}).items():
        ax.plot(list(points), list(points.values()), linestyle="none", marker="D", markersize=9,
                markerfacecolor="none", markeredgecolor=OKABE_ITO["vermillion"], label=label)
    ax.set(xlabel="epoch", ylabel="test accuracy", ylim=ylim)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return ax


def plot_confusion(confusion, *, ax=None, title=None):
    """A confusion matrix (rows: true class, columns: predicted), counts printed, log colour scale."""
    from matplotlib.colors import LogNorm  # noqa: PLC0415

    cm = np.asarray(confusion)
    ax = _axes(ax, figsize=(6.4, 5.4))  # counts readable at a ~700 px column
    im = ax.imshow(np.maximum(cm, 0.5), cmap="viridis", norm=LogNorm(vmin=0.5, vmax=max(cm.max(), 1)))
    C = cm.shape[0]
    for i in range(C):
        for j in range(C):
            if cm[i, j]:
                ax.text(j, i, str(int(cm[i, j])), ha="center", va="center", fontsize=8,
                        color="black" if cm[i, j] > np.sqrt(cm.max()) else "white")
    ax.set(xticks=range(C), yticks=range(C), xlabel="predicted class", ylabel="true class")
    ax.figure.colorbar(im, ax=ax, label="digits (log scale)")
    if title:
        ax.set_title(title, fontsize=9)
    return ax


def _f1_panel(ax, records, variant, n, grid, *, N, dtype):
    """One F1 heatmap (viridis, 0 to 1, best cell starred) on ``ax``; the mesh, or None when no results."""
    from damlite.sweeps.experiments import heatmap_table  # noqa: PLC0415

    table = heatmap_table(records, variant, n, grid, "f1", dtype=dtype, N=N)
    if table is None:
        ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([]), ax.set_yticks([])
        return None
    its, lrs, z = table
    mesh = ax.pcolormesh(_log_edges(lrs), _log_edges(its), np.where(np.isfinite(z), z, np.nan),
                         cmap="viridis", vmin=0, vmax=1)
    ax.set_xscale("log"), ax.set_yscale("log")
    _major_log_ticks(ax, lrs, its)
    i, j = np.unravel_index(np.nanargmax(np.where(np.isfinite(z), z, -np.inf)), z.shape)
    ax.plot(lrs[j], its[i], marker="*", color="white", markeredgecolor="black", markersize=11)
    return mesh


def plot_f1_panels(panels, *, ncols=2, grid="paper", N=794, dtype="float64", title=None):
    """Validation macro-F1 heatmaps, one per panel, on a shared 0-to-1 scale, ``ncols`` to a row.

    Each panel's y axis is its network's own inverse temperature (1/T for the original,
    1/T' for the normalized), labelled in the first column and wherever the network
    changes along a row; grids spanning under two decades are ticked at their values.

    Parameters
    ----------
    panels : list of (records, variant, n, label)
        What each panel draws (the ``variant`` network at ``n`` from ``records``) and its title.
    ncols : int
        Panels per row (e.g. 2 to put two sweeps of the same network side by side).

    Returns
    -------
    matplotlib.figure.Figure or None
        None, and no figure is made, when ``panels`` is empty.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    panels = list(panels)
    if not panels:
        return None
    ncols = max(1, min(ncols, len(panels)))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols + 0.9, 2.4 * nrows + 0.3),
                             squeeze=False, constrained_layout=True)
    meshes = []
    for k, ax in enumerate(axes.flat):
        if k >= len(panels):
            ax.axis("off")
            continue
        records, variant, n, label = panels[k]
        meshes.append(_f1_panel(ax, records, variant, n, grid, N=N, dtype=dtype))
        ax.set_title(label, fontsize=9)
        if k + ncols >= len(panels):
            ax.set_xlabel("initial learning rate")
        # each network's own axis (1/T original, 1/T' normalized), named wherever it changes along a row
        if k % ncols == 0 or variant != panels[k - 1][1]:
            ax.set_ylabel(INV_TEMPERATURE_LABELS.get(variant, "$1/T$"))
    mesh = next((m for m in meshes if m is not None), None)
    if mesh is not None:
        fig.colorbar(mesh, ax=axes, shrink=0.6, label="validation macro-F1 (higher is better)")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_f1_heatmaps(records, ns, grid="paper", *, variants=("original", "normalized"), N=794,
                     dtype="float64", title=None):
    """Validation macro-F1 on the (learning rate, 1/T) grid: one row per n, one column per network.

    Viridis, a shared scale from 0 to 1 (bright = good), the best cell starred;
    missing results leave an empty panel that says so. With no ``ns`` (or no
    ``variants``) nothing is drawn and None is returned.
    """
    panels = [(records, v, n, f"{v}, n = {n}") for n in ns for v in variants]
    return plot_f1_panels(panels, ncols=len(variants), grid=grid, N=N, dtype=dtype, title=title)


def plot_memories(memories, *, ncols=8, shape=(28, 28), n_pixels=784, axes=None, title=None):
    """Memories' pixel parts as images on a shared symmetric scale (PuOr_r: orange > 0, purple < 0)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    mem = np.asarray(memories, dtype=float)[:, :n_pixels]
    nrows = -(-mem.shape[0] // ncols)
    if axes is None:
        side = min(0.9, 7.2 / ncols)  # fill the ~7.2 in column, tiles at most 0.9 in
        fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols, side * nrows + 0.4), squeeze=False)
    axes = np.asarray(axes).reshape(-1)
    lim = float(np.abs(mem).max()) or 1.0
    im = None
    for k, ax in enumerate(axes):
        ax.set_xticks([]), ax.set_yticks([])
        if k < mem.shape[0]:
            im = ax.imshow(mem[k].reshape(shape), cmap="PuOr_r", vmin=-lim, vmax=lim)
        else:
            ax.axis("off")
    fig = axes[0].figure
    if title:
        fig.suptitle(title, fontsize=10)
    if im is not None:
        fig.colorbar(im, ax=list(axes), shrink=0.7, label="memory entry")
    return fig


def plot_metric_profiles(curves, *, N=794, metric="f1", axes=None, ylabel="validation macro-F1"):
    """A metric against 1/T' for several networks, one panel per learning rate.

    ``curves`` maps a label to ``(records, style)``: sweep records (one n) and line
    keywords. One x axis, 1/T': the original network's 1/T is drawn as N/T (``N``
    times its 1/T), the 1/T' at which the normalized network computes the same thing,
    where a homogeneous F makes the two networks coincide (say so in the labels or the
    caption). A record whose metric is missing (not finite) is drawn at 0.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    lrs = sorted({r["learning_rate"] for recs, _ in curves.values() for r in recs})
    if axes is None:
        _, axes = plt.subplots(1, len(lrs), figsize=(7.2, 3.2), sharey=True, constrained_layout=True)
    axes = np.atleast_1d(axes)
    for ax, lr in zip(axes, lrs):
        for label, (recs, style) in curves.items():
            sel = sorted((r for r in recs if r["learning_rate"] == lr), key=lambda r: r["inv_temperature"])
            x = [r["inv_temperature"] * (N if r["variant"] == "original" else 1) for r in sel]
            y = [r[metric] if r[metric] is not None else 0.0 for r in sel]
            ax.plot(x, y, label=label, markersize=5, **style)
        ax.set(xscale="log", xlabel="$1/T'$", title=f"learning rate {lr:g}")
        ax.title.set_fontsize(9)
        ax.tick_params(labelsize=9)
    axes[0].set_ylabel(ylabel)
    return axes
