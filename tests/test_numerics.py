"""damlite.paper.numerics: format limits, frontiers, bfloat16 emulation and the mpmath reference.

The frontiers are checked against direct computation: exact integers/fractions for
the definition, and NumPy (or the bfloat16 emulation) for what a program really
gets at the frontier n and the one after it.
"""
from __future__ import annotations

import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import damlite
from damlite.paper import numerics as nm
from damlite.interactions import make_interaction
from damlite.network import energy_difference


def _exact(value) -> Fraction:
    """An mpf limit (a dyadic number) as an exact Fraction."""
    man, exp = mpmath.mpf(value).man_exp
    return Fraction(int(man)) * (Fraction(2) ** int(exp))


# ------------------------------------------------------------------- formats
@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_formats_match_numpy_finfo(name):
    fmt, info = nm.FORMATS[name], np.finfo(name)
    assert float(fmt.max) == float(info.max)
    assert float(fmt.smallest_normal) == float(info.smallest_normal)
    assert float(fmt.smallest_subnormal) == float(info.smallest_subnormal)
    assert fmt.mantissa_bits == info.nmant
    assert float(fmt.epsilon) == float(info.eps)


def test_bfloat16_description_from_its_definition():
    fmt = nm.FORMATS["bfloat16"]
    d = fmt.describe()
    assert (d["bits"], d["exponent bits"], d["mantissa bits"]) == (16, 8, 7)
    # float32's exponent range: same smallest normal, max just below float32's
    assert _exact(fmt.smallest_normal) == Fraction(1, 2**126)
    assert _exact(fmt.smallest_subnormal) == Fraction(1, 2**133)
    assert _exact(fmt.max) == (2 - Fraction(1, 2**7)) * 2**127
    assert d["largest finite"] == 3.3895313892515355e38 < float(np.finfo(np.float32).max)
    # bit view: the top 16 bits of float32's encoding of bfloat16's max are 0x7F7F
    top = np.array([d["largest finite"]], dtype=np.float32).view(np.uint32)[0]
    assert top == 0x7F7F0000


def _bfloat16_by_bits(x32):
    """Independent bfloat16 rounding: float32 bits, round to nearest even on the low 16 bits."""
    bits = x32.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def test_bfloat16_rounding_matches_bit_rounding():
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32)
    x32 = bits.view(np.float32)
    x32 = x32[np.isfinite(x32)]
    ours = nm.round_to_format(x32.astype(np.float64), "bfloat16")
    assert np.array_equal(ours, _bfloat16_by_bits(x32))
    # ties go to even, overflow goes to inf
    one_and_half_ulp = np.array([1 + 2**-8, 1 + 3 * 2**-8], dtype=np.float64)
    assert nm.round_to_format(one_and_half_ulp, "bfloat16").tolist() == [1.0, 1 + 2**-6]
    assert np.isinf(nm.round_to_format(np.array([3.4e38]), "bfloat16")[0])


@pytest.mark.parametrize("name", ["float16", "float32"])
def test_round_to_format_matches_numpy_casts(name):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(20_000) * np.exp2(rng.integers(-160, 140, 20_000))
    with np.errstate(over="ignore"):
        assert np.array_equal(nm.round_to_format(x, name), x.astype(name).astype(np.float64))


# ------------------------------------------------------------------ overflow
def test_float32_frontier_for_N_100_is_19():
    # log10(3.4e38) = 38.53, and 100**n = 10**(2n): n = floor(38.53 / 2) = 19
    assert nm.overflow_frontier(100, "float32") == 19
    assert 100**19 <= _exact(nm.FORMATS["float32"].max) < 100**20
    with np.errstate(over="ignore"):
        assert np.isfinite(np.float32(100) ** 19) and np.isinf(np.float32(100) ** 20)


def test_paper_example_N_1e4_n_30():
    value = nm.exact_power(10_000, 30)
    assert int(value) == 10**120
    assert value > nm.FORMATS["float32"].max and value < nm.FORMATS["float64"].max
    assert nm.overflow_frontier(10_000, "float32") < 30 <= nm.overflow_frontier(10_000, "float64")


@settings(max_examples=60, deadline=None)
@given(N=st.integers(3, 10**6), K=st.sampled_from([1, 7, 256]), fmt=st.sampled_from(nm.FORMAT_NAMES),
       term=st.sampled_from(["largest", "second"]))
def test_frontier_is_exact_definition(N, K, fmt, term):
    n = nm.overflow_frontier(N, fmt, K=K, term=term)
    base = N if term == "largest" else N - 2
    limit = _exact(nm.FORMATS[fmt].max)
    if n >= 0:
        assert K * base**n <= limit
    assert K * base ** (n + 1) > limit


@pytest.mark.parametrize("fmt", ["float16", "float32", "float64"])
def test_numpy_powers_overflow_just_after_the_frontier(fmt):
    Ns = np.array([10, 37, 100, 255, 784, 1000, 10_000, 65_504])
    for N in Ns:
        n = nm.overflow_frontier(int(N), fmt)
        with np.errstate(over="ignore"):
            below = make_interaction("polynomial", max(n, 1))(np.array([N], dtype=fmt))[0]
            above = make_interaction("polynomial", n + 1)(np.array([N], dtype=fmt))[0]
        if n >= 1:
            assert np.isfinite(below), (N, n)
        assert np.isinf(above), (N, n)


def test_bfloat16_emulated_powers_overflow_just_after_the_frontier():
    for N in (10, 100, 784, 10_000):
        n = nm.overflow_frontier(N, "bfloat16")
        assert np.isfinite(nm.emulated_power(np.array([float(N)]), n, "bfloat16")[0])
        assert np.isinf(nm.emulated_power(np.array([float(N)]), n + 1, "bfloat16")[0])
    # emulated float32 agrees with NumPy's float32 bit for bit
    x = np.random.default_rng(3).uniform(0.5, 30.0, 200).astype(np.float32)
    with np.errstate(over="ignore"):
        numpy32 = make_interaction("polynomial", 23)(x).astype(np.float64)
    assert np.array_equal(nm.emulated_power(x.astype(np.float64), 23, "float32"), numpy32)


@pytest.mark.parametrize("N", [100, 85])
def test_original_network_overflows_at_the_predicted_n(N):
    """Finite at the frontier, NumericalOverflowError one step later (float32, stored patterns)."""
    n_star = nm.overflow_frontier(N, "float32")
    patterns = np.where(np.random.default_rng(4).random((5, N)) < 0.5, -1.0, 1.0)
    for n in (n_star, n_star + 1):
        dam = damlite.DenseAssociativeMemory(5, n=n, interaction="polynomial", variant="original",
                                             dtype="float32", backend="numpy")
        dam.memories_ = patterns
        if n == n_star:
            assert np.all(np.isfinite(dam.energy_difference(patterns)))
        else:
            with pytest.raises(damlite.NumericalOverflowError, match=f"N={N}"):
                dam.energy_difference(patterns)
    # the raw kernel one step past: inf - inf = NaN where both terms overflow, else +-inf
    raw = energy_difference(patterns.astype(np.float32)[None], patterns.astype(np.float32),
                            make_interaction("polynomial", n_star + 1))[0]
    if nm.overflow_frontier(N, "float32", term="second") > n_star:
        assert np.all(np.isinf(raw)) and np.array_equal(np.sign(raw), patterns)
    else:
        assert np.all(np.isnan(raw))


def test_frontier_table_and_curve():
    table = nm.frontier_table((100, 784, 10_000), K=256)
    rows = {(r[0], r[1]): r[2:] for r in table.rows}
    assert rows[(100, "Nⁿ")] == [2, 19, 19, 154]
    assert rows[(10_000, "Nⁿ")] == [1, 9, 9, 77]
    assert rows[(784, "256 Nⁿ")][-1] == nm.overflow_frontier(784, "float64", K=256) <= 106
    assert "<table" in table._repr_html_() and "float64" in str(table)
    curve = nm.frontier_curve([2, 10, 100], "float64")
    assert curve.tolist() == [1023, 308, 154]


def test_table_html_pads_cells_and_keeps_numbers_on_one_line():
    """Without any stylesheet, every cell is padded and no data cell wraps
    (2.225e-308 stays whole); only header cells may wrap between words."""
    import re

    table = nm.Table(["format", "smallest normal"], [["float64", "2.225e-308"], ["a<b", 1]],
                     caption="limits & more")
    html = table._repr_html_()
    cells = re.findall(r'<(t[hd]) style="([^"]*)">(.*?)</\1>', html)
    assert [tag for tag, _, _ in cells] == ["th"] * 2 + ["td"] * 4
    for tag, style, _ in cells:
        padding = re.search(r"padding: *([0-9.]+)", style)
        assert padding and float(padding.group(1)) > 0
        if tag == "td":
            assert "white-space: nowrap" in style
    assert [c[2] for c in cells][2:4] == ["float64", "2.225e-308"]
    assert "text-align: right" in cells[1][1] and "text-align: left" in cells[0][1]
    assert "a&lt;b" in html and "limits &amp; more" in html  # escaped, not markup


# ----------------------------------------------------------------- underflow
@pytest.mark.parametrize("fmt", nm.FORMAT_NAMES)
@pytest.mark.parametrize("N,overlap", [(100, 98), (100, 10), (784, 28), (784, 2.8), (100, 1)])
def test_underflow_frontier_definition(fmt, N, overlap):
    f = nm.FORMATS[fmt]
    x = Fraction(overlap).limit_denominator(10**12) / N
    n = nm.underflow_frontier(N, fmt, overlap=overlap)
    assert x**n > _exact(f.smallest_subnormal) / 2 >= x ** (n + 1)
    # rounding the exact value to the format: non-zero at n, exactly 0 at n + 1
    if fmt != "float64":
        vals = [float(mpmath.mpf(x.numerator) ** k / mpmath.mpf(x.denominator) ** k) for k in (n, n + 1)]
        assert nm.round_to_format(np.array(vals), fmt).tolist()[1] == 0.0
        assert nm.round_to_format(np.array(vals), fmt).tolist()[0] > 0.0
    m = nm.underflow_frontier(N, fmt, overlap=overlap, level="normal")
    assert x**m >= _exact(f.smallest_normal) > x ** (m + 1)
    assert m <= n


def test_underflow_in_numpy_float32_near_the_frontier():
    # x = 0.1 in float32 is not exactly 0.1, so test two steps either side of the frontier
    n = nm.underflow_frontier(100, "float32", overlap=10)
    assert n == 45
    with np.errstate(under="ignore"):
        assert make_interaction("polynomial", n - 2)(np.float32([0.1]))[0] > 0
        assert make_interaction("polynomial", n + 2)(np.float32([0.1]))[0] == 0


def test_resolution_limit():
    for fmt in ("float16", "float32"):
        N = nm.resolution_limit(fmt)
        below = np.array([1 - 2 / N, 1 - 2 / (N + 1)]).astype(fmt)
        assert below[0] < 1 and below[1] == 1
    N = nm.resolution_limit("bfloat16")
    assert nm.round_to_format(np.array([1 - 2 / N]), "bfloat16")[0] < 1
    assert nm.round_to_format(np.array([1 - 2 / (N + 1)]), "bfloat16")[0] == 1


# ---------------------------------------------------------------- reference
def test_reference_is_exact_for_bipolar_patterns():
    """Against Python integers: bipolar memories make every argument an integer."""
    rng = np.random.default_rng(5)
    zeta = np.where(rng.random((4, 12)) < 0.5, -1, 1)
    xi = np.where(rng.random((3, 12)) < 0.5, -1, 1)
    for name, n in (("polynomial", 7), ("rectified_polynomial", 40)):
        F = (lambda x: x**n) if name == "polynomial" else (lambda x: max(x, 0) ** n)
        ref = nm.reference_energy_difference(zeta, xi, name, n, dps=200)
        for b in range(3):
            for i in range(12):
                exact = 0
                for mu in range(4):
                    z = int(zeta[mu, i])
                    s = int(zeta[mu] @ xi[b]) - z * int(xi[b, i])
                    exact += F(s + z) - F(s - z)
                assert ref[b, i] == exact


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12),
       name=st.sampled_from(["polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential"]),
       normalized=st.booleans())
def test_numpy_float64_agrees_with_mpmath(seed, n, name, normalized):
    rng = np.random.default_rng(seed)
    N, K, B = 9, 3, 2
    zeta = np.clip(rng.normal(0, 0.5, (K, N)), -1, 1)
    xi = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    scale = Fraction(1, N) if normalized or name == "exponential" else 1
    ref = nm.reference_energy_difference(zeta, xi, name, n, scale)
    inter = make_interaction(name, n)
    got = energy_difference(zeta[None], xi, inter, float(scale))[0]
    # error bound: a few (n + N) ulps of K times the largest possible term (cancellation
    # makes a relative bound impossible)
    top = float(scale) * (np.abs(zeta).sum(axis=1).max() + 1)
    size = K * float(np.max(np.abs(inter(np.array([-top, top])))))
    for b in range(B):
        for i in range(N):
            assert abs(got[b, i] - float(ref[b, i])) <= 50 * (n + N) * 2.0**-52 * max(size, 1e-300)


def test_relative_error_conventions():
    ref = np.array([mpmath.mpf(2), mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(1)], dtype=object)
    err = nm.relative_error([2.0 * (1 + 2**-52), 0.0, 1e-300, np.inf], ref)
    assert err.tolist() == [2.0**-52, 0.0, np.inf, np.inf]


# ----------------------------------------------------- underflow in the network
def test_normalized_float32_underflow_warns_and_adaptive_restores_signs():
    rng = np.random.default_rng(6)
    N, K, n = 100, 20, 40
    memories = np.clip(rng.normal(0, 0.1, (K, N)), -1, 1)
    states = np.where(rng.random((6, N)) < 0.5, -1.0, 1.0)
    exact = np.vectorize(lambda r: int(mpmath.sign(r)))(nm.reference_energy_difference(memories, states,
                                                                                        "polynomial", n))
    dam = damlite.DenseAssociativeMemory(K, n=n, interaction="polynomial", dtype="float32", backend="numpy")
    dam.memories_ = memories
    with pytest.warns(damlite.NumericalUnderflowWarning, match="sign\\(0\\)"):
        fixed = np.asarray(dam.energy_difference(states))
    assert np.sum(fixed == 0) > N  # many neurons left to the sign(0) convention
    assert np.sum(np.sign(fixed) != exact) > 0
    adaptive = damlite.DenseAssociativeMemory(K, n=n, interaction="polynomial", dtype="float32",
                                              backend="numpy", scaling="adaptive")
    adaptive.memories_ = memories
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rescaled = np.asarray(adaptive.energy_difference(states))
    assert np.array_equal(np.sign(rescaled), exact)


def test_precision_study_small():
    study = nm.precision_study([2, 80], N=24, K=4, B=3, random_state=1)
    assert study.median_error.shape == (6, 2)
    i64 = study.configs.index(("original", "float64"))
    assert study.max_error[i64, 0] < 1e-10 and study.sign_errors[i64].sum() == 0
    o32 = study.configs.index(("original", "float32"))
    assert study.nonfinite[o32, 1] > 0  # overlaps of a few units, to the 80th power
    assert study.sign_errors[study.configs.index(("adaptive", "float32"))].sum() == 0
    assert "median rel. error" in str(study.summary())


def test_chapter_plot_helpers_and_explorer_run():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from damlite.book import plots

    Ns = np.array([10, 100, 1000])
    ax = plots.plot_overflow_frontier(Ns, {f: nm.frontier_curve(Ns, f) for f in nm.FORMAT_NAMES}, mark=(100, 19, "x"))
    assert len(ax.get_lines()) == 5
    plots.plot_underflow_frontier(np.array([0.01, 0.5]), marks={"a": 0.1})
    plots.plot_power_and_limits(100, 20)
    plots.plot_precision_study(nm.precision_study([2, 3], N=6, K=2, B=1))
    plt.close("all")
    widgets = pytest.importorskip("ipywidgets")
    from damlite.book.widgets import frontier_explorer

    explorer = frontier_explorer(N=100, n=5)
    assert isinstance(explorer, widgets.Widget)
    plt.close("all")
