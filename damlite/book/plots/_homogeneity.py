"""The homogeneity argument where it holds and where it fails (chapter 4)."""
from __future__ import annotations

import numpy as np

from ._style import OKABE_ITO, _seq_colors


def plot_scale_sweep(scales, values, *, marks=None, ylabel="", title=""):
    """A quantity (e.g. a sign-safe energy difference) against the similarity scale a (log x).

    ``marks`` maps a scale to a label: a dotted vertical line, labelled inside the frame.
    """
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6.5, 3.6), constrained_layout=True)
    ax.plot(scales, values, color=OKABE_ITO["blue"])
    ax.axhline(0, color="0.5", lw=0.8)
    for a, label in (marks or {}).items():  # labelled inside the frame, just below its top line
        ax.axvline(a, color="0.4", ls=":")
        ax.text(a, 0.96, f" {label}", color="0.3", fontsize=9, va="top", transform=ax.get_xaxis_transform())
    ax.set_xscale("log")
    ax.set_xlabel("similarity scale a inside F")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return fig


def plot_disagreement_table(rows, *, x="n", group="epsilon", panel="networks", value="disagreement",
                            panel_title="{}", xlabel=None):
    """Disagreement fractions (log y) against ``x``, one line per ``group``, one panel per ``panel``.

    ``rows``: list of dicts with those keys. Zero fractions are drawn as open
    markers on the bottom edge (a log axis cannot show 0). The panels are stacked
    (one row each, shared axes) so that the figure fits a 7.2-inch column. Each
    panel is titled ``panel_title.format(value)``, each line by its ``group`` value;
    ``xlabel`` names the x axis (default: ``x``).
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
            ax.plot(xs, np.where(ys > 0, ys, np.nan), styles[i % 4], color=color, label=str(g))
            ax.plot(xs[ys == 0], np.full(int((ys == 0).sum()), floor), styles[i % 4][0], mfc="none", color=color)
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, 1.0)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(panel_title.format(p), fontsize=10)
    fig.supylabel("fraction of updates that disagree", fontsize=10)
    axes[-1, 0].set_xlabel(xlabel or x)
    axes[-1, 0].set_xticks(sorted({r[x] for r in rows}))
    axes[0, 0].legend(fontsize=9, loc="lower right")
    return fig
