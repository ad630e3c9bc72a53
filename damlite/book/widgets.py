"""Explorers for the book: live ones (ipywidgets) and kernel-free ones (plain HTML and JS).

Live explorers return an ipywidgets widget (the ``widgets`` extra). The static web
pages cannot run them, so chapters call them in a cell tagged ``remove-output``: the
web page shows that cell's code only, while Jupyter and Colab run it live.

Kernel-free explorers (:func:`static_explorer` and the helpers built on it) draw every
frame a slider can show when the page is built, and return an object whose HTML holds
those frames as PNG images, one ``<input type="range">`` per control and a few lines
of JavaScript that swap the picture: no kernel, no server, nothing fetched from a CDN.
They work on the static site, on phones, and in Jupyter and Colab as well.
"""
from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json


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
    from ..paper import numerics  # noqa: PLC0415
    from . import plots  # noqa: PLC0415

    def draw(N, n):
        N = int(round(N))
        axes = plots.plot_power_and_limits(N, n, formats)
        return axes[0].figure, _frontier_text(N, n, formats, numerics)

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
    from ..paper import capacity  # noqa: PLC0415
    from . import plots  # noqa: PLC0415

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

    from ..interactions import make_interaction  # noqa: PLC0415
    from ..network import energy_difference  # noqa: PLC0415

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
    """Draw :func:`damlite.book.plots.plot_energy_magnitudes` for one probe and one n."""
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


def heatmap_explorer(records, ns, grid="coarse", *, variants=("original", "normalized"), N=100,
                     dtype="float64", metric="distance", vmax=None):
    """The live twin of :func:`heatmap_frames` (Jupyter, Colab): a slider over ``ns``, each
    position :func:`damlite.book.plots.plot_sweep_heatmaps` for that n, both networks side by side.
    """
    from . import plots  # noqa: PLC0415

    widgets = _ipywidgets()

    def draw(n):
        return plots.plot_sweep_heatmaps(records, [n], grid, variants=variants, N=N, dtype=dtype,
                                         metric=metric, vmax=vmax, title=f"n = {n}"), ""

    return _explorer(draw, n=widgets.SelectionSlider(options=list(ns), description="n"))


# ------------------------------------------------------------------ kernel-free explorers
_STATIC_JS = """
(function () {
  var root = document.getElementById("%(id)s");
  var data = JSON.parse(root.querySelector("script.dlx-frames").textContent);
  var sliders = root.querySelectorAll("input.dlx-slider");
  var img = root.querySelector("img.dlx-frame"), text = root.querySelector("pre.dlx-text");
  function show() {
    var key = [];
    sliders.forEach(function (s, k) {
      key.push(s.value);
      root.querySelectorAll("output.dlx-value")[k].textContent = data.labels[k][+s.value];
    });
    var frame = data.frames[key.join("-")];
    img.src = "data:image/png;base64," + frame.png;
    img.alt = frame.alt;
    if (text) { text.textContent = frame.text; }
  }
  sliders.forEach(function (s) { s.addEventListener("input", show); });
  show();
})();
"""


class StaticExplorer:
    """Precomputed frames behind sliders, shown as self-contained HTML (``_repr_html_``).

    Attributes: ``controls`` (name -> list of values), ``frames`` (key -> dict with
    ``png`` (base64), ``text`` and ``alt``; the key joins the control indices with
    ``-``) and ``initial`` (one index per control).
    """

    def __init__(self, controls, labels, frames, initial, *, title="", width=None):
        self.controls, self.labels, self.frames, self.initial = controls, labels, frames, initial
        self.title, self.width = title, width
        digest = hashlib.sha1(json.dumps(sorted(frames)).encode() + title.encode())
        digest.update(b"".join(f["png"].encode()[:64] for f in frames.values()))
        self.id = "dlx-" + digest.hexdigest()[:12]

    def __len__(self):
        return len(self.frames)

    def _repr_html_(self):
        rows = []
        for k, (name, values) in enumerate(self.controls.items()):
            rows.append(
                f'<label class="dlx-control"><span class="dlx-name">{html.escape(name)}</span>'
                f'<input class="dlx-slider" type="range" min="0" max="{len(values) - 1}" step="1" '
                f'value="{self.initial[k]}" aria-label="{html.escape(name)}">'
                f'<output class="dlx-value">{html.escape(self.labels[k][self.initial[k]])}</output></label>')
        first = self.frames["-".join(map(str, self.initial))]
        data = json.dumps({"labels": self.labels, "frames": self.frames}).replace("</", "<\\/")
        width = f' width="{self.width}"' if self.width else ""
        title = f'<p class="dlx-title">{html.escape(self.title)}</p>' if self.title else ""
        text = f'<pre class="dlx-text">{html.escape(first["text"])}</pre>' if any(
            f["text"] for f in self.frames.values()) else ""
        return (f'<div class="damlite-explorer" id="{self.id}">{title}<div class="dlx-controls">{"".join(rows)}'
                f'</div><div class="dlx-frame-box"><img class="dlx-frame"{width} '
                f'src="data:image/png;base64,{first["png"]}" alt="{html.escape(first["alt"])}"></div>{text}'
                f'<script type="application/json" class="dlx-frames">{data}</script>'
                f"<script>{_STATIC_JS % {'id': self.id}}</script></div>")


def _png(fig, dpi, colors):
    """The figure as base64 PNG (palette of ``colors`` colours, which keeps frames small), and its width."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from PIL import Image  # noqa: PLC0415 - a matplotlib dependency

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor="white")  # the figures lay themselves out
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(out, format="png", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii"), image.width


def static_explorer(draw, controls, *, initial=None, labels=None, title="", alt="", dpi=160, colors=48):
    """A kernel-free explorer: ``draw(**values)`` for every combination of ``controls``.

    Parameters
    ----------
    draw : callable
        Called with one keyword per control; returns a matplotlib figure, or
        ``(figure, text)`` where ``text`` is printed under the picture.
    controls : dict
        Control name -> sequence of values (one slider each, in this order).
    initial : dict, optional
        Control name -> the value shown first (default: each control's first value).
    labels : dict, optional
        Control name -> callable turning a value into its label (default ``str``).
    title : str
        A line above the sliders.
    alt : str
        One sentence saying what every frame shows, for screen readers; each frame's
        alternative text is this sentence followed by its control values. Required: a
        frame without it would be read out as its control values alone.
    dpi : int
        Resolution of the frames. Each frame is shown at the width the figure has at
        matplotlib's 100 dpi, so 160 puts 1.6 image pixels into each CSS pixel: sharp on
        high-DPI screens at a fraction of the bytes of 2x.
    colors : int
        Size of each frame's palette (smaller files; line plots need few colours).

    Returns
    -------
    StaticExplorer
        Displays as HTML in the book and in Jupyter; ``len()`` is the number of frames
        (the product of the controls' lengths: keep it to a few dozen).
    """
    if not alt.strip():
        raise ValueError("alt: one sentence saying what the frames show (for screen readers) is required")
    controls = {name: list(values) for name, values in controls.items()}
    initial = initial or {}
    labels = labels or {}
    start = [values.index(initial[name]) if name in initial else 0 for name, values in controls.items()]
    names = [[labels.get(name, str)(v) for v in values] for name, values in controls.items()]
    frames, width = {}, None
    for index in itertools.product(*(range(len(v)) for v in controls.values())):
        values = {name: controls[name][i] for name, i in zip(controls, index)}
        out = draw(**values)
        fig, text = out if isinstance(out, tuple) else (out, "")
        png, pixels = _png(fig, dpi, colors)
        width = width or pixels * 100 // dpi  # CSS pixels: as a figure at matplotlib's 100 dpi
        shown = ", ".join(f"{name} = {label[i]}" for name, label, i in zip(controls, names, index))
        frames["-".join(map(str, index))] = {"png": png, "text": text, "alt": f"{alt.strip().rstrip('.')} ({shown})."}
    return StaticExplorer(controls, names, frames, start, title=title, width=width)


def frontier_frames(Ns=(100, 784, 10_000, 1_000_000), ns=(2, 5, 10, 20, 30, 45, 60, 100, 150),
                    formats=("float16", "bfloat16", "float32", "float64"), *, initial=(10_000, 30)):
    """Chapter 3's overflow frontier without a kernel: sliders over N and n, the picture of
    :func:`damlite.book.plots.plot_power_and_limits` and, under it, N**n (exact) and each
    format's largest safe n for that N.
    """
    from ..paper import numerics  # noqa: PLC0415
    from . import plots  # noqa: PLC0415

    import matplotlib.pyplot as plt  # noqa: PLC0415

    def draw(N, n):  # fixed margins: the axes stay in place from frame to frame (and no layout pass per frame)
        fig, axes = plt.subplots(2, 1, figsize=(7.2, 6.6))
        fig.subplots_adjust(left=0.105, right=0.975, top=0.955, bottom=0.075, hspace=0.36)
        plots.plot_power_and_limits(N, n, formats, axes=axes)
        return axes[0].figure, _frontier_text(N, n, formats, numerics)

    return static_explorer(draw, {"N": Ns, "n": ns}, initial={"N": initial[0], "n": initial[1]},
                           labels={"N": lambda N: f"{N:,}"}, title="The overflow frontier: move N and n",
                           alt="Two line plots of the base-10 logarithm of x to the power n against x up to N, with "
                               "each floating-point format's largest number as a horizontal line")


def _frontier_text(N, n, formats, numerics):
    lines = [f"N**n = {numerics.mpmath.nstr(numerics.exact_power(N, n), 6)} (exact, mpmath)"]
    for name in formats:
        limit = numerics.overflow_frontier(N, name)
        lines.append(f"  {name:>8}: largest safe n = {limit:4d}  ->  {'finite' if n <= limit else 'inf'}")
    return "\n".join(lines)


def heatmap_frames(records, ns, grid="coarse", *, variants=("original", "normalized"), N=100,
                   dtype="float64", metric="distance", vmax=None):
    """Chapter 6's sweep heatmaps without a kernel: one slider over n; each frame is
    :func:`damlite.book.plots.plot_sweep_heatmaps` for that n, the two networks one above the
    other (same colour scale in every frame, so frames can be compared).

    ``records`` and the keywords are those of ``plot_sweep_heatmaps``.
    """
    from . import plots  # noqa: PLC0415

    def draw(n):  # the networks one above the other: a frame that a phone shows large enough
        return plots.plot_sweep_heatmaps(records, [n], grid, variants=variants, N=N, dtype=dtype, metric=metric,
                                         vmax=vmax, title=f"n = {n}", ncols=1)

    return static_explorer(draw, {"n": list(ns)}, title="Sweep heatmaps: move n",
                           alt=f"Heatmaps of the mean {metric} over learning rate and inverse temperature, "
                               f"{' above '.join(variants)} network, with a star at the best cell")
