"""The training monitor: a fit that fails says so, in one line naming the cause and the call that fixes it.

Each failure below is one a student met (loss rising, a network that dies, a classifier that answers one
class, training stopped mid-descent, patterns beyond what the network stores, inputs in [0, 1]); each
test fails without the monitor. The working recipes of the README and the Quickstart stay silent, run
with warnings as errors.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import damlite
from damlite import ConvergenceWarning, DenseAssociativeMemory, InputRangeWarning

ROOT = Path(__file__).resolve().parents[1]


def _patterns(seed=0, B=20, N=100):
    return np.random.default_rng(seed).choice([-1.0, 1.0], (B, N))


@pytest.fixture(scope="module")
def digits():
    d = damlite.load_mnist(source="bundled", dtype="float64")
    return d.X_train[:1000], d.y_train[:1000]


def _digit_classifier(**kw):
    """The Quickstart's grid-search classifier."""
    return DenseAssociativeMemory(**{"n_memories": 20, "interaction": "rectified_polynomial", "error_exponent": 30,
                                     "epochs": 10, "batch_size": 100, "momentum": 0.6, "backend": "numpy",
                                     "random_state": 0, **kw})


def _convergence_messages(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def _one(messages):
    assert len(messages) == 1, messages
    assert "\n" not in messages[0]
    return messages[0]


# ------------------------------------------------------------------ a loss that rises
@pytest.mark.parametrize("n", [2, 3])
def test_rising_loss_warns_with_the_temperature_scale(n):
    """The original network given the normalized network's temperature (T = 0.5): the loss rises."""
    dam = DenseAssociativeMemory(variant="original", n=n, temperature=0.5, backend="numpy", random_state=0)
    message = _one(_convergence_messages(lambda: dam.fit(_patterns())))
    assert dam.loss_curve_[-1] > dam.loss_curve_[0]
    assert re.search(r"loss rose from [\d.e+]+ to [\d.e+]+", message), message
    assert "T = N T'" in message and "temperature=None" in message


# ------------------------------------------------------------------ a network that dies
def test_dead_network_warns(digits):
    """The Quickstart's grid cell n = 20, T = 0.2: the loss jumps, then every class output is 0."""
    X, y = digits
    clf = _digit_classifier(n=20, temperature=0.2, epochs=30)
    message = _one(_convergence_messages(lambda: clf.fit(X, y)))
    tail = clf.loss_curve_[-10:]
    assert np.ptp(tail) == 0  # flat at the end
    assert "died" in message and "vanished" in message, message
    assert "learning_rate=" in message and "temperature=" in message


def test_dead_advice_works(digits):
    """The call the dead network's warning suggests makes it learn."""
    X, y = digits
    clf = _digit_classifier(n=20, temperature=0.2, epochs=30)
    message = _one(_convergence_messages(lambda: clf.fit(X, y)))
    lr = float(re.search(r"set_params\(learning_rate=([\d.e-]+)\)", message).group(1))
    fixed = _digit_classifier(n=20, temperature=0.2, epochs=30, learning_rate=lr)
    left = _convergence_messages(lambda: fixed.fit(X, y))
    assert all(m.startswith("the loss was still falling") for m in left), left  # alive, and still learning
    assert fixed.score(X, y) > 0.6


# ------------------------------------------------------------------ one class for everything
def test_one_class_for_everything_warns_and_asks_for_epochs(digits):
    """Defaults with epochs cut to 10: the loss is still falling and nearly every digit gets one label."""
    X, y = digits
    clf = DenseAssociativeMemory(epochs=10, backend="numpy", random_state=0)
    message = _one(_convergence_messages(lambda: clf.fit(X, y)))
    share = np.max(np.bincount(clf.predict(X))) / len(X)
    assert share > 0.9
    assert re.search(r"predicts class \d+ for \d+% of", message), message
    assert "still falling" in message and "epochs=" in message


def test_one_class_is_not_flagged_where_the_data_are_one_class():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 6))
    y = np.array([0] * 38 + [1] * 2)
    clf = DenseAssociativeMemory(8, n=3, epochs=20, backend="numpy", random_state=0)
    messages = _convergence_messages(lambda: clf.fit(X, y))
    assert not any("predicts class" in m for m in messages), messages


# ------------------------------------------------------------------ stopped mid-descent
def test_loss_still_falling_steeply_asks_for_more_epochs():
    """Stored patterns, 4 epochs: the loss falls faster at the last epoch than ever before."""
    dam = DenseAssociativeMemory(n=10, epochs=4, backend="numpy", random_state=0)
    message = _one(_convergence_messages(lambda: dam.fit(_patterns())))
    drops = -np.diff(dam.loss_curve_)
    assert drops[-1] == drops.max() > 0
    assert "still falling" in message and "set_params(epochs=" in message, message


def test_a_warm_start_chunk_is_not_asked_for_more_epochs():
    dam = DenseAssociativeMemory(n=10, epochs=30, backend="numpy", random_state=0).fit(_patterns())
    dam.set_params(epochs=2, warm_start=True)
    messages = _convergence_messages(lambda: dam.fit(_patterns()))
    assert not any("still falling" in m for m in messages), messages


# ------------------------------------------------------------------ beyond capacity
def test_patterns_that_are_not_fixed_points_warn_with_the_numbers():
    """30 patterns in N = 100 at n = 2: stored bits are not fixed points, and capacity is named."""
    P = _patterns(B=30)
    dam = DenseAssociativeMemory(n=2, backend="numpy", random_state=0)
    message = _one(_convergence_messages(lambda: dam.fit(P)))
    delta = damlite.to_numpy(dam.energy_difference(P))
    unstable = np.mean(np.where(delta >= 0, 1.0, -1.0) != P)
    assert unstable > 0.01
    assert f"{unstable:.1%}" in message.replace(" %", "%"), message
    assert "30 patterns" in message and "N = 100" in message and "n = 2" in message
    assert "capacity" in message and "set_params(n=3)" in message


def test_fixed_point_check_is_bounded(monkeypatch):
    """The check after fitting a memory is one energy-difference pass over at most a few hundred patterns."""
    from damlite import _monitor

    rows = []
    real = _monitor.energy_difference

    def counting(memories, states, *args, **kwargs):
        rows.append(states.shape[0])
        return real(memories, states, *args, **kwargs)

    monkeypatch.setattr(_monitor, "energy_difference", counting)
    P = _patterns(B=1500, N=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        DenseAssociativeMemory(8, n=3, epochs=2, backend="numpy", random_state=0).fit(P)
    assert rows and max(rows) <= _monitor.MAX_ROWS < 1500


# ------------------------------------------------------------------ inputs in [0, 1]
def test_inputs_in_zero_one_warn_once_with_the_fix(digits):
    X, y = digits
    clf = _digit_classifier(n=20, temperature=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit((X + 1) / 2, y)
    hints = [str(w.message) for w in caught if issubclass(w.category, InputRangeWarning)]
    assert len(hints) == 1, hints
    assert "[0, 1]" in hints[0] and "2 * X - 1" in hints[0] and "MinMaxScaler(feature_range=(-1, 1))" in hints[0]
    advice = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert advice and all("X lies in [0, 1]" in m for m in advice), advice


def test_symmetric_inputs_give_no_range_hint(digits):
    X, y = digits
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputRangeWarning)
        _digit_classifier(n=3, temperature=0.5, epochs=2).fit(X[:200], y[:200])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_input_range_is_the_checked_arrays_clipped_range(dtype):
    """check_states(return_range=True): the least and greatest entries of the array it returns, also where a
    rescaling's rounding (1 + 2e-16, -1 - 2e-16) was clipped to [-1, 1]: the one pass the classifier's range
    advice reads (damlite._fitting.learning_problem)."""
    from damlite.validation import check_states  # noqa: PLC0415

    rng = np.random.default_rng(2)
    for low, high in ((-0.5, 0.75), (-1 - 2e-16, 1 + 2e-16), (0.0, 1.0)):
        X = rng.uniform(low, high, (50, 7))
        X[0, 0], X[-1, -1] = low, high
        arr, (lo, hi) = check_states(X, np, dtype, None, "X", bipolar=False, return_range=True)
        assert (lo, hi) == (float(np.min(arr)), float(np.max(arr)))
        assert -1.0 <= lo <= hi <= 1.0


# ------------------------------------------------------------------ the working recipes are silent
def _readme_blocks():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## damlite in ten lines", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def _quickstart_cells():
    import nbformat

    nb = nbformat.read(ROOT / "book" / "quickstart.ipynb", as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        if any(line.lstrip().startswith(("!", "%")) for line in lines):  # the install cell, the shell recipes
            continue
        cells.append(cell.source)
    return cells


@pytest.mark.slow
def test_readme_and_quickstart_recipes_are_warning_free(monkeypatch, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT / "book")
    blocks = _readme_blocks()
    cells = _quickstart_cells()
    assert len(blocks) == 2 and len(cells) >= 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() under Agg
        readme = {"__name__": "readme"}
        for source in blocks:  # the second block goes on from the first
            exec(compile(source, "README.md", "exec"), readme)
        namespace = {"__name__": "quickstart"}
        for source in cells:
            exec(compile(source, "quickstart.ipynb", "exec"), namespace)


def test_the_api_page_states_the_monitors_thresholds():
    from damlite import _monitor

    text = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    table = text.split("### What a fit checks", 1)[1].split("###", 1)[0]
    for share in (_monitor.DEAD_SHARE, _monitor.ONE_CLASS_SHARE, _monitor.UNSTABLE_BITS, _monitor.FALLING,
                  _monitor.STILL_FALLING):
        assert f"at least {share:.0%}".replace("%", " %") in table, share
    assert f"at most {_monitor.MAX_ROWS} training rows" in table
