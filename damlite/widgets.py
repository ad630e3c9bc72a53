"""Interactive explorers for the book (ipywidgets, the ``widgets`` extra).

Each explorer returns a widget; the static web pages cannot run it, so every
chapter draws the explorer's default figure with the matching helper in
:mod:`damlite.plots` in an ordinary cell, and calls the explorer in a cell tagged
``remove-output``: the web page shows that cell's code only, while Jupyter and Colab
run it live (an Image widget without a kernel would be an inert slider over a blank
picture).
"""
from __future__ import annotations


def _ipywidgets():
    try:
        import ipywidgets  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the explorers need ipywidgets: pip install 'damlite[widgets]'") from exc
    return ipywidgets


def _explorer(draw, **controls):
    """Sliders ``controls`` above a picture: ``draw(**values)`` returns ``(figure, text)``.

    The figure is rendered to PNG into an ``Image`` widget and the text into an
    ``HTML`` widget, redrawn whenever a slider moves. No ``Output`` widget is
    involved: capturing ``plt.show()`` in one made headless builds (nbclient)
    hang at random.
    """
    import html  # noqa: PLC0415
    import io  # noqa: PLC0415

    import matplotlib.pyplot as plt  # noqa: PLC0415

    widgets = _ipywidgets()
    image, note = widgets.Image(format="png"), widgets.HTML()

    def render(_change=None):
        fig, text = draw(**{name: control.value for name, control in controls.items()})
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        image.value = buffer.getvalue()
        note.value = f"<pre>{html.escape(text)}</pre>" if text else ""

    for control in controls.values():
        control.observe(render, names="value")
    render()
    return widgets.VBox([widgets.HBox(list(controls.values())), image, note])


# ------------------------------------------------------------------ numerics (chapter 3)
def frontier_explorer(N=10_000, n=30, formats=("float16", "bfloat16", "float32", "float64")):
    """Sliders over N (log scale) and n showing F_n(x) = x**n against each format's
    largest value, the exact N**n, and where (N, n) sits relative to the overflow frontier.
    """
    widgets = _ipywidgets()
    from . import numerics, plots  # noqa: PLC0415

    def draw(N, n):
        N = int(round(N))
        axes = plots.plot_power_and_limits(N, n, formats)
        lines = [f"N**n = {numerics.mpmath.nstr(numerics.exact_power(N, n), 6)} (exact, mpmath)"]
        for name in formats:
            limit = numerics.overflow_frontier(N, name)
            lines.append(f"  {name:>8}: largest safe n = {limit:4d}  ->  {'finite' if n <= limit else 'inf'}")
        return axes[0].figure, "\n".join(lines)

    return _explorer(
        draw,
        N=widgets.FloatLogSlider(value=N, base=10, min=1, max=6, step=0.05, description="N"),
        n=widgets.IntSlider(value=n, min=1, max=200, description="n"),
    )


# ------------------------------------------------------------------ capacity (chapter 2)
def recall_explorer(N=100, P=20, n=2, noise=0.2, interaction="polynomial", random_state=0):
    """Sliders over n and the fraction of flipped bits: relax one noisy probe in a DAM
    whose memories are P random patterns, and show pattern, probe and result as images.
    """
    widgets = _ipywidgets()
    from . import capacity, plots  # noqa: PLC0415

    def draw(n, noise):
        pattern, probe, final, m = capacity.dam_recall_example(N, P, n, noise, interaction=interaction,
                                                              random_state=random_state)
        fig = plots.plot_recall(pattern, probe, final, title=f"N = {N}, P = {P}, n = {n}: final overlap {m:+.2f}")
        return fig, ""

    return _explorer(
        draw,
        n=widgets.IntSlider(value=n, min=1, max=12, description="n"),
        noise=widgets.FloatSlider(value=noise, min=0.0, max=0.5, step=0.02, description="flipped"),
    )


# ------------------------------------------------------------------ normalized in practice (chapter 5)
def scaling_energy_differences(memories, probe, n, *, interaction="polynomial", dtype="float32"):
    """Energy differences of one probe under the three scalings, computed in ``dtype``.

    Returns ``({"original": ..., "normalized": ..., "adaptive": ...}, exact_sign)``,
    each a (N,) float64 array; ``exact_sign`` comes from the adaptive scaling in
    float64 (which the chapter checks against mpmath). Uses
    :func:`damlite.network.energy_difference`, which returns inf/NaN and zeros
    as they are instead of raising.
    """
    import numpy as np  # noqa: PLC0415

    from .interactions import make_interaction  # noqa: PLC0415
    from .network import energy_difference  # noqa: PLC0415

    F = make_interaction(interaction, n)
    memories = np.asarray(memories, dtype=np.float64)
    probe = np.asarray(probe, dtype=np.float64).reshape(1, -1)
    N = memories.shape[1]

    def delta(dt, scale, rescale):
        out = energy_difference(memories.astype(dt)[None], probe.astype(dt), F, scale, rescale=rescale)
        return np.asarray(out[0, 0], dtype=np.float64)

    deltas = {"original": delta(dtype, 1.0, False), "normalized": delta(dtype, 1.0 / N, False),
              "adaptive": delta(dtype, 1.0 / N, True)}
    exact = np.sign(delta("float64", 1.0 / N, True))
    return deltas, np.where(exact == 0, 1, exact)


def show_scalings(memories, probe, n, *, interaction="polynomial", dtype="float32", ax=None):
    """Draw :func:`damlite.plots.plot_energy_magnitudes` for one probe and one n."""
    from . import plots  # noqa: PLC0415

    deltas, exact = scaling_energy_differences(memories, probe, n, interaction=interaction, dtype=dtype)
    return plots.plot_energy_magnitudes(deltas, exact, dtype=dtype, ax=ax,
                                        title=f"n = {n}, N = {len(exact)}, K = {len(memories)}, {interaction}")


def scaling_explorer(memories, probe, *, n=100, interaction="polynomial", dtype="float32"):
    """A slider over n (2 ... 1000): each neuron's ``|Delta_i|`` in ``dtype`` for the original,
    normalized and adaptive scalings, with wrong update signs marked (open markers).
    """
    widgets = _ipywidgets()
    choices = [2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 750, 1000]

    def draw(n):
        ax = show_scalings(memories, probe, n, interaction=interaction, dtype=dtype)
        return ax.figure, ""

    return _explorer(draw, n=widgets.SelectionSlider(options=choices, value=min(choices, key=lambda c: abs(c - n)),
                                                     description="n"))
