"""The F1 heatmap helpers draw whatever is on file, including nothing (no 0-row figure)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from damlite import plots  # noqa: E402


def _grid(variant, n, f1):
    return [dict(variant=variant, n=n, grid="paper", dtype="float64", inv_temperature=it,
                 learning_rate=lr, i_T=i, i_lr=j, f1=f1 + 0.01 * i * j, repeat=0, N=794)
            for i, it in enumerate((0.1, 1.0, 10.0)) for j, lr in enumerate((0.01, 0.1))]


def test_empty_panels_make_no_figure():
    before = plt.get_fignums()
    assert plots.plot_f1_panels([]) is None
    assert plots.plot_f1_heatmaps([], ()) is None
    assert plots.plot_sweep_heatmaps([], []) is None
    assert plt.get_fignums() == before


def test_full_beside_short_one_row_per_grid():
    full, short = _grid("normalized", 2, 0.5), _grid("normalized", 2, 0.2) + _grid("original", 5, 0.3)
    fig = plots.plot_f1_panels([(full, "normalized", 2, "500 epochs"), (short, "normalized", 2, "60 epochs"),
                                (full, "original", 5, "500 epochs"), (short, "original", 5, "60 epochs")])
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    titles = [ax.get_title() for ax in axes[:4]]
    assert titles == ["500 epochs", "60 epochs", "500 epochs", "60 epochs"]
    # the missing full grid says so, the others are drawn
    assert [bool(ax.collections) for ax in axes[:4]] == [True, True, False, True]
    assert any(t.get_text() == "no results" for t in axes[2].texts)
    mesh = axes[0].collections[0].get_array()
    assert np.isclose(np.nanmax(mesh), 0.52)
    plt.close(fig)
