"""The two networks side by side, and the scalings of the update (chapter 5)."""
from __future__ import annotations

import numpy as np

from ._style import OKABE_ITO, _axes, _seq_colors

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
