"""The estimator's API as a student meets it (2026-11-26, commit b3fd1ca): constructor parameters, defaults
that cannot fail silently, deprecated fit keywords."""
import inspect
import warnings

import numpy as np
import pytest

import damlite
from damlite import DenseAssociativeMemory

TRAINING = ("epochs", "learning_rate", "lr_decay", "momentum", "batch_size", "normalize_step", "clamp", "neurons",
            "warm_start")


def _patterns(seed=0, B=20, N=100):
    return np.random.default_rng(seed).choice([-1.0, 1.0], (B, N))


def _flip(patterns, fraction, seed=1):
    flips = np.random.default_rng(seed).random(patterns.shape) < fraction
    return np.where(flips, -patterns, patterns)


# ------------------------------------------------------------------ constructor parameters
def test_every_training_setting_is_a_constructor_parameter():
    params = DenseAssociativeMemory().get_params()
    assert set(TRAINING) <= set(params)
    fit = inspect.signature(DenseAssociativeMemory.fit).parameters
    assert [p for p in fit if fit[p].kind is inspect.Parameter.KEYWORD_ONLY] == ["progress"]


def test_constructor_settings_drive_fit():
    X = _patterns(B=6, N=16)
    dam = DenseAssociativeMemory(8, n=3, epochs=7, batch_size=2, backend="numpy", random_state=0).fit(X)
    assert dam.loss_curve_.shape == (7,)
    assert dam.get_params()["epochs"] == 7


def test_deprecated_fit_keywords_warn_and_match_the_new_form():
    X = _patterns(B=6, N=16)
    new = DenseAssociativeMemory(8, n=3, epochs=5, learning_rate=0.05, backend="numpy", random_state=0).fit(X)
    old = DenseAssociativeMemory(8, n=3, backend="numpy", random_state=0)
    with pytest.warns(FutureWarning, match=r"epochs, learning_rate.*constructor parameters"):
        old.fit(X, epochs=5, learning_rate=0.05)
    np.testing.assert_array_equal(damlite.to_numpy(old.memories_), damlite.to_numpy(new.memories_))
    assert old.get_params()["epochs"] == 100  # the call's settings do not become the estimator's


def test_deprecated_fit_temperature_sets_the_parameter():
    dam = DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0)
    with pytest.warns(FutureWarning, match="temperature"):
        dam.fit(_patterns(B=6, N=16), temperature=0.3)
    assert dam.temperature == 0.3


def test_unknown_fit_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="epoch"):
        DenseAssociativeMemory(8, n=3, backend="numpy").fit(_patterns(B=6, N=16), epoch=3)


def test_new_form_fits_without_future_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0).fit(_patterns(B=6, N=16))


# ------------------------------------------------------------------ temperature=None
def test_default_temperature_is_the_equivalent_pair():
    X = _patterns()
    norm = DenseAssociativeMemory(variant="normalized", epochs=2, backend="numpy", random_state=0).fit(X)
    orig = DenseAssociativeMemory(variant="original", epochs=2, backend="numpy", random_state=0).fit(X)
    assert norm.temperature is None and orig.temperature is None
    assert norm.temperature_ == 0.5
    assert orig.temperature_ == 50.0 == damlite.equivalent_temperature(0.5, 100, to="original")
    # the same C: (1 / (N T'))**n F(x) = F(x) / T**n with T = N T'
    assert orig.loss(X) == pytest.approx(norm.loss(X), rel=1e-9)


@pytest.mark.parametrize("n", [2, 10, 30])
def test_original_network_with_defaults_recalls_as_well_as_the_normalized(n):
    """The first student task: recall of random patterns in both networks, default settings.

    Before, the original network kept T = 0.5 (the normalized network's scale): at n = 2 it recalled
    0.697 of the bits from probes with 0.845 right."""
    patterns = _patterns(0)
    probes = _flip(patterns, 0.15)
    recalled = {}
    for variant in ("normalized", "original"):
        dam = DenseAssociativeMemory(n=n, variant=variant, backend="numpy", random_state=0).fit(patterns)
        states = damlite.to_numpy(dam.relax(probes, random_state=0).states)
        recalled[variant] = np.mean(states == patterns)
    noisy = np.mean(probes == patterns)
    assert recalled["original"] > noisy and recalled["normalized"] > noisy, (recalled, noisy)
    assert abs(recalled["original"] - recalled["normalized"]) <= 0.01, recalled
