"""Hyperparameter sweeps of the autoassociative memory (chapter 6)."""
from __future__ import annotations

import numpy as np

from ._style import (INV_TEMPERATURE_LABELS, OKABE_ITO, _axes, _log_edges, _major_log_ticks, _range_bars,
                    plain_log_labels)


def plot_sweep_heatmaps(records, ns, grid="coarse", *, variants=("original", "normalized"), N=100, dtype="float64",
                        metric="distance", vmax=None, title=None, ncols=None):
    """Mean ``metric`` over repeats on the (learning rate, 1/T) grid: one row per n, one column per network
    (a single network wraps its n into rows of three).

    Log axes, cividis colours (dark = small distance = good), a shared colour scale
    (0 to 2 sqrt(N), the largest possible distance, every bit wrong; a random state lies
    near sqrt(2N)), the best cell marked by a star.
    Each panel's y axis is its network's own inverse temperature: 1/T for the
    original, 1/T' for the normalized. Missing results leave an empty panel that says so;
    with no ``ns`` (or no ``variants``) nothing is drawn and None is returned. ``ncols``
    sets the panels per row instead (1 stacks the two networks of one n: a tall figure
    that stays legible on a phone).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from damlite.sweeps.experiments import heatmap_table  # noqa: PLC0415

    vmax = 2 * np.sqrt(N) if vmax is None else vmax
    panels = [(n, v) for n in ns for v in variants]
    if not panels:
        return None  # nothing on file: no figure (plt.subplots refuses 0 rows)
    ncols = ncols or (len(variants) if len(variants) > 1 else min(3, len(panels)))
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


#: Line colours of the readings in :func:`plot_readings` (Okabe-Ito, in order), and a marker
#: shape each, so that no reading is told apart by colour alone.
_READING_COLORS = ("blue", "vermillion", "green", "orange", "purple", "sky")
_READING_MARKERS = ("o", "^", "D", "v", "P", "X")


def plot_readings(readings, *, N=100, axes=None, per_reading=False, titles=None, legend=False):
    """The good region against n for both networks under several readings of the experiment.

    ``readings`` maps a label to summary rows (:func:`damlite.sweeps.experiments.summarize`,
    one grid). Left: the centre of the good cells (line) and their range (bars, side by
    side where two series share an n, never blended) on one axis, 1/T': the original
    network's 1/T is drawn as N/T, the 1/T' at which the normalized network computes the
    same thing; right: the fraction of the grid that is good (0 where no cell comes
    within 0.5 of perfect recall). Solid, filled markers: normalized; dashed, open markers:
    original. A network with no near-perfect cell at some n leaves a gap on the left (point
    and bar).

    ``per_reading=False`` overlays the readings, one colour and marker shape each, on ``axes`` (two
    axes; range bars for the normalized networks only; one legend below the figure). ``per_reading=True`` gives each
    reading a row of two panels (``axes`` of shape (len(readings), 2), made at column
    width when not given), colours by network, the row titled by ``titles[label]``
    (default: the label); ``legend=True`` adds one legend for the figure below it (else
    the caller does: the returned axes carry the labels in row 0).
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
            if not per_reading:  # the reading by colour and marker, the network by line and fill
                style = dict(style, marker=_READING_MARKERS[k % len(_READING_MARKERS)])
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
        if legend:
            handles, labels = pairs[0][0].get_legend_handles_labels()
            pairs[0][0].figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=9)
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
    ax.set(xlabel="interaction vertex n", ylabel=f"cells with |d₃₂ − d₆₄| ≤ {tolerance}", ylim=(0, 1.05))
    ax.legend(fontsize=8, loc="lower left")
    return ax


def plot_dead_memories(series, *, ax=None):
    """The fraction of memories no pattern activates after training, against n, both networks.

    ``series`` maps a label (the interaction) to sweep records that carry
    ``inactive_memories`` (the fraction of memories with max_a zeta . xi^a <= 0), averaged
    here over the grid and the repeats. Colour and marker shape: the series; solid, filled
    markers: normalized network; dashed, open markers: original. One legend below the axes.
    """
    from ..results import mean_by_n  # noqa: PLC0415

    ax = _axes(ax, figsize=(7.2, 3.4))
    colours = ("blue", "vermillion", "green", "orange", "purple")
    for k, (label, records) in enumerate(series.items()):
        marker = _READING_MARKERS[k % len(_READING_MARKERS)]
        for variant, line in (("normalized", "-"), ("original", "--")):
            data = mean_by_n(records, variant, "inactive_memories")
            if data:
                ax.plot(list(data), list(data.values()), linestyle=line, marker=marker,
                        color=OKABE_ITO[colours[k % len(colours)]], label=f"{label}, {variant}",
                        markerfacecolor="none" if variant == "original" else None)
    ax.set(xlabel="interaction vertex n", ylabel="memories no pattern activates", ylim=(0, 1))
    ax.figure.legend(loc="outside lower center", ncols=3, fontsize=8)
    return ax


def plot_setting_effects(tables, settings, *, colours=None):
    """How each of the paper's other settings moves the good region, against its control.

    ``tables`` is ``damlite.paper.scorecard.secondary_tables``: (key, n, grid, N) ->
    a heatmap table (``mean``, ``its``, ``lrs``), the key ``"setting|network"``, with a
    ``"control|network"`` entry for each. ``settings`` names the settings in the order
    of the x axis. One marker per block: filled for the normalized network, open and to
    the right for the original; colour and marker shape both give n (so no reader has to
    tell n apart by colour alone). Left: the change of the good region's share of the
    grid, over a grey band of +-0.1 (the scorecard's tolerance for "similar"); right: how
    far its centre moves along the learning-rate axis (a factor, log scale).
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from ...paper.claims import region  # noqa: PLC0415

    colours = colours or {3: "blue", 10: "vermillion", 20: "green"}
    shapes = dict(zip(sorted(colours), "o^Dsv"))
    settings = list(settings)
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.5), layout="constrained")
    ns = set()
    for (key, n, grid, N), t in sorted(tables.items()):
        name, _, network = key.partition("|")
        if name == "control" or name not in settings:
            continue
        base = tables[("control|" + network, n, grid, N)]
        a, b = (region(x.mean, x.its, x.lrs) for x in (base, t))
        ns.add(n)
        style = dict(marker=shapes.get(n, "o"), linestyle="none",
                     color=OKABE_ITO[colours.get(n, "black")],
                     markerfacecolor="none" if network == "original" else None)
        x = settings.index(name) + (0.12 if network == "original" else -0.12)
        axes[0].plot(x, b["good_fraction"] - a["good_fraction"], **style)
        axes[1].plot(x, b["centre_lr"] / a["centre_lr"], **style)
    axes[0].axhspan(-0.1, 0.1, color="0.9", zorder=0)
    axes[0].set(ylabel="good share: setting - control")
    axes[1].set(yscale="log", ylabel="learning-rate centre:\nsetting / control")
    plain_log_labels(axes[1].yaxis)
    for ax in axes:
        ax.set_xticks(range(len(settings)), settings, rotation=30, fontsize=9)
    keys = [plt.Line2D([], [], color=OKABE_ITO[colours.get(n, "black")], marker=shapes.get(n, "o"),
                       linestyle="none", label=f"n = {n}") for n in sorted(ns)]
    keys += [plt.Line2D([], [], color="black", marker="o", markerfacecolor=f, linestyle="none", label=v)
             for f, v in ((None, "normalized"), ("none", "original"))]
    fig.legend(handles=keys, loc="outside lower center", ncols=5, fontsize=9)
    return fig
