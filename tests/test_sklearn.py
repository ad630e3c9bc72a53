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


# ------------------------------------------------------------------ the letter of scikit-learn's contract
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_the_docs_say_which_form_passes_check_estimator_and_how_to_get_probabilities():
    import nbformat

    api = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    quickstart = "\n".join(c.source for c in nbformat.read(ROOT / "book" / "quickstart.ipynb", as_version=4).cells)
    for text in (api, quickstart):
        assert "check_estimator" in text and "MinMaxScaler(feature_range=(-1, 1)" in text
        assert "CalibratedClassifierCV" in text and "predict_proba" in text
    extra = [line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("sklearn =")]
    assert extra and ("check_estimator" not in extra[0] or "MinMaxScaler" in extra[0]), extra


def test_no_predict_proba_but_calibration_gives_probabilities():
    """The class outputs are not probabilities; CalibratedClassifierCV on held-out rows makes them."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator

    X, y = _mnist(900)
    clf = _digit_classifier().fit(X[:600], y[:600])
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "predict_log_proba")
    calibrated = CalibratedClassifierCV(FrozenEstimator(clf)).fit(X[600:800], y[600:800])
    proba = calibrated.predict_proba(X[800:])
    assert proba.shape == (100, 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(calibrated.classes_, clf.classes_)
    assert np.mean(calibrated.classes_[np.argmax(proba, axis=1)] == y[800:]) > 0.5


def test_mixed_label_types_raise_as_in_scikit_learn():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (12, 4))
    clf = DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0)
    with pytest.warns(damlite.ConvergenceWarning):
        clf.fit(X, np.array(["cat", "dog", "emu"] * 4))
    with pytest.raises(ValueError, match="Mix of label input types"):
        clf.score(X, np.array([0, 1, 2] * 4))
    with pytest.raises(ValueError, match="Mix of label input types"):
        DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy").fit(X, np.array(["a", 1] * 6, dtype=object))


@pytest.mark.parametrize("spelling, name", [
    (np.float32, "float32"), ("float32", "float32"), (np.dtype("float32"), "float32"), ("f4", "float32"),
    ("single", "float32"), (np.float64, "float64"), ("double", "float64"), (np.dtype("<f8"), "float64"),
    (np.float16, "float16"), ("auto", "float64")])
def test_every_numpy_dtype_spelling_is_accepted(spelling, name):
    P = np.random.default_rng(0).choice([-1.0, 1.0], (4, 16))
    dam = DenseAssociativeMemory(8, n=3, epochs=1, dtype=spelling, backend="numpy", random_state=0)
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", damlite.ConvergenceWarning)
        dam.fit(P)
    assert dam.memories_.dtype == np.dtype(name)
    assert dam.get_params()["dtype"] is spelling  # kept as given (clone)


@pytest.mark.parametrize("spelling", [np.int32, "int8", "float128" if hasattr(np, "float128") else "c16", None, "fp32"])
def test_other_dtypes_are_refused_naming_the_argument(spelling):
    with pytest.raises(ValueError, match=r"dtype must be 'auto', 'float16', 'float32' or 'float64'"):
        DenseAssociativeMemory(8, n=3, epochs=1, dtype=spelling, backend="numpy").fit(np.ones((2, 4)))
