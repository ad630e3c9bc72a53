"""Results never lost, estimators that behave like scikit-learn's, clear errors (2026-11-26, commit 8662b26).

Each test here failed before the fix it names (the "must fix" items first).
"""
from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from procs import child_pids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import damlite
from damlite import DenseAssociativeMemory, NumericalUnderflowWarning
from damlite.sweeps import experiments as ex
from damlite.model import NotFittedError

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "DAMLITE_BACKEND": "numpy", "DAMLITE_QUIET": "1"}


def _patterns(seed=0, B=5, N=16):
    return np.where(np.random.default_rng(seed).random((B, N)) < 0.5, -1.0, 1.0)


def _dam(**kw):
    return DenseAssociativeMemory(**{"n_memories": 8, "interaction": "polynomial", "n": 3, "temperature": 0.5,
                                     "error_exponent": 1, "init": "normal",
                                     "backend": "numpy", "random_state": 0, **kw})


# ------------------------------------------------- 1. readers never modify a file
def _toy_line(name, payload="x"):
    """A complete result line of task "t", one network, told apart by its setting ``name``."""
    block = ex.Block("t", "normalized", 1, "g", (1.0,), (0.1,), 1, settings=(("name", name),))
    rec = {**block.identity(), "repeat": 0, "inv_temperature": 1.0, "learning_rate": 0.1, "v": payload}
    return {"key": block.key, "block": block.to_json(), "provenance": {"seconds": 0.0}, "records": [rec]}


def _names(lines):
    return [line["records"][0]["name"] for line in lines]


def _write_lines(path, lines, tail=b""):
    path.write_bytes(b"".join(json.dumps(o).encode() + b"\n" for o in lines) + tail)


def test_reader_keeps_a_complete_last_record_without_its_newline_and_changes_nothing(tmp_path):
    path = tmp_path / "t-p.jsonl"
    _write_lines(path, [_toy_line("a")], tail=json.dumps(_toy_line("b")).encode())
    before = path.read_bytes()
    assert _names(ex.read_results(path)) == ["a", "b"]
    assert [r["name"] for r in ex.load_records(path)] == ["a", "b"]
    assert path.read_bytes() == before


def test_reader_ignores_a_torn_tail_without_truncating_it(tmp_path):
    path = tmp_path / "t-p.jsonl"
    _write_lines(path, [_toy_line("a")], tail=b'{"key": "b", "recor')
    before = path.read_bytes()
    assert _names(ex.read_results(path)) == ["a"]
    out = subprocess.run([sys.executable, "-m", "damlite", "summarize", str(path)], env=ENV, cwd=ROOT,
                         capture_output=True, text=True)
    assert path.read_bytes() == before, "a read command modified the result file"
    assert out.returncode != 0  # toy records have no grid: an error, in one line
    assert len(out.stderr.strip().splitlines()) == 1


def test_garbage_lines_warn_with_their_line_number(tmp_path):
    path = tmp_path / "t-p.jsonl"
    path.write_bytes(json.dumps(_toy_line("a")).encode() + b"\nnot json\n[1, 2]\n"
                     + json.dumps(_toy_line("b")).encode() + b"\n")
    with pytest.warns(UserWarning, match=r"t-p.jsonl:[23]:") as rec:
        keys = _names(ex.read_results(path))
    assert keys == ["a", "b"] and sorted(str(w.message).split(":")[1] for w in rec) == ["2", "3"]


def test_concurrent_reader_never_loses_a_line_being_written(tmp_path):
    """A writer appends big lines while readers read: no reader changes the file, every line survives."""
    path = tmp_path / "t-p.jsonl"
    big = "y" * 200_000
    n_lines = 40
    stop = threading.Event()
    seen = [[], []]

    def reader(mine):
        while not stop.is_set():
            mine.append(len(ex.read_results(path, warn=False)))

    threads = [threading.Thread(target=reader, args=(mine,)) for mine in seen]
    for t in threads:
        t.start()
    try:
        for i in range(n_lines):
            ex._append_line(path, _toy_line(f"k{i}", big))
    finally:
        stop.set()
        for t in threads:
            t.join()
    lines = ex.read_results(path)
    assert _names(lines) == [f"k{i}" for i in range(n_lines)]
    assert all(mine == sorted(mine) for mine in seen)  # each reader saw a growing file, never a shrinking one
    assert sum(map(len, seen)) > 0


# --------------------------------------------------------------- 2. writers lock
def test_two_sweeps_on_one_file_compute_each_block_once(tmp_path):
    cmd = [sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out", str(tmp_path),
           "--backend", "numpy", "--no-progress"]
    procs = [subprocess.Popen(cmd, env=ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    path = ex.results_path(tmp_path, "autoassociative", "smoke")
    keys = [line["key"] for line in ex.read_results(path)]
    blocks = ex.profile_blocks("autoassociative", "smoke")
    assert sorted(keys) == sorted(b.key for b in blocks), "a block was computed twice or lost"
    said = "".join(o + e for o, e in outs)
    assert "waiting" in said or len(set(keys)) == len(keys)


def test_the_writer_repairs_a_torn_tail_under_its_lock(tmp_path):
    blocks = ex.profile_blocks("autoassociative", "smoke")[:2]
    path = ex.run_sweep("autoassociative", "smoke", blocks=blocks[:1], out_dir=tmp_path, backend="numpy",
                        progress=False)
    with open(path, "ab") as fh:
        fh.write(b'{"key": "cut sho')
    said = []
    ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False,
                 say=said.append)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["key"] for line in lines)
    assert any("cut short" in s for s in said)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kills=st.lists(st.floats(0.05, 1.5), min_size=1, max_size=3))
def test_random_kills_resumes_and_readers_never_lose_or_duplicate_a_block(tmp_path_factory, kills):
    out = tmp_path_factory.mktemp("kills")
    path = ex.results_path(out, "autoassociative", "smoke")
    cmd = [sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out", str(out),
           "--backend", "numpy", "--no-progress"]
    finished = []
    for delay in kills:
        proc = subprocess.Popen(cmd, env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + delay
        while time.time() < deadline and proc.poll() is None:
            finished.append(len(ex.read_results(path, warn=False)))  # a concurrent reader
            time.sleep(0.01)
        proc.kill()
        proc.wait()
    subprocess.run(cmd, env=ENV, cwd=ROOT, check=True, capture_output=True, timeout=300)
    keys = [line["key"] for line in ex.read_results(path)]
    want = [b.key for b in ex.profile_blocks("autoassociative", "smoke")]
    assert sorted(keys) == sorted(want) and len(keys) == len(set(keys))
    assert finished == sorted(finished)


# ------------------------------------------------------- 3. neurons as indices
def test_fit_neurons_accepts_an_index_array():
    X = _patterns()
    idx = [0, 3, 7]
    a = _dam(epochs=3, neurons=idx).fit(X)
    # the same training, as a reference: only the chosen neurons' predictions in the loss
    from damlite.network import loss_and_gradient  # noqa: PLC0415

    F = a.interaction_
    mem = np.clip(np.random.default_rng(0).normal(0.0, 0.1, (8, 16)), -1, 1)
    b_in = 1 / (16 * 0.5)
    loss_idx = loss_and_gradient(mem[None], X, X[:, idx], F, b_in, 1.0, neurons=np.array(idx))[0]
    loss_all = loss_and_gradient(mem[None], X, X, F, b_in, 1.0)[0]
    assert 0 < float(loss_idx[0]) < float(loss_all[0])
    assert a.loss_curve_[0] == pytest.approx(float(loss_idx[0]), rel=1e-12)


def test_index_array_gradient_matches_slices_column_by_column():
    from damlite.network import loss_and_gradient  # noqa: PLC0415

    X = _patterns(1)
    F = damlite.make_interaction("polynomial", 3)
    mem = np.random.default_rng(2).uniform(-1, 1, (2, 8, 16))
    _, g_idx, _ = loss_and_gradient(mem, X, X[:, [2, 9]], F, 0.1, 1.0, neurons=np.array([2, 9]))
    _, g2, _ = loss_and_gradient(mem, X, X[:, 2:3], F, 0.1, 1.0, neurons=slice(2, 3))
    _, g9, _ = loss_and_gradient(mem, X, X[:, 9:10], F, 0.1, 1.0, neurons=slice(9, 10))
    np.testing.assert_allclose(g_idx, g2 + g9, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("neurons, match", [
    ((5, 5), "distinct"), ([], "no neuron"), ([0, 99], "index"), ([1.5], "integer"), (slice(3, 3), "no neuron"),
    ([[0, 1]], "1-D"),
])
def test_bad_neurons_name_the_argument(neurons, match):
    with pytest.raises(ValueError, match=match):
        _dam(epochs=1, neurons=neurons).fit(_patterns())


# ---------------------------------------------------- 4. pickle, deepcopy, clone
def test_fitted_estimator_pickles_deepcopies_and_clones():
    X = _patterns()
    dam = _dam(epochs=5).fit(X)
    for twin in (pickle.loads(pickle.dumps(dam)), copy.deepcopy(dam)):
        np.testing.assert_array_equal(damlite.to_numpy(twin.memories_), damlite.to_numpy(dam.memories_))
        np.testing.assert_array_equal(twin.loss_curve_, dam.loss_curve_)
        np.testing.assert_array_equal(damlite.to_numpy(twin.relax(X, random_state=1).states),
                                      damlite.to_numpy(dam.relax(X, random_state=1).states))
    params = dam.get_params()
    assert params["n_memories"] == 8 and params["interaction"] == "polynomial"
    fresh = DenseAssociativeMemory(**params)
    assert fresh.get_params() == params and not hasattr(fresh, "_memories")
    with pytest.raises(ValueError, match="invalid parameter"):
        dam.set_params(temprature=1.0)


def test_joblib_style_worker_round_trip():
    import concurrent.futures as cf  # noqa: PLC0415

    dam = _dam(epochs=3).fit(_patterns())
    with cf.ProcessPoolExecutor(1) as pool:
        loss = pool.submit(_loss_in_worker, dam, _patterns()).result()
    assert loss == pytest.approx(dam.loss(_patterns()), rel=1e-12)


def _loss_in_worker(dam, X):
    return dam.loss(X)


# ------------------------------------------------------------ 5. underflow
def test_fit_warns_when_the_learning_signal_underflows():
    X = _patterns(0, B=4, N=100)
    dam = DenseAssociativeMemory(8, interaction="polynomial", n=400, temperature=1.0, backend="numpy", random_state=0)
    with pytest.warns(NumericalUnderflowWarning, match="learning"), \
            pytest.warns(damlite.ConvergenceWarning, match="loss never moved"):  # and it says training froze
        dam.set_params(epochs=2).fit(X)


def test_relax_warns_when_sign0_decides_by_underflow():
    X = _patterns(0, B=4, N=100)
    dam = DenseAssociativeMemory(8, interaction="polynomial", n=400, temperature=1.0, backend="numpy", random_state=0)
    dam.memories_ = np.random.default_rng(0).normal(0, 0.1, (8, 100))
    with pytest.warns(NumericalUnderflowWarning, match="sign"):
        dam.relax(X)


def test_no_underflow_warning_on_a_healthy_network():
    X = _patterns()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalUnderflowWarning)
        _dam(epochs=5).fit(X).relax(X)


# ---------------------------------------------------------------- 6. float16
def test_float16_zero_step_is_not_a_false_overflow():
    X = _patterns()
    dam = _dam(dtype="float16", interaction="rectified_polynomial", n=2)
    mem = np.random.default_rng(0).normal(0, 0.1, (8, 16))
    mem[0] = 0.0  # a memory with exactly zero gradient: max|v| = 0 < the step floor
    dam.memories_ = mem
    dam.set_params(epochs=2, warm_start=True).fit(X)
    assert np.all(np.isfinite(damlite.to_numpy(dam.memories_)))


# -------------------------------------------------------------- 7. summarize
def test_summarize_a_missing_file_fails_in_one_line():
    out = subprocess.run([sys.executable, "-m", "damlite", "summarize", "no-such-file.jsonl"], env=ENV, cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode != 0 and "no such result file" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not out.stdout


# ------------------------------------------------------------- should fix
@pytest.mark.parametrize("kwargs, match", [
    ({"init_std": -0.1}, "init_std"), ({"init_mean": float("inf")}, "init_mean"),
    ({"random_state": -1}, "random_state"), ({"temperature": "hot"}, "temperature"),
    ({"memory_budget": 0}, "memory_budget"), ({"memory_budget": float("nan")}, "memory_budget"),
    ({"leak": "sideways", "interaction": "leaky_rectified_polynomial"}, "leak"),
    ({"n": 2**70}, "n must"), ({"temperature": 1e-300, "variant": "original"}, "temperature"),
])
def test_more_bad_parameters_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _dam(**kwargs, epochs=1).fit(_patterns())


def test_memory_budget_none_means_the_default():
    _dam(memory_budget=None, epochs=1).fit(_patterns())


@pytest.mark.parametrize("X, error, match", [
    (np.ones((3, 0)), ValueError, "no columns"),
    (np.ones((3, 4)) + 1j, TypeError, "complex"),
    (np.array([["a", "b"]]), TypeError, "numeric"),
])
def test_bad_X_names_X(X, error, match):
    with pytest.raises(error, match=match):
        _dam(epochs=1).fit(X)


@pytest.mark.parametrize("fit_kwargs, match", [
    ({"lr_decay": "0.9"}, "lr_decay"), ({"momentum": None}, "momentum"), ({"clamp": "yes"}, "clamp"),
])
def test_non_numeric_fit_options_name_the_argument(fit_kwargs, match):
    with pytest.raises(ValueError, match=match):
        _dam(epochs=1, **fit_kwargs).fit(_patterns())


def test_loss_before_fit_says_fit_first():
    with pytest.raises(NotFittedError, match="fit"):
        _dam().loss(_patterns())
    with pytest.raises(AttributeError):  # also an AttributeError, as scikit-learn's NotFittedError
        _dam().relax(_patterns())


def test_relax_seed_must_be_an_int():
    dam = _dam(epochs=1).fit(_patterns())
    with pytest.raises(ValueError, match="random_state"):
        dam.relax(_patterns(), random_state=1.5)


def test_classifier_checks_features_and_labels():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (12, 6))
    clf = _dam(epochs=2).fit(X, [0, 1, 2] * 4)  # y as a Python list
    with pytest.raises(ValueError, match="6 features"):
        clf.predict(X[:, :5])
    with pytest.raises(ValueError, match="NaN"):
        _dam(epochs=1).fit(X, np.array([0.0, np.nan] * 6))


def test_memories_are_copied_on_set():
    dam = _dam()
    mine = np.zeros((8, 16))
    dam.memories_ = mine
    mine[0, 0] = 0.5
    assert float(damlite.to_numpy(dam.memories_)[0, 0]) == 0.0


def test_changing_the_variant_after_fit_is_refused():
    dam = _dam(epochs=1).fit(_patterns())
    dam.set_params(variant="original")
    with pytest.raises(ValueError, match="variant"):
        dam.relax(_patterns())
    dam.set_params(variant="normalized")
    dam.relax(_patterns())


def test_scales_validates_n_features():
    with pytest.raises(ValueError, match="n_features"):
        _dam().scales(0)


@pytest.mark.parametrize("args, match", [
    (["--max-blocks", "-1"], "max-blocks"), (["--memory-budget", "nan"], "memory-budget"),
    (["--workers", "0"], "workers"),
])
def test_cli_bad_numbers_fail_in_one_line(args, match, tmp_path):
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out",
                          str(tmp_path), "--no-progress", *args], env=ENV, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and match in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_out_a_file_or_read_only_fails_before_any_work(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("")
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out",
                          str(a_file), "--no-progress"], env=ENV, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2 and "is a file" in out.stderr


def test_read_only_directory_is_refused_before_any_work(tmp_path, monkeypatch):
    # root may write anywhere, so the permission answer is simulated: the check must ask for it
    monkeypatch.setattr(ex.os, "access", lambda path, mode: False)
    with pytest.raises(ex.ResultFileError, match="not writable"):
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path, backend="numpy", progress=False)
    assert not any(tmp_path.iterdir())


def test_read_only_result_file_is_refused_up_front(tmp_path, monkeypatch):
    blocks = ex.profile_blocks("autoassociative", "smoke")[:1]
    path = ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False)
    monkeypatch.setattr(ex.os, "access", lambda p, mode: Path(p) != path)
    with pytest.raises(ex.ResultFileError, match="read-only"):
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path, backend="numpy", progress=False)


# --------------------------------------------------------------- provenance
def test_provenance_records_a_resolved_commit_and_no_local_paths():
    prov = ex.provenance("numpy", host=True)
    commit = prov["git_commit"]
    assert commit is None or (len(commit) == 40 and all(c in "0123456789abcdef" for c in commit))
    assert prov["git_dirty"] in (True, False, None)
    assert not any(os.path.isabs(a) for a in prov["argv"])
    from damlite.datasets import describe_source  # noqa: PLC0415

    assert describe_source("/home/me/mnist") == "full MNIST (IDX files, SHA256 checked)"
    assert describe_source("bundled subset") == "bundled subset"


# --------------------------------------------------------------- engine split
#: sha256 (first 16 hex) of each profile's sorted block keys, joined by newlines, as computed
#: before the engine split (commit 4fc76ba): the split must not change any block's identity. Keys
#: were then written with 6-digit grid values; each block's ``legacy_key`` is that key.
KEY_DIGESTS = {
    "autoassociative/full": "ea7046935c18e5ce", "autoassociative/leak": "56db666acf0c0a50",
    "autoassociative/quick": "7b16857142dfbe2d", "autoassociative/smoke": "3789bbcad1aac2a8",
    "mnist/full": "57200992f238e76e", "mnist/quick": "f1f432c79250af8b", "mnist/short": "ded02e0ee68feaa4",
    "mnist/smoke": "818bcedc2976145e",
}


@pytest.mark.parametrize("name", sorted(KEY_DIGESTS))
def test_block_keys_are_unchanged_by_the_engine_split(name):
    import hashlib  # noqa: PLC0415

    task, profile = name.split("/")
    keys = sorted(b.legacy_key for b in ex.profile_blocks(task, profile))
    assert hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16] == KEY_DIGESTS[name]


def test_committed_results_resume_under_the_split_engine():
    """Every block in the committed result files is a block of its profile today (so nothing reruns)."""
    for path, task, profile in [(ROOT / "book/results/autoassociative/autoassociative-full.jsonl", "autoassociative",
                                 "full"), (ROOT / "book/results/mnist/mnist-short.jsonl", "mnist", "short")]:
        committed = {line["key"] for line in ex.read_results(path)}
        assert committed and committed <= {b.key for b in ex.profile_blocks(task, profile)}


def test_smoke_records_are_unchanged_by_the_engine_split(monkeypatch):
    """Digest of the first two smoke blocks' records, computed before the split (the NumPy kernels)."""
    import hashlib  # noqa: PLC0415

    monkeypatch.setenv("DAMLITE_CPU_KERNELS", "numpy")

    blocks = ex.profile_blocks("autoassociative", "smoke")[:2]
    recs = [ex.run_block(b, backend="numpy")["records"] for b in blocks]
    assert hashlib.sha256(json.dumps(recs, sort_keys=True).encode()).hexdigest()[:16] == "f817be68e13a2c47"


def test_the_engine_imports_no_task():
    code = ("import sys, damlite.sweeps.experiments; "
            "print(any(m.startswith('damlite.sweeps.tasks') or m == 'damlite.classification' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------- defaults that work (2026-11-26, commit aa8b3ea)
@pytest.mark.parametrize("n", [10, 20, 30])
def test_defaults_store_the_papers_task(n):
    """The estimator's defaults on the paper's autoassociative task keep >= 99 % of bits.

    Two ways of drawing the patterns, three draws each (``init="patterns"`` is what makes
    this hold for every draw; see the class docstring)."""
    for seed in range(3):
        for patterns in (np.where(np.random.default_rng(500 + seed).random((20, 100)) < 0.5, -1.0, 1.0),
                         np.random.default_rng(seed).choice([-1.0, 1.0], (20, 100))):
            dam = DenseAssociativeMemory(n_memories=40, n=n, backend="numpy", random_state=seed)
            dam.set_params(epochs=300).fit(patterns)
            kept = np.mean(damlite.to_numpy(dam.relax(patterns, random_state=seed).states) == patterns)
            assert kept >= 0.99, (seed, kept)


def test_pattern_init_gives_every_row_its_memories():
    X = _patterns(3, B=5, N=16)
    dam = DenseAssociativeMemory(n_memories=12, n=3, backend="numpy", random_state=0, init_std=0.1)
    dam.set_params(epochs=1, learning_rate=1e-9).fit(X)  # a negligible step: the memories are the initial ones
    mem = damlite.to_numpy(dam.memories_)
    owner = np.argmax(mem @ X.T, axis=1)  # each memory leans towards the row it was drawn from
    assert sorted(np.bincount(owner, minlength=5)) == [2, 2, 2, 3, 3]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_pool_workers_die_with_a_killed_sweep(tmp_path):
    script = (
        "import time\n"
        "from damlite.sweeps import experiments as ex\n"
        "def slow(block, **kw):\n"
        "    time.sleep(60)\n"
        "    return []\n"
        "ex.register_task('sleepy', slow)\n"
        "blocks = [ex.Block('sleepy', 'normalized', n, 'g', (1.0,), (0.1,), 1) for n in (1, 2, 3)]\n"
        f"ex.run_sweep('sleepy', 'p', blocks=blocks, out_dir={str(tmp_path)!r}, workers=2,\n"
        "             backend='numpy', progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=ENV, cwd=ROOT)
    deadline = time.time() + 30
    kids = []
    while time.time() < deadline and len(kids) < 2:
        time.sleep(0.2)
        kids = child_pids(proc.pid)
    assert len(kids) >= 2, "the pool did not start"
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(Path(f"/proc/{k}").exists() for k in kids):
        time.sleep(0.1)
    alive = []
    for k in kids:
        try:
            state = Path(f"/proc/{k}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(k)
    assert not alive, f"workers {alive} outlived the killed sweep"
