"""Capacity, interaction functions and recall (chapter 1)."""
from __future__ import annotations

import numpy as np

from ._style import OKABE_ITO, _seq_colors


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

    from ...interactions import make_interaction  # noqa: PLC0415

    x = np.linspace(-1.5, 1.5, 601) if x is None else x
    fig, grid = plt.subplots(2, 2, figsize=(7.2, 6.0), sharex=True, constrained_layout=True)
    axes = grid.ravel()
    names = [("polynomial", "polynomial $x^n$"), ("rectified_polynomial", "rectified $\\max(x,0)^n$"),
             ("leaky_rectified_polynomial", f"leaky rectified, $\\varepsilon$ = {epsilon}")]
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


def plot_energy_and_basins(flipped, energy, recalled):
    """The intuition behind capacity, against the fraction of a pattern's bits flipped: the
    energy around a stored pattern (top) and the chance that a damaged probe relaxes back
    onto it (bottom), one line per n.

    ``flipped``: fractions of flipped bits; ``energy[n]``: the mean energy of states with
    that many bits flipped, divided by the size of the pattern's own energy (-1 at the
    pattern); ``recalled[n]``: the fraction of such probes that relax exactly onto their
    pattern. Colour, marker and line style all tell n apart.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ns = list(energy)
    styles = dict(zip(ns, zip(_seq_colors(len(ns)), ("o", "s", "^", "D", "v"), ("-", "--", ":", "-.", "-"))))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 6.4), sharex=True, constrained_layout=True)
    for n in ns:
        color, marker, line = styles[n]
        top.plot(flipped, energy[n], color=color, marker=marker, ls=line, lw=1.8, label=f"n = {n}")
        bottom.plot(flipped, recalled[n], color=color, marker=marker, ls=line, lw=1.8, label=f"n = {n}")
    top.set_ylabel("energy / |energy at the pattern|", fontsize=10)
    top.axhline(0, color="0.8", lw=0.8)
    top.legend(fontsize=9, loc="lower right")
    bottom.set_ylabel("probes recalled exactly", fontsize=10)
    bottom.set_xlabel("fraction of the pattern's bits flipped", fontsize=10)
    bottom.set_ylim(-0.03, 1.03)
    for ax in (top, bottom):
        ax.tick_params(labelsize=9)
        ax.grid(alpha=0.3)
    overlap = top.secondary_xaxis("top", functions=(lambda f: 1 - 2 * f, lambda q: (1 - q) / 2))
    overlap.set_xlabel("overlap q with the pattern", fontsize=10)
    overlap.tick_params(labelsize=9)
    return fig
