"""Interactive explorers for the book (ipywidgets, the ``widgets`` extra).

Each explorer returns a widget; the static web pages cannot run it, so every
chapter also draws the explorer's default figure with the matching helper in
:mod:`damlite.plots`.
"""
from __future__ import annotations


def _ipywidgets():
    try:
        import ipywidgets  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the explorers need ipywidgets: pip install 'damlite[widgets]'") from exc
    return ipywidgets


# ------------------------------------------------------------------ numerics (chapter 3)
def frontier_explorer(N=10_000, n=30, formats=("float16", "bfloat16", "float32", "float64")):
    """Sliders over N (log scale) and n showing F_n(x) = x**n against each format's
    largest value, the exact N**n, and where (N, n) sits relative to the overflow frontier.
    """
    widgets = _ipywidgets()
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from . import numerics, plots  # noqa: PLC0415

    def show(N, n):
        N = int(round(N))
        plots.plot_power_and_limits(N, n, formats)
        plt.show()
        value = numerics.exact_power(N, n)
        print(f"N**n = {numerics.mpmath.nstr(value, 6)} (exact, mpmath)")
        for name in formats:
            limit = numerics.overflow_frontier(N, name)
            verdict = "finite" if n <= limit else "inf"
            print(f"  {name:>8}: largest safe n = {limit:4d}  ->  {verdict}")

    return widgets.interactive(
        show,
        N=widgets.FloatLogSlider(value=N, base=10, min=1, max=6, step=0.05, description="N"),
        n=widgets.IntSlider(value=n, min=1, max=200, description="n"),
    )


# ------------------------------------------------------------------ capacity (chapter 2)
def recall_explorer(N=100, P=20, n=2, noise=0.2, interaction="polynomial", random_state=0):
    """Sliders over n and the fraction of flipped bits: relax one noisy probe in a DAM
    whose memories are P random patterns, and show pattern, probe and result as images.
    """
    widgets = _ipywidgets()
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from . import capacity, plots  # noqa: PLC0415

    def show(n, noise):
        pattern, probe, final, m = capacity.dam_recall_example(N, P, n, noise, interaction=interaction,
                                                              random_state=random_state)
        plots.plot_recall(pattern, probe, final, title=f"N = {N}, P = {P}, n = {n}: final overlap {m:+.2f}")
        plt.show()

    return widgets.interactive(
        show,
        n=widgets.IntSlider(value=n, min=1, max=12, description="n"),
        noise=widgets.FloatSlider(value=noise, min=0.0, max=0.5, step=0.02, description="flipped"),
    )
