"""scikit-learn accepts the estimator (2026-11-26, commit 097fe75; scikit-learn is optional at run time, in the
[dev] extra)."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.exceptions import NotFittedError as SkNotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import MinMaxScaler  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

import damlite  # noqa: E402
from damlite import DenseAssociativeMemory  # noqa: E402

# ------------------------------------------------------------------ scikit-learn's own checks
#: The configuration the checks train (n = 2: the checks' 2-feature blobs need no more).
CHECKED = dict(n_memories=8, n=2, epochs=30, backend="numpy", random_state=0)

#: Inputs are neuron states: X outside [-1, 1] is refused rather than rescaled silently. Each of these
#: checks passes on Pipeline(MinMaxScaler(feature_range=(-1, 1), clip=True), estimator) below.
OUT_OF_RANGE = "draws X outside [-1, 1], which the estimator refuses (passes after MinMaxScaler(-1, 1))"
#: Every check that cannot apply, with its reason (test_expected_failures_are_exactly_these keeps this honest).
EXPECTED_FAILED = {name: OUT_OF_RANGE for name in (
    "check_estimators_overwrite_params", "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting", "check_positive_only_tag_during_fit",
    "check_estimators_dtypes", "check_pipeline_consistency", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_classifier_data_not_an_array", "check_classifiers_classes",
    "check_classifiers_train", "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged", "check_fit_idempotent",
    "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
)}
IN_PLACE = "Pipeline fits its last step in place (true of every Pipeline)"
PIPELINE_EXPECTED_FAILED = {"check_estimators_overwrite_params": IN_PLACE, "check_dont_overwrite_parameters": IN_PLACE}


def _scaled():
    return make_pipeline(MinMaxScaler(feature_range=(-1, 1), clip=True), DenseAssociativeMemory(**CHECKED))


@parametrize_with_checks(
    [DenseAssociativeMemory(**CHECKED), _scaled()],
    expected_failed_checks=lambda est: PIPELINE_EXPECTED_FAILED if hasattr(est, "steps") else EXPECTED_FAILED,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator, expected", [
    (DenseAssociativeMemory(**CHECKED), EXPECTED_FAILED), (_scaled(), PIPELINE_EXPECTED_FAILED)],
    ids=["estimator", "pipeline"])
def test_expected_failures_are_exactly_these(estimator, expected):
    """No check listed as inapplicable passes, and no other check fails."""
    results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed == set(expected)


# ------------------------------------------------------------------ the tools a student uses
def test_clone_is_classifier_check_is_fitted():
    dam = DenseAssociativeMemory(16, n=3, epochs=3, temperature=0.4, backend="numpy", random_state=0)
    assert is_classifier(dam)
    twin = clone(dam)
    assert twin is not dam and twin.get_params() == dam.get_params()
    with pytest.raises(SkNotFittedError):
        check_is_fitted(dam)
    with pytest.raises(SkNotFittedError):  # damlite's NotFittedError is scikit-learn's
        dam.predict(np.zeros((2, 5)))
    dam.setup = None  # an unrelated attribute does not make it fitted
    dam.fit(np.random.default_rng(0).choice([-1.0, 1.0], (6, 12)))
    check_is_fitted(dam)
    assert not hasattr(clone(dam), "memories_")


def test_setup_before_fit_does_not_count_as_fitted():
    dam = DenseAssociativeMemory(4, n=3, backend="numpy")
    dam.scales(10)  # sets xp_, interaction_, ... (trailing underscores) but no memories
    with pytest.raises(SkNotFittedError):
        check_is_fitted(dam)


def _mnist(n=600):
    d = damlite.load_mnist(source="bundled", dtype="float64")
    return d.X_train[:n], d.y_train[:n]


def _digit_classifier(**kw):
    return DenseAssociativeMemory(**{"n_memories": 20, "interaction": "rectified_polynomial", "n": 20,
                                     "error_exponent": 30, "epochs": 10, "batch_size": 100, "momentum": 0.6,
                                     "backend": "numpy", "random_state": 0, **kw})


def test_cross_val_score_on_the_bundled_digits():
    X, y = _mnist()
    scores = cross_val_score(_digit_classifier(), X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.4), scores  # chance is 0.1


def test_grid_search_over_n_temperature_and_learning_rate():
    X, y = _mnist(400)
    grid = {"n": [3, 20], "temperature": [0.2, 0.5], "learning_rate": [0.1, 0.2]}
    search = GridSearchCV(_digit_classifier(), grid, cv=2).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    assert set(search.best_params_) == set(grid)
    assert search.best_score_ > 0.3
    assert search.best_estimator_.score(X, y) > 0.5
    # the grid's values reached the fitted estimators: results differ across the grid
    assert np.ptp(search.cv_results_["mean_test_score"]) > 0


def test_pipeline_scales_raw_pixels():
    X, y = _mnist(400)
    pixels = np.round((X + 1) * 127.5)  # 0..255, as a student loads them
    with pytest.raises(ValueError, match=r"\[-1, 1\].*MinMaxScaler"):
        _digit_classifier().fit(pixels, y)
    pipe = make_pipeline(MinMaxScaler(feature_range=(-1, 1), clip=True), _digit_classifier()).fit(pixels, y)
    assert pipe.score(pixels, y) > 0.5
    assert cross_val_score(pipe, pixels, y, cv=2).mean() > 0.3


def test_grid_search_on_an_associative_memory():
    """fit(X) without labels: GridSearchCV scores by the fraction of bits recalled."""
    patterns = np.random.default_rng(0).choice([-1.0, 1.0], (20, 40))
    search = GridSearchCV(DenseAssociativeMemory(20, epochs=20, backend="numpy", random_state=0),
                          {"n": [2, 10]}, cv=2).fit(patterns)
    assert 0.0 <= search.best_score_ <= 1.0


def test_metadata_free_fit_keywords_still_work_through_sklearn():
    """Deprecated fit keywords pass through a Pipeline's fit params (with their FutureWarning)."""
    X, y = _mnist(200)
    pipe = make_pipeline(MinMaxScaler(feature_range=(-1, 1)), _digit_classifier())
    with pytest.warns(FutureWarning, match="epochs"):
        pipe.fit(X, y, denseassociativememory__epochs=2)
    assert pipe[-1].loss_curve_.shape == (2,)
