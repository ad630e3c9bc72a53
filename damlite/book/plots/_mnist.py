"""MNIST: digits, accuracy, F1 heatmaps and memories (chapter 7)."""
from __future__ import annotations

import math

import numpy as np

from ._style import INV_TEMPERATURE_LABELS, OKABE_ITO, _axes, _log_edges, _major_log_ticks


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
    ``reference``: label -> {epoch: accuracy} drawn as large open markers.

    A long curve (more than 40 points) is a thin line without markers, drawn under the
    short ones, so that the short curves' markers stay visible where the two overlap.
    """
    ax = _axes(ax)
    styles = [dict(color=OKABE_ITO["blue"], linestyle="-", marker="o", markersize=4),
              dict(color=OKABE_ITO["orange"], linestyle="--", marker="x", markersize=6),
              dict(color=OKABE_ITO["green"], linestyle=":", marker="^", markersize=4)]
    for k, (label, (epochs, acc)) in enumerate(curves.items()):
        style = dict(styles[k % len(styles)])
        if len(epochs) > 40:  # many points: a line under the others
            style.update(marker=None, linewidth=1.2, zorder=1)
        else:
            style.update(zorder=3)
        ax.plot(epochs, acc, label=label, **style)
    for label, points in (reference or {}).items():
        ax.plot(list(points), list(points.values()), linestyle="none", marker="D", markersize=9,
                markerfacecolor="none", markeredgecolor=OKABE_ITO["vermillion"], label=label, zorder=4)
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


def _image_shape(width, shape, n_pixels):
    """(height, width) of each memory's image: ``shape``, or the square of ``n_pixels``, or inferred."""
    if shape is not None:
        h, w = (int(v) for v in shape)
        if h * w > width:
            raise ValueError(f"shape={tuple(shape)} needs {h * w} entries per memory, and the memories have {width}")
        return h, w
    pixels = width if n_pixels is None else int(n_pixels)
    side = math.isqrt(pixels)
    if n_pixels is None and side * side != pixels and pixels - side * side < side:
        return side, side  # a square image followed by fewer class neurons than a row (a classifier's)
    if side * side != pixels:
        raise ValueError(f"memories of {pixels} entries are not a square image: pass shape=(height, width) "
                         f"(and n_pixels= for a classifier's pixel part)")
    return side, side


def plot_memories(memories, *, ncols=4, shape=None, n_pixels=None, axes=None, title=None, width=7.2):
    """Memories' pixel parts as images on a shared symmetric scale (PuOr_r: orange > 0, purple < 0).

    ``shape=(height, width)`` gives each image's shape; by default it is inferred as the
    largest square that fits (28 x 28 for MNIST's 784 pixels, also when a classifier's 10
    class neurons follow them; 10 x 10 for 100-pixel patterns), and memories that are not a
    square image ask for ``shape=``. ``n_pixels`` (default: the image's) entries are shown.
    The tiles fill a figure ``width`` inches wide (the colour bar beside them), ``ncols`` to
    a row: four to a row keep each tile about 80 px wide on a phone, large enough to tell a
    digit from a blend.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    mem = np.asarray(memories, dtype=float)
    if mem.ndim != 2:
        raise ValueError(f"memories must be a 2-D array (memories x entries), got shape {mem.shape}")
    shape = _image_shape(mem.shape[1], shape, n_pixels)
    mem = mem[:, :shape[0] * shape[1]]
    nrows = -(-mem.shape[0] // ncols)
    if axes is None:
        side = (width - 0.8) / ncols  # the colour bar takes about 0.8 in
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, side * nrows + (0.35 if title else 0.1)),
                                 squeeze=False, layout="constrained")
        fig.get_layout_engine().set(w_pad=0.02, h_pad=0.02, wspace=0.02, hspace=0.02)
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
