"""What a student meets doing coursework with damlite (2026-11-26, commit 097fe75): frozen training warns,
recall and classification are both first-class, validation names the mistake, metrics, repr, docs and packaging."""
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import damlite
from damlite import ConvergenceWarning, DenseAssociativeMemory, NotFittedError
from damlite.metrics import accuracy, confusion_matrix, macro_f1

ROOT = Path(__file__).resolve().parents[1]


def _patterns(seed=0, B=20, N=100):
    return np.random.default_rng(seed).choice([-1.0, 1.0], (B, N))


def _flip(patterns, fraction, seed=1):
    return np.where(np.random.default_rng(seed).random(patterns.shape) < fraction, -patterns, patterns)


def _digits(n=300):
    d = damlite.load_mnist(source="bundled", dtype="float64")
    return d.X_train[:n], d.y_train[:n], d.X_test, d.y_test


# ------------------------------------------------------------------ frozen training warns
def test_original_network_at_the_normalized_scale_warns():
    """The reported case: original network at T = 0.5, loss 1048 -> 1048."""
    dam = DenseAssociativeMemory(variant="original", temperature=0.5, epochs=5, backend="numpy", random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"loss never moved.*T = N T'.*temperature=None"):
        dam.fit(_patterns())
    assert np.ptp(dam.loss_curve_) == 0


def test_original_classifier_at_the_normalized_scale_warns():
    """The reported MNIST case: original network at T = 0.5, loss frozen and test accuracy at chance."""
    X, y, Xt, yt = _digits()
    clf = DenseAssociativeMemory(20, interaction="rectified_polynomial", n=20, error_exponent=30, variant="original",
                                 temperature=0.5, epochs=3, batch_size=100, backend="numpy", random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"loss never moved.*T = N T'"):
        clf.fit(X, y)
    assert np.ptp(clf.loss_curve_) == 0


def test_normalized_network_at_huge_n_warns():
    """The reported case: normalized n = 300, loss 1000 -> 1000, stored patterns not even fixed points."""
    P = _patterns()
    dam = DenseAssociativeMemory(n=300, epochs=5, backend="numpy", random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"loss never moved.*n=300.*Lower the temperature, set_params\(temperature=[\d.]+\) \(from T' = 0.5\), or n"):
        dam.fit(P)
    assert dam.score(P) < 0.95  # relaxing the stored patterns themselves loses bits


def test_training_that_converges_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        DenseAssociativeMemory(n=10, backend="numpy", random_state=0).fit(_patterns())
        DenseAssociativeMemory(n=10, variant="original", backend="numpy", random_state=0).fit(_patterns())


def test_convergence_warning_is_scikit_learns_where_installed():
    sklearn = pytest.importorskip("sklearn.exceptions")
    assert ConvergenceWarning is sklearn.ConvergenceWarning


# ------------------------------------------------------------------ recall and classification
def test_memory_fitted_without_labels_has_recall_and_score():
    P = _patterns()
    dam = DenseAssociativeMemory(40, n=10, epochs=100, backend="numpy", random_state=0).fit(P)
    assert dam.score(P) == 1.0 and dam.score(P, per="pattern") == 1.0  # stored patterns are fixed points
    probes = _flip(P, 0.15)
    recalled = dam.recall(probes)
    assert isinstance(recalled, np.ndarray) and recalled.shape == P.shape
    bits = dam.score(probes, P)
    assert bits == np.mean(recalled == P) and bits > np.mean(probes == P)
    assert dam.score(probes, P, per="pattern") == np.mean(np.all(recalled == P, axis=1))
    with pytest.raises(ValueError, match="patterns to recall"):
        dam.score(probes, np.zeros(20))  # labels given to a memory


def test_each_model_says_which_it_is():
    P = _patterns(B=6, N=16)
    memory = DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0).fit(P)
    with pytest.raises(ValueError, match=r"needs a classifier.*is an associative memory.*recall\(X\)"):
        memory.predict(P)
    with pytest.raises(ValueError, match="is an associative memory"):
        memory.decision_function(P)
    X = np.random.default_rng(0).uniform(-1, 1, (6, 5))
    clf = DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0).fit(X, [0, 1, 2] * 2)
    with pytest.raises(ValueError, match=r"is a classifier.*predict\(X\)"):
        clf.recall(X)
    with pytest.raises(ValueError, match=r"is a classifier.*score\(X, y\) needs the labels"):
        clf.score(X)
    assert 0.0 <= clf.score(X, [0, 1, 2] * 2) <= 1.0
    for method in ("predict", "recall", "score"):
        with pytest.raises(NotFittedError, match=r"fit\(X, y\).*fit\(X\)"):
            getattr(DenseAssociativeMemory(backend="numpy"), method)(P)


def test_not_fitted_error_is_top_level():
    assert damlite.NotFittedError is damlite.model.NotFittedError
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


# ------------------------------------------------------------------ metrics on plain arrays
def test_macro_f1_on_plain_arrays():
    y_true = np.array([0, 0, 1, 1, 2, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 2, 0, 2])
    f1 = [2 * 1 / (2 + 1 + 1), 2 * 2 / (4 + 1 + 0), 2 * 2 / (4 + 0 + 1)]  # 2TP / (2TP + FP + FN) per class
    assert macro_f1(y_true, y_pred) == pytest.approx(np.mean(f1))
    assert macro_f1(list(y_true), list(y_pred)) == macro_f1(y_true, y_pred)
    assert accuracy(y_true, y_pred) == pytest.approx(5 / 7)
    np.testing.assert_array_equal(confusion_matrix(y_true, y_pred), [[1, 1, 0], [0, 2, 0], [1, 0, 2]])
    names = np.array(["zero", "one", "two"])
    assert macro_f1(names[y_true], names[y_pred]) == pytest.approx(np.mean(f1))
    with pytest.raises(ValueError, match="same length"):
        macro_f1([0, 1], [0])


def test_macro_f1_matches_scikit_learn():
    f1_score = pytest.importorskip("sklearn.metrics").f1_score
    rng = np.random.default_rng(0)
    y_true, y_pred = rng.integers(0, 10, 500), rng.integers(0, 9, 500)  # class 9 never predicted
    assert macro_f1(y_true, y_pred) == pytest.approx(f1_score(y_true, y_pred, average="macro", zero_division=0))


def test_macro_f1_of_a_trained_classifier():
    X, y, Xt, yt = _digits(500)
    clf = DenseAssociativeMemory(20, interaction="rectified_polynomial", n=20, error_exponent=30, epochs=10,
                                 batch_size=100, momentum=0.6, backend="numpy", random_state=0).fit(X, y)
    pred = clf.predict(Xt)
    assert 0.3 < macro_f1(yt, pred) <= accuracy(yt, pred) + 0.1


# ------------------------------------------------------------------ validation names the mistake
def test_one_dimensional_X_is_refused_with_the_reshape_hint():
    with pytest.raises(ValueError, match=r"1-D.*reshape\(1, -1\)"):
        DenseAssociativeMemory(backend="numpy").fit(_patterns()[0])
    dam = DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0).fit(_patterns(B=4, N=16))
    with pytest.raises(ValueError, match=r"reshape\(1, -1\)"):
        dam.recall(_patterns(B=1, N=16)[0])


def test_image_stacks_are_named():
    X, y, _, _ = _digits(50)
    images = X.reshape(-1, 28, 28)
    with pytest.raises(ValueError, match=r"stack of 28 x 28 images.*reshape\(len\(X\), -1\).*784"):
        DenseAssociativeMemory(backend="numpy").fit(images, y)
    clf = DenseAssociativeMemory(10, n=3, epochs=1, backend="numpy", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"stack of 28 x 28 images"):
        clf.predict(images)


def test_one_hot_labels_are_named():
    X, y, _, _ = _digits(50)
    one_hot = np.eye(10)[y]
    with pytest.raises(ValueError, match=r"one-hot.*argmax\(axis=1\)"):
        DenseAssociativeMemory(backend="numpy").fit(X, one_hot)
    with pytest.raises(ValueError, match="one-hot"):
        DenseAssociativeMemory(backend="numpy").fit(X, 2 * one_hot - 1)  # bipolar one-hot too


# ------------------------------------------------------------------ repr, docstrings, progress
def test_repr_shows_the_parameters_that_differ_from_the_defaults():
    assert repr(DenseAssociativeMemory()) == "DenseAssociativeMemory()"
    text = repr(DenseAssociativeMemory(40, n=3, variant="original", error_exponent=2, init="normal",
                                       random_state=7, epochs=20))
    for part in ("n_memories=40", "n=3", "variant='original'", "error_exponent=2", "init='normal'",
                 "random_state=7", "epochs=20"):
        assert part in text, text
    assert "temperature" not in text and "backend" not in text


def _documented_defaults(doc):
    """{name: default text} from numpydoc lines ``name : type, default X``."""
    out = {}
    for line in doc.splitlines():
        m = re.match(r"\s{4}(\w+(?:, \w+)*) : .*, default (.+)$", line)
        if m:
            for name in m.group(1).split(", "):
                out[name] = m.group(2).strip()
    return out


def test_class_docstring_documents_every_parameter_with_its_default():
    doc = DenseAssociativeMemory.__doc__
    documented = _documented_defaults(doc)
    params = {k: p.default for k, p in inspect.signature(DenseAssociativeMemory).parameters.items()}
    assert set(params) == set(documented), set(params) ^ set(documented)
    for name, default in params.items():
        text = documented[name]
        if name == "memory_budget":
            assert text.startswith("DEFAULT_MEMORY_BUDGET")
        else:
            assert text == repr(default).replace("'", '"'), (name, text, default)
    assert "T = N T'" in doc and "loss_curve_" in doc and "summed over" in doc


def test_progress_bar_stays_when_training_ends(capsys):
    DenseAssociativeMemory(8, n=3, epochs=3, backend="numpy", random_state=0).fit(_patterns(B=4, N=16),
                                                                                 progress=True)
    last = capsys.readouterr().err.split("\r")[-1]
    assert "training" in last and "3/3" in last, repr(last)


# ------------------------------------------------------------------ packaging and citing
def test_backend_line_names_the_damlite_version():
    assert str(damlite.backend_info("numpy")).startswith(f"damlite {damlite.__version__}, backend: numpy")


def test_build_directory_is_ignored():
    lines = (ROOT / ".gitignore").read_text().splitlines()
    assert "build/" in lines or "/build/" in lines


def test_citation_file_matches_the_package():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"].startswith("1.2")
    assert str(cff["version"]) == damlite.__version__
    assert cff["title"] and cff["authors"] and cff["message"]
    refs = cff.get("references") or [cff.get("preferred-citation")]
    assert any("Dense Associative Memory" in r.get("title", "") for r in refs if r)


def test_scikit_learn_is_a_dev_extra_only():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("scikit-learn") for d in project["dependencies"])
    assert any(d.startswith("scikit-learn") for d in project["optional-dependencies"]["dev"])


def test_long_repr_wraps_at_the_column():
    dam = DenseAssociativeMemory(16, interaction="rectified_polynomial", n=20, error_exponent=30, temperature=1.0,
                                 init="normal", init_mean=-0.3, init_std=0.3, epochs=15, lr_decay=0.998,
                                 momentum=0.6, batch_size=100, random_state=0)
    text = repr(dam)
    assert max(len(line) for line in text.splitlines()) <= 88 and text.count("\n") >= 2
    assert eval(text, {"DenseAssociativeMemory": DenseAssociativeMemory}).get_params() == dam.get_params()


# ------------------------------------------------------------------ the API reference covers every public name
def _public_modules():
    import pkgutil

    names = ["damlite"] + [m.name for m in pkgutil.walk_packages(damlite.__path__, "damlite.")]
    return [n for n in names if not any(part.startswith("_") for part in n.split("."))]


def test_api_reference_documents_every_public_module_and_name():
    text = (ROOT / "book" / "api.md").read_text()
    modules = set(re.findall(r"\.\. automodule:: ([\w.]+)", text))
    top = set(re.findall(r"\.\. auto(?:class|function|exception):: (\w+)", text))
    summary = text.split(".. autosummary::", 1)[1].split(".. autoclass::", 1)[0].split()
    for name in damlite.__all__:
        if name != "__version__":
            assert name in top or any(s.endswith("." + name) for s in summary), name
    for module in _public_modules():
        if module in ("damlite", "damlite.model"):  # the top level, documented name by name above
            continue
        assert module in modules, f"{module} is missing from book/api.md"
    import damlite.model as model

    assert set(model.__all__) <= top  # every public name of the estimator's module, at the top level


def test_quickstart_is_in_the_book():
    toc = (ROOT / "_toc.yml").read_text()
    assert "book/quickstart" in toc and "book/api" in toc
    import nbformat

    nb = nbformat.read(ROOT / "book" / "quickstart.ipynb", as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for recipe in (".recall(", "load_mnist", "macro_f1", "plot_memories", "pickle", "backend_info",
                   "GridSearchCV", "damlite sweep"):
        assert recipe in code, recipe


@pytest.mark.slow  # whole computations (tens of seconds on 2 cores): the full suite runs it
def test_damlite_works_without_scikit_learn():
    """scikit-learn is optional at run time: block its import and use the estimator."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['sklearn'] = None\n"
            "import numpy as np, pickle, warnings, damlite\n"
            "assert not damlite.model.HAVE_SKLEARN\n"
            "P = np.random.default_rng(0).choice([-1.0, 1.0], (6, 16))\n"
            "dam = damlite.DenseAssociativeMemory(8, n=3, epochs=5, backend='numpy', random_state=0).fit(P)\n"
            "assert dam.score(P) > 0.5 and 'n_memories=8' in repr(dam)\n"
            "assert pickle.loads(pickle.dumps(dam)).score(P) == dam.score(P)\n"
            "assert issubclass(damlite.NotFittedError, (ValueError, AttributeError))\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    damlite.DenseAssociativeMemory(n=300, epochs=2, backend='numpy').fit(P)\n"
            "assert any(issubclass(x.category, damlite.ConvergenceWarning) for x in w)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**__import__("os").environ, "DAMLITE_QUIET": "1"})
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_one_name_one_signature_across_the_metrics():
    """damlite.metrics scores label arrays; damlite.classification's batched scores take confusion matrices
    under other names (the old name warns for one release)."""
    import damlite.classification as classification
    import damlite.metrics as metrics

    shared = set(metrics.__all__) & set(classification.__all__)
    for name in shared:
        assert inspect.signature(getattr(metrics, name)) == inspect.signature(getattr(classification, name)), name
    assert "macro_f1" not in classification.__all__
    cm = classification.confusion_matrices([0, 1, 1], [0, 1, 0], 2)
    with pytest.warns(FutureWarning, match="macro_f1_from_confusion"):
        old = classification.macro_f1
    assert old(cm) == classification.macro_f1_from_confusion(cm) == macro_f1([0, 1, 1], [0, 1, 0])


def test_recall_promises_only_bipolar_probes():
    doc = DenseAssociativeMemory.recall.__doc__
    assert "partial patterns)" not in doc and "random" in doc
    P = _patterns(B=4, N=16)
    dam = DenseAssociativeMemory(8, n=3, epochs=30, backend="numpy", random_state=0).fit(P)
    partial = P.copy()
    partial[:, :4] = 0
    with pytest.raises(ValueError, match=r"0 is not a state.*rng.choice\(\[-1.0, 1.0\]"):
        dam.recall(partial)
