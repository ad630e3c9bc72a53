"""Interaction functions F and F' against mpmath; homogeneity; integer powers; construction errors."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mpmath import mp, mpf

import reference
from damlite.interactions import (
    Exponential,
    LeakyRectifiedPolynomial,
    Polynomial,
    RectifiedPolynomial,
    integer_power,
    make_interaction,
)

from conftest import HOMOGENEOUS, INTERACTIONS


@pytest.mark.parametrize("name", INTERACTIONS)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 20])
def test_value_and_derivative_match_mpmath(name, n):
    F = make_interaction(name, n, epsilon=0.03)
    f_ref, df_ref = reference.F_ref(name, n, 0.03)
    x = np.concatenate([np.linspace(-3, 3, 61), [-1e-3, 1e-3, 0.5, -0.5]])
    x = x[x != 0]  # the rectified kinks are conventions, checked separately
    value, slope = F.value_and_derivative(x)
    np.testing.assert_allclose(F(x), value, rtol=1e-14, atol=0)  # x**n vs x**(n-1) * x: rounding only
    np.testing.assert_array_equal(F.derivative(x), slope)
    _assert_matches_mpmath(F, f_ref, df_ref, x)


def _assert_matches_mpmath(F, f_ref, df_ref, x):
    """F and F' at ``x`` against the mpmath reference, to 1e-13 relative."""
    value, slope = F.value_and_derivative(x)
    with mp.workdps(reference.DPS):
        want_v = np.array([float(f_ref(mpf(float(v)))) for v in x])
        want_d = np.array([float(df_ref(mpf(float(v)))) for v in x])
    np.testing.assert_allclose(value, want_v, rtol=1e-13, atol=0)
    np.testing.assert_allclose(slope, want_d, rtol=1e-13, atol=0)


def test_values_at_zero():
    x = np.zeros(3)
    assert np.all(Polynomial(3)(x) == 0) and np.all(Polynomial(3).derivative(x) == 0)
    assert np.all(RectifiedPolynomial(2)(x) == 0) and np.all(RectifiedPolynomial(2).derivative(x) == 0)
    assert np.all(LeakyRectifiedPolynomial(2, 0.1)(x) == 0)
    assert np.all(Exponential()(x) == 1) and np.all(Exponential().derivative(x) == 1)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13, 30, 64, 127])
def test_integer_power_is_exact_on_integers(n):
    x = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    got = integer_power(x, n)
    want = [float(int(v) ** n) if abs(int(v) ** n) < 2**1000 else math.copysign(math.inf, v) for v in x]
    # exact whenever the true power is representable (powers of 2 and small values)
    for g, w, v in zip(got, want, x):
        if abs(v) in (0.0, 1.0, 2.0) or abs(w) < 2**53:
            assert g == w, (v, n, g, w)
        else:
            assert math.isclose(g, w, rel_tol=1e-13)


@given(x=st.floats(-2, 2, allow_nan=False), n=st.integers(0, 40))
def test_integer_power_matches_mpmath(x, n):
    got = float(integer_power(np.array([x]), n)[0])
    with mp.workdps(50):
        want = float(mpf(x) ** n)
    assert got == pytest.approx(want, rel=(n + 1) * 2.3e-16, abs=1e-300)


@pytest.mark.parametrize("name", HOMOGENEOUS)
@given(x=st.floats(-4, 4, allow_nan=False), a=st.floats(1e-3, 1e3), n=st.integers(1, 12))
def test_homogeneous_of_degree_n(name, x, a, n):
    F = make_interaction(name, n)
    assert F.degree == n
    with mp.workdps(50):
        f, _ = reference.F_ref(name, n)
        lhs_mp, rhs_mp = f(mpf(a) * mpf(x)), mpf(a) ** n * f(mpf(x))
        assert mpmath.almosteq(lhs_mp, rhs_mp, rel_eps=mpf(10) ** -45, abs_eps=0) or lhs_mp == rhs_mp
    lhs = float(F(np.array([a * x]))[0])
    rhs = a**n * float(F(np.array([x]))[0])
    assert lhs == pytest.approx(rhs, rel=1e-12 * (n + 2), abs=1e-300)


@pytest.mark.parametrize("name", ["leaky_rectified_polynomial", "exponential"])
def test_non_homogeneous_have_no_degree_and_counterexample(name):
    F = make_interaction(name, 3, epsilon=0.01)
    assert F.degree is None
    x, a = np.array([-1.0, 0.5]), 2.0
    # F(a x) != a**k F(x) for any single k: two points give two different ratios
    ratios = np.log(np.abs(F(a * x) / F(x))) / np.log(a)
    assert abs(ratios[0] - ratios[1]) > 0.5


def test_support_masks():
    x = np.array([-1.0, 0.0, 1.0])
    assert list(RectifiedPolynomial(2).support(x)) == [False, False, True]
    assert list(Polynomial(2).support(x)) == [True, False, True]
    assert list(Exponential().support(x)) == [True, True, True]


def test_make_interaction_builds_and_passes_instances_through():
    assert make_interaction("polynomial", 4) == Polynomial(4)
    assert make_interaction("rectified_polynomial", 4.0) == RectifiedPolynomial(4)
    assert make_interaction("leaky_rectified_polynomial", 2, 0.5) == LeakyRectifiedPolynomial(2, 0.5)
    assert make_interaction("exponential", 99) == Exponential()
    inst = Polynomial(3)
    assert make_interaction(inst) is inst


@pytest.mark.parametrize("kwargs, match", [
    ({"interaction": "cubic"}, "interaction"),
    ({"interaction": "polynomial", "n": 0}, "n must"),
    ({"interaction": "polynomial", "n": -2}, "n must"),
    ({"interaction": "polynomial", "n": 2.5}, "n must"),
    ({"interaction": "polynomial", "n": True}, "n must"),
    ({"interaction": "polynomial", "n": "3"}, "n must"),
    ({"interaction": "leaky_rectified_polynomial", "n": 2, "epsilon": -1.0}, "epsilon"),
    ({"interaction": "leaky_rectified_polynomial", "n": 2, "epsilon": float("nan")}, "epsilon"),
    ({"interaction": "leaky_rectified_polynomial", "n": 2, "epsilon": "0.1"}, "epsilon"),
    ({"interaction": "leaky_rectified_polynomial", "n": 2, "leak": "minus"}, "leak"),
    ({"interaction": "polynomial", "n": 2**70}, "n must"),
    ({"interaction": None}, "interaction"),
])
def test_make_interaction_errors_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_interaction(**kwargs)


@pytest.mark.parametrize("leak", ["paper", "code"])
@pytest.mark.parametrize("epsilon", [0.01, 1.0])
@pytest.mark.parametrize("n", [1, 2, 5, 20])
def test_both_leak_signs_match_mpmath(leak, epsilon, n):
    F = make_interaction("leaky_rectified_polynomial", n, epsilon, leak)
    f_ref, df_ref = reference.F_ref("leaky_rectified_polynomial", n, epsilon, leak)
    _assert_matches_mpmath(F, f_ref, df_ref, np.concatenate([np.linspace(-3, 3, 61), [-1e-3, 1e-3]]))


def test_leak_signs_differ_below_zero_only():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    paper = make_interaction("leaky_rectified_polynomial", 3, 0.1, "paper")
    code = make_interaction("leaky_rectified_polynomial", 3, 0.1, "code")
    np.testing.assert_array_equal(paper(x), [0.2, 0.05, 0.0, 0.125, 8.0])
    np.testing.assert_array_equal(code(x), [-0.2, -0.05, 0.0, 0.125, 8.0])
    assert paper.negative_slope == -0.1 and code.negative_slope == 0.1


def test_author_rectified_polynomial_is_slope_one_below_zero():
    F = make_interaction("author_rectified_polynomial", 4)
    assert F == LeakyRectifiedPolynomial(4, 1.0, "code")
    x = np.array([-3.0, -1.0, 0.0, 2.0])
    np.testing.assert_array_equal(F(x), [-3.0, -1.0, 0.0, 16.0])
    np.testing.assert_array_equal(F.derivative(x), [1.0, 1.0, 0.0, 32.0])


@pytest.mark.parametrize("F, homogeneous", [
    (Polynomial(3), True), (RectifiedPolynomial(3), True), (Exponential(), False),
    (LeakyRectifiedPolynomial(3, 0.01, "paper"), False), (LeakyRectifiedPolynomial(3, 0.01, "code"), False),
    (LeakyRectifiedPolynomial(3, 0.0, "code"), True),
])
def test_homogeneous_flag(F, homogeneous):
    assert F.homogeneous is homogeneous
    if homogeneous:  # the flag is a fact: F(a x) = a**n F(x)
        x, a = np.linspace(-2, 2, 9), 1.7
        np.testing.assert_allclose(F(a * x), a ** F.degree * F(x), rtol=1e-13)
    else:
        x, a = np.array([-1.0, 0.5]), 2.0
        assert not np.allclose(F(a * x), a ** 3 * F(x))
