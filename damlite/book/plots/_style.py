"""The figures' common parts: palette, inline PNG format, axes and log-axis helpers."""
from __future__ import annotations

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


def _seq_colors(k, cmap="viridis", stop=0.75):
    """k colours along a perceptually uniform, colour-blind-safe colormap."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return [plt.get_cmap(cmap)(v) for v in np.linspace(0.0, stop, max(k, 1))]



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
