"""The F1 heatmap helpers draw whatever is on file, including nothing (no 0-row figure)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from damlite.book import plots  # noqa: E402


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


def _visible_ticks(axis):
    lo, hi = sorted(axis.get_view_interval())
    return [t for t in axis.get_majorticklocs() if lo <= t <= hi]


def test_f1_panels_name_each_networks_own_temperature_and_tick_short_grids():
    recs = _grid("original", 2, 0.5) + _grid("normalized", 2, 0.5)
    fig = plots.plot_f1_heatmaps(recs, (2,))
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert [ax.get_ylabel() for ax in axes] == ["$1/T$", "$1/T'$"]
    # the learning rates span one decade: ticked at the grid's two rates, not one decade tick
    np.testing.assert_allclose(_visible_ticks(axes[0].xaxis), [0.01, 0.1])
    plt.close(fig)
    # the same network side by side (500 vs 60 epochs): only the first column is labelled
    fig = plots.plot_f1_panels([(recs, "normalized", 2, "a"), (recs, "normalized", 2, "b")])
    assert [ax.get_ylabel() for ax in fig.axes[:2]] == ["$1/T'$", ""]
    plt.close(fig)


def _rows(variant, centre, good=0.3):
    return [dict(variant=variant, n=n, N=100, grid="coarse", dtype="float64", best=0.0,
                 good_inv_temperature_center=c, good_inv_temperature_min=c / 3,
                 good_inv_temperature_max=c * 3, good_learning_rate_center=0.1, good_fraction=good)
            for n, c in zip((2, 5, 10), centre)]


def test_good_region_figures_keep_one_temperature_per_axis_and_never_blend_ranges():
    orig = _rows("original", (0.01, 0.02, 0.03))  # 1/T; drawn at N/T = 1, 2, 3
    norm = _rows("normalized", (1.0, 2.0, 3.0))
    for axes in (plots.plot_optimum_vs_n(orig + norm),
                 plots.plot_readings({"A": orig + norm}, per_reading=True)[0],
                 plots.plot_readings({"A": orig + norm, "B": norm})):
        ax = axes[0]
        assert ax.get_ylabel().startswith("$1/T'$") and "original" not in ax.get_ylabel()
        assert not [c for c in ax.collections if type(c).__name__ == "FillBetweenPolyCollection"
                    or (type(c).__name__ == "PolyCollection" and c.get_alpha())]  # no shaded bands
        bars = [c for c in ax.collections if type(c).__name__ == "LineCollection"]
        xs = [sorted({round(float(seg[0][0]), 6) for seg in b.get_segments()}) for b in bars]
        assert len(xs) >= 2 and all(not set(a) & set(b) for a in xs for b in xs if a is not b)
        # the original network's centre sits on the normalized one's: drawn at N/T
        line = next(ln for ln in ax.get_lines() if "original" in ln.get_label())
        np.testing.assert_allclose(np.asarray(line.get_ydata(), dtype=float), [1.0, 2.0, 3.0])
        plt.close("all")


def test_energy_and_basins_tell_n_apart_without_colour():
    """Chapter 1's intuition figure: every n differs in colour, marker and line style."""
    flipped = np.array([0.0, 0.1, 0.2])
    energy = {n: -(1 - 2 * flipped) ** n for n in (2, 3, 10)}
    recalled = {n: np.array([1.0, 0.9, 0.5]) for n in (2, 3, 10)}
    fig = plots.plot_energy_and_basins(flipped, energy, recalled)
    top, bottom = fig.axes[:2]
    for ax in (top, bottom):
        lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("n =")]
        assert len(lines) == 3
        for attr in ("get_color", "get_marker", "get_linestyle"):
            assert len({str(getattr(ln, attr)()) for ln in lines}) == 3, attr
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["n = 2", "n = 3", "n = 10"]


def test_readings_and_dead_memories_tell_series_apart_without_colour():
    """Chapter 6: each reading (or interaction) has its own colour and marker; the network its line style."""
    orig, norm = _rows("original", (0.01, 0.02, 0.03)), _rows("normalized", (1.0, 2.0, 3.0))
    axes = plots.plot_readings({"A": orig + norm, "A + leak": orig + norm})
    lines = [ln for ln in axes[0].get_lines() if ln.get_label().startswith("A")]
    assert len({(ln.get_color(), ln.get_marker()) for ln in lines}) == 2  # one look per reading
    for attr in ("get_color", "get_marker"):
        assert len({str(getattr(ln, attr)()) for ln in lines if "normalized" in ln.get_label()}) == 2, attr
    assert len({ln.get_linestyle() for ln in lines}) == 2  # the network: solid or dashed
    plt.close("all")
    recs = [dict(variant=v, n=n, inactive_memories=0.1 * n) for v in ("original", "normalized") for n in (2, 5)]
    ax = plots.plot_dead_memories({"no leak": recs, "leak": recs})
    lines = [ln for ln in ax.get_lines() if "normalized" in ln.get_label()]
    for attr in ("get_color", "get_marker"):
        assert len({str(getattr(ln, attr)()) for ln in lines}) == 2, attr
    plt.close("all")
