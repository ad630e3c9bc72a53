"""The sweep engine refuses what it cannot stand behind: colliding keys, records readers would reject,
a result file changed under it, unbounded numbers, limits it can foresee, switches with two meanings.

Each test failed before the fix it names. Most run a toy task in this process (no worker process is
started: a pool is replaced by threads where the number of workers is what is tested).
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from damlite import __main__ as cli
from damlite import backend
from damlite.sweeps import experiments as ex
from damlite.sweeps import limits
from damlite.sweeps.tasks import autoassociative as aa

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "DAMLITE_BACKEND": "numpy", "DAMLITE_QUIET": "1"}
TOY = "guardtoy"


def _records(block, **extra):
    return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": 0.0, **extra}
            for r, _, _, t, lr in block.cells()]


def _blocks(k, grid=((1.0,), (0.1,))):
    return [ex.Block(TOY, "normalized", n, "g", *grid, 1) for n in range(1, k + 1)]


@pytest.fixture
def toy():
    """Register task TOY, profile "p" of ``k`` blocks, running ``run`` (default: zero distances)."""
    def register(run=None, k=3, **kw):
        ex.register_task(TOY, run or (lambda block, **_: _records(block)), profiles={"p": lambda: _blocks(k)}, **kw)
        return _blocks(k)
    yield register
    ex.TASKS.pop(TOY, None)


def _sweep(out, **kw):
    return ex.run_sweep(TOY, "p", out_dir=out, backend="numpy", progress=False, **kw)


# ------------------------------------------------------------------ keys that cannot collide
def test_grids_equal_to_six_digits_are_two_blocks(tmp_path, toy):
    calls = []
    toy(lambda block, **_: calls.append(block) or _records(block))
    a, b = (ex.Block(TOY, "normalized", 1, "g", (x,), (0.1,), 1) for x in (1.0000001, 1.0000002))
    ex.TASKS[TOY].profiles["p"] = lambda: [a, b]
    assert f"{1.0000001:.6g}" == f"{1.0000002:.6g}" and a.key != b.key
    path = ex.run_sweep(TOY, "p", blocks=[a, b], out_dir=tmp_path, backend="numpy", progress=False)
    recs = ex.load_records(path)
    assert sorted(r["inv_temperature"] for r in recs) == [1.0000001, 1.0000002]
    assert ex.heatmap_table(recs, "normalized", 1, "g")[2].shape == (2, 1)
    ex.run_sweep(TOY, "p", blocks=[a, b], out_dir=tmp_path, backend="numpy", progress=False)
    assert len(calls) == 2  # neither block is taken for the other: both done, nothing reruns


def test_grids_given_to_six_digits_keep_their_keys_and_seeds():
    """The committed result files' blocks: the key (and so the seed) of a 6-digit grid is what it was."""
    b = ex.Block(TOY, "normalized", 1, "g", (0.1, 0.215443, 1e-05, 100000.0), (0.001,), 1)
    assert b.key.endswith("|invT=0.1,0.215443,1e-05,100000|lr=0.001")


def test_a_line_keyed_by_an_older_damlite_is_still_read_and_done(tmp_path, toy):
    """Before exact keys, a value past 6 digits was keyed by its 6-digit text; such lines still count."""
    block = ex.Block(TOY, "normalized", 1, "g", (1.0000001,), (0.1,), 1)
    toy()
    ex.TASKS[TOY].profiles["p"] = lambda: [block]
    line = ex.run_block(block, backend="numpy")
    line["key"] = block.key.replace("invT=1.0000001", "invT=1")
    path = ex.results_path(tmp_path, TOY, "p")
    path.write_text(json.dumps(line) + "\n")
    lines = ex.read_results(path)
    assert len(lines) == 1 and lines[0]["key"] == block.key
    assert ex.load_records(path, blocks=[block])
    assert block.seed.entropy == ex.Block.from_json(line["block"]).seed.entropy


COMMITTED = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "book/results").glob("*/*.jsonl"))


def _summary_digest(path):
    records = ex.load_records(path)
    spec = ex.get_task(records[0]["task"])
    rows = ex.summarize(records, metric=spec.metric, lower_is_better=spec.lower_is_better)
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]


#: sha256 (first 16 hex) of ``summarize``'s rows of each committed result file, before exact keys.
SUMMARY_DIGESTS = {
    "autoassociative-censored": "eb9dd1e5daebea53",  # (read with the code of 252af9d, before exact keys)
    "autoassociative-fine250": "b1e945993c103aff", "autoassociative-full": "cb4bee799308a001",
    "autoassociative-leak-unshifted": "580bb1d41392decb", "autoassociative-leak": "8e755e2681a7ab07",
    "autoassociative-leak250": "4a2a08ce349a4e6b", "autoassociative-rectified": "35ca62a3929753b0",
    "autoassociative-scorecard": "70d19b2819730acd", "autoassociative-sensitivity": "e2c19deee4f2ae63",
    "autoassociative-wide": "f3f0f298198ad8e4", "mnist-full": "b0d2064d944cf086", "mnist-leak-cpu": "966157418b7a386b",
    "mnist-leak-init": "59d816219698fad1", "mnist-seeds": "0331163ec9eced17", "mnist-short": "5bb1b2f196c6b19d",
    # the pre-registered runs of 2026-11-29 (read with the code of the commit that committed them)
    "autoassociative-floor": "83f601ae069b60f4", "autoassociative-n25": "16bc86961482a802",
    "autoassociative-parity": "c4b6ce6caf8039ce", "autoassociative-rate10": "2a67fb20bc431fe7",
    "mnist-author-slice": "6af9f0b37a2a4b0f", "mnist-b-slice": "c2fab3cf7ddb8a10",
}


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_result_files_are_done_and_summarised_as_before(name):
    path = ROOT / name
    task, profile = path.stem.split("-", 1)
    lines = ex.read_results(path)
    assert len(lines) == len(path.read_text().splitlines())  # every line read, no warning
    assert {line["key"] for line in lines} == {b.key for b in ex.profile_blocks(task, profile)}
    assert _summary_digest(path) == SUMMARY_DIGESTS[path.stem]


#: (number of blocks, digest of the sorted keys, digest of the seeds) of every profile, before exact keys. A
#: block's key as it was then is its ``legacy_key`` now (readers take it); a grid value that its 6-digit
#: text does not give exactly (the coarse grid's 21.544347, written 21.5443) is now written exactly.
PROFILE_DIGESTS = {
    "autoassociative/censored": (13, "557bd48688fafc7f", "fd1c310a3005abea"),
    "autoassociative/fine250": (12, "df1d4a4df7e4cf9c", "f1668aba6b3fc284"),
    "autoassociative/full": (55, "ea7046935c18e5ce", "68da0fc4300eede8"),
    "autoassociative/leak": (48, "56db666acf0c0a50", "fd4efbd6e7da1720"),
    "autoassociative/leak-unshifted": (1, "b6cbe31acbaa3c01", "66f3a6bd3f96ba9c"),
    "autoassociative/leak250": (12, "81a54c32496289bd", "44e74f93f18261a0"),
    "autoassociative/quick": (5, "7b16857142dfbe2d", "b00cc82bce5415e8"),
    "autoassociative/rectified": (12, "614918e7aa12a0d1", "67a94dce556e3306"),
    "autoassociative/scorecard": (26, "80521b60bfe9e229", "7d3038d7080bdf7b"),
    "autoassociative/sensitivity": (18, "c88e2818c874ef0a", "b6306f67984d13bf"),
    "autoassociative/smoke": (6, "3789bbcad1aac2a8", "c1aa7dc4c4d3099a"),
    "autoassociative/wide": (8, "a303f6feb1474cd7", "d2baa933c989d51b"),
    "mnist/full": (8, "57200992f238e76e", "3d96d34689ec845b"),
    "mnist/leak-cpu": (4, "aa30b0872547361e", "1db98d1b8aef8504"),
    "mnist/leak-init": (3, "7dcc75e962cf9a77", "919d3176690131bc"),
    "mnist/leak-quick": (8, "d940dd7f07a2bd77", "fd72049ef16a7fef"),
    "mnist/leak-short": (8, "5eb531883588aa7b", "9f28cfac07f197a9"),
    "mnist/quick": (8, "f1f432c79250af8b", "d89f06b94a1d5045"),
    "mnist/seeds": (4, "4cef09edccbf206c", "eb9e51ea6b017e1c"),
    "mnist/short": (8, "ded02e0ee68feaa4", "543bf4289322ee3f"),
    "mnist/smoke": (4, "818bcedc2976145e", "12861d16bfff06fb"),
}


@pytest.mark.parametrize("name", sorted(PROFILE_DIGESTS))
def test_every_profiles_keys_and_seeds_are_as_before(name):
    task, profile = name.split("/")
    blocks = ex.profile_blocks(task, profile)
    keys = hashlib.sha256("\n".join(sorted(b.legacy_key for b in blocks)).encode()).hexdigest()[:16]
    seeds = hashlib.sha256(str([b.seed.generate_state(1)[0] for b in blocks]).encode()).hexdigest()[:16]
    assert (len(blocks), keys, seeds) == PROFILE_DIGESTS[name]
    for b in blocks:  # the key is the old one wherever that was exact
        exact = all(float(f"{x:.6g}") == x for x in b.inv_temperature + b.learning_rate)
        assert (b.key == b.legacy_key) == exact


# ------------------------------------------------------------------ a sweep that cannot loop or lie
def _identity_overridden(block):
    return [dict(r, variant="original") for r in _records(block)]


@pytest.mark.parametrize("records, field", [
    (lambda block: [{k: v for k, v in r.items() if k != "distance"} for r in _records(block)], "has no 'distance'"),
    (_identity_overridden, "'variant' is 'original', not its block's 'normalized'"),
    (lambda block: [], "0 records where its block has 1 network"),
])
def test_a_record_that_readers_would_reject_fails_its_block_naming_block_and_field(tmp_path, toy, records, field):
    toy(lambda block, **_: records(block) if block.n == 2 else _records(block))
    with pytest.raises(ex.SweepFailed, match=rf"block 2/3 \(normalized n=2 g float64\) failed: .*{field}") as err:
        _sweep(tmp_path, keep_going=True)
    path = ex.results_path(tmp_path, TOY, "p")
    assert len(path.read_text().splitlines()) == 2 and err.value.kept == 2  # nothing written that readers skip


def test_the_cli_exits_nonzero_while_blocks_are_left_undone(tmp_path, toy, capsys):
    toy(lambda block, **_: [{k: v for k, v in r.items() if k != "distance"} for r in _records(block)], k=1)
    argv = ["sweep", TOY, "--profile", "p", "--out", str(tmp_path), "--backend", "numpy", "--no-progress"]
    assert cli.main(argv) == 1 and cli.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("block 1/1 (normalized n=1 g float64) failed") == 2
    path = ex.results_path(tmp_path, TOY, "p")
    assert not path.exists() or not path.read_text()  # no line appended, again and again


def test_numpy_scalars_in_records_are_written_as_numbers(tmp_path, toy):
    toy(lambda block, **_: _records(block, distance=np.float32(0.5), sweeps=np.int64(3), finite=np.bool_(True)))
    recs = ex.load_records(_sweep(tmp_path))
    assert len(recs) == 3 and {(r["distance"], r["sweeps"], r["finite"]) for r in recs} == {(0.5, 3, True)}
    assert {type(r["sweeps"]) for r in recs} == {int}


def test_a_field_that_is_no_json_value_fails_its_block_naming_block_and_field(tmp_path, toy):
    toy(lambda block, **_: _records(block, curve=np.zeros(3)), k=1)
    with pytest.raises(ex.SweepFailed, match=r"block 1/1 \(normalized n=1 g float64\) failed: .*record 0's field "
                                             r"'curve' is a numpy.ndarray"):
        _sweep(tmp_path)


def _damage(path, how):
    if how == "truncated":  # cut the first line short, as a careless copy or a full disk elsewhere would
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:  # another file put in its place
        other = path.with_name("other.jsonl")
        other.write_bytes(b"")
        os.replace(other, path)


@pytest.mark.parametrize("how, said", [
    ("truncated", "shrank from"), ("replaced", "was replaced by another file"),
])
def test_a_file_changed_under_the_writer_is_noticed_repaired_and_the_loss_reported(tmp_path, toy, how, said):
    path = ex.results_path(tmp_path, TOY, "p")

    def run(block, **_):
        if block.n == 2:
            _damage(path, how)
        return _records(block)

    toy(run)
    notes = []
    with pytest.raises(ex.SweepFailed, match=r"block 1/3 \(normalized n=1 g float64\) failed: lost: .*changed under"):
        _sweep(tmp_path, say=notes.append)
    assert len(notes) == 1 and f"{path.name} changed under this sweep: it {said}" in notes[0]
    assert sorted(line["block"]["n"] for line in ex.read_results(path)) == [2, 3]
    assert path.read_bytes().endswith(b"\n")
    toy()
    _sweep(tmp_path)
    assert sorted(line["block"]["n"] for line in ex.read_results(path)) == [1, 2, 3]


def test_a_block_another_writer_put_in_the_file_is_not_run_again(tmp_path, toy):
    """Two sweeps on one folder through mounts their locks do not share: each notices the other's lines."""
    path = ex.results_path(tmp_path, TOY, "p")
    calls = []

    def run(block, **_):
        calls.append(block.n)
        if block.n == 2:  # meanwhile another sweep appends block 3
            with open(path, "a") as fh:
                fh.write(json.dumps({"key": other["key"], "profile": "p", **other}) + "\n")
        return _records(block)

    toy(run)
    other = ex.run_block(_blocks(3)[2], backend="numpy")
    calls.clear()
    notes = []
    _sweep(tmp_path, say=notes.append)
    assert calls == [1, 2] and sorted(line["block"]["n"] for line in ex.read_results(path)) == [1, 2, 3]
    assert len(notes) == 1 and "changed under this sweep: it grew by" in notes[0]
    assert "block 3/3 (normalized n=3 g float64) is in it already, not run again" in notes[0]


# ------------------------------------------------------------------ every number bounded
class _Pool(ThreadPoolExecutor):
    """A pool of threads in place of processes: records how many workers it was asked for."""

    asked = []

    def __init__(self, max_workers, initializer=None):
        _Pool.asked.append(max_workers)
        super().__init__(max_workers=min(max_workers, 4))


@pytest.fixture
def pool(monkeypatch):
    _Pool.asked = []
    monkeypatch.setattr(ex, "ProcessPoolExecutor", _Pool)
    return _Pool


def test_workers_are_capped_at_the_pending_blocks(tmp_path, toy, pool):
    toy(k=3)
    notes = []
    _sweep(tmp_path, workers=10**20, say=notes.append)
    assert pool.asked == [3] and len(ex.read_results(ex.results_path(tmp_path, TOY, "p"))) == 3
    assert notes == ["--workers 100000000000000000000 capped at 3: the pending blocks"]


def test_workers_are_capped_at_a_small_multiple_of_the_cores(tmp_path, toy, pool, monkeypatch):
    monkeypatch.setattr(limits, "usable_cores", lambda: 1)
    toy(k=6)
    notes = []
    _sweep(tmp_path, workers=50, say=notes.append)
    assert pool.asked == [limits.WORKERS_PER_CORE]
    assert notes == [f"--workers 50 capped at {limits.WORKERS_PER_CORE}: {limits.WORKERS_PER_CORE} per core, "
                     f"1 core"]


def test_workers_are_capped_at_the_blocks_that_fit_in_memory(tmp_path, toy, pool, monkeypatch):
    monkeypatch.setattr(limits, "memory_total", lambda backend_name: 2**30)
    toy(k=3, memory=lambda block: 400 * 2**20)
    notes = []
    _sweep(tmp_path, workers=3, memory_budget=2**20, say=notes.append)
    assert pool.asked == [2]
    assert notes == ["--workers 3 capped at 2: each block needs about 401 MiB of the 1.0 GiB memory"]


@pytest.mark.parametrize("argv, flag", [
    (["summarize", "x.jsonl", "--tolerance", "nan"], "--tolerance must be a finite number >= 0"),
    (["summarize", "x.jsonl", "--tolerance", "-1"], "--tolerance must be a finite number >= 0"),
    (["summarize", "x.jsonl", "--tolerance", "inf"], "--tolerance must be a finite number >= 0"),
    (["scorecard", "--bootstrap", "-1"], "--bootstrap must be an integer in [0, 10000]"),
    (["scorecard", "--bootstrap", "1000000000"], "--bootstrap must be an integer in [0, 10000]"),
    (["sweep", "--workers", "1e20"], "--workers must be an integer >= 1"),
    (["sweep", "--workers", "0"], "--workers must be an integer >= 1"),
    (["sweep", "--max-blocks", "two"], "--max-blocks must be an integer >= 0"),
    (["sweep", "--memory-budget", "inf"], "--memory-budget must be a positive number of MiB"),
    (["list", "a", "b"], "unrecognized arguments: b"),
])
def test_every_numeric_flag_is_refused_in_one_line_naming_it_and_its_range(argv, flag, capsys, tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("damlite: error: ") and flag in err, err
    assert not any(tmp_path.iterdir())


def test_a_memory_budget_beyond_the_machines_memory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "memory_total", lambda backend_name: 2**30)
    with pytest.raises(ValueError, match=r"memory_budget of 2.0 GiB is more than the 1.0 GiB memory of this "
                                         r"machine"):
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path, backend="numpy", progress=False,
                     memory_budget=2**31)
    assert not any(tmp_path.iterdir())


def test_tolerance_is_checked_by_good_region_too():
    table = (np.array([1.0]), np.array([0.1]), np.zeros((1, 1)))
    for bad in (float("nan"), -1.0, float("inf"), "0.5"):
        with pytest.raises(ValueError, match="tolerance must be a finite number >= 0"):
            ex.good_region(table, tolerance=bad)


@pytest.mark.parametrize("inv_t, lr, match", [
    ((float("nan"),), (0.1,), r"inv_temperature \(1/T\) values must be finite numbers > 0, got nan"),
    ((1.0, float("inf")), (0.1,), r"inv_temperature \(1/T\) values must be finite numbers > 0, got inf"),
    ((0.0,), (0.1,), r"inv_temperature \(1/T\) values must be finite numbers > 0, got 0.0"),
    ((-1.0,), (0.1,), r"inv_temperature \(1/T\) values must be finite numbers > 0, got -1.0"),
    ((1.0,), (-0.1,), r"learning_rate values must be finite numbers > 0, got -0.1"),
    ((1.0,), (0.0,), r"learning_rate values must be finite numbers > 0, got 0.0"),
    ((), (0.1,), r"inv_temperature \(1/T\) is empty: a grid needs at least one value"),
    ((1.0,), (), r"learning_rate is empty: a grid needs at least one value"),
])
def test_grid_values_are_refused_as_the_estimator_refuses_them(inv_t, lr, match):
    with pytest.raises(ValueError, match=rf"block {TOY} normalized n=1 grid 'g': {match}"):
        ex.Block(TOY, "normalized", 1, "g", inv_t, lr, 1)


def test_an_empty_grid_is_refused_by_name_not_by_a_division():
    with pytest.raises(ValueError, match=r"grid 'custom': learning_rate is empty"):
        aa.autoassociative_block("normalized", 3, ((1.0, 2.0), ()))


@pytest.mark.parametrize("field, value, match", [
    ("repeats", 0, "repeats must be an integer >= 1, got 0"), ("n", 0.5, "n must be an integer >= 1, got 0.5"),
    ("base_seed", -1, "base_seed must be an integer >= 0, got -1"),
])
def test_the_other_numbers_of_a_block_are_checked(field, value, match):
    fields = dict(task=TOY, variant="normalized", n=1, grid="g", inv_temperature=(1.0,), learning_rate=(0.1,),
                  repeats=1)
    with pytest.raises(ValueError, match=match):
        ex.Block(**{**fields, field: value})


def test_a_block_that_cannot_fit_is_refused_before_any_work_with_a_true_hint(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "memory_total", lambda backend_name: 2**30)
    grid = (tuple(np.logspace(-1, 1, 10)), tuple(np.logspace(-2, -1, 10)))
    block = aa.autoassociative_block("normalized", 3, grid, N=1000, memories=1000, repeats=1)
    with pytest.raises(ValueError, match=r"block 1/1 \(normalized n=3 custom float64\) needs about .* GiB \(its "
                                         r"networks' own arrays, about .* GiB, and the 256 MiB budget\), more than "
                                         r"the 1.0 GiB memory of this machine: give it a smaller grid, fewer repeats "
                                         r"or smaller networks") as err:
        ex.run_sweep("autoassociative", "x", blocks=[block], out_dir=tmp_path, backend="numpy", progress=False)
    assert "--memory-budget" not in str(err.value) and not any(tmp_path.iterdir())


def test_a_million_cell_grid_is_refused_up_front(tmp_path):
    grid = (tuple(np.logspace(-1, 2, 1000)), tuple(np.logspace(-3, 0, 1000)))
    block = aa.autoassociative_block("normalized", 3, grid, repeats=1)
    with pytest.raises(ValueError, match=r"block 1/1 \(normalized n=3 custom float64\) needs about \d+ GiB"):
        ex.run_sweep("autoassociative", "x", blocks=[block], out_dir=tmp_path, backend="numpy", progress=False)


def test_the_autoassociative_estimate_covers_what_a_block_takes():
    """Measured peak resident memory of blocks (N, K, P) = (100, 100, 20), (50, 200, 50), (200, 20, 100) with
    400 networks: 256, 305 and 208 MiB above the process's (NumPy path 317 MiB for the first): the estimate
    covers each and is not far above."""
    grid = (tuple(np.logspace(-1, 1, 40)), tuple(np.logspace(-2, -1, 10)))
    for (N, K, P), measured in {(100, 100, 20): 317, (50, 200, 50): 305, (200, 20, 100): 208}.items():
        block = aa.autoassociative_block("normalized", 3, grid, N=N, memories=K, patterns=P, repeats=1)
        estimate = ex.get_task("autoassociative").memory(block) / 2**20
        assert measured <= estimate <= 2 * measured, (N, K, P, estimate)


# ------------------------------------------------------------------ native failures foreseen
def _limit_address_space(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
    return preexec


def test_an_address_space_limit_that_cannot_hold_a_block_is_one_line_before_any_work(tmp_path):
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out",
                          str(tmp_path), "--no-progress"], env=ENV, cwd=ROOT, capture_output=True, text=True,
                         timeout=120, preexec_fn=_limit_address_space(400 * 2**20))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "the address-space limit (ulimit -v) is 400 MiB" in out.stderr and "raise it" in out.stderr
    assert not ex.results_path(tmp_path, "autoassociative", "smoke").exists()


def test_the_address_space_preflight_counts_the_block(tmp_path, toy, monkeypatch):
    monkeypatch.setattr(limits, "address_space_limit", lambda: 2 * 2**30)
    monkeypatch.setattr(limits, "mapped_now", lambda: 2**30)
    toy(k=2, memory=lambda block: 2**30 if block.n == 2 else 2**20)
    with pytest.raises(ValueError, match=r"the address-space limit \(ulimit -v\) is 2.0 GiB, below the about 2.\d GiB "
                                         r"block 2/2 \(normalized n=2 g float64\) needs"):
        _sweep(tmp_path, memory_budget=2**20)
    assert not ex.results_path(tmp_path, TOY, "p").exists()


# ------------------------------------------------------------------ switches with one meaning
@pytest.fixture
def fresh_backend(monkeypatch):
    monkeypatch.setattr(backend, "_cache", {})
    monkeypatch.setattr(backend, "_announced", False)
    monkeypatch.delenv("DAMLITE_BACKEND", raising=False)


@pytest.mark.parametrize("value, announced", [
    ("0", True), ("false", True), ("No", True), ("", True), ("1", False), ("yes", False), ("TRUE", False),
])
def test_damlite_quiet_means_what_it_says(value, announced, fresh_backend, monkeypatch, capsys):
    monkeypatch.setenv("DAMLITE_QUIET", value)
    backend.get_backend("auto")
    assert bool(capsys.readouterr().err) == announced


@pytest.mark.parametrize("name", ["DAMLITE_QUIET", "DAMLITE_TRACEBACK"])
def test_an_unknown_boolean_switch_value_is_refused(name, monkeypatch):
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ValueError, match=rf"{name} must be one of 0, false, no, off \(off\) or 1, true, yes, on "
                                         rf"\(on\), or unset; got 'maybe'"):
        backend.env_flag(name)


def test_damlite_traceback_zero_means_no_traceback(tmp_path, monkeypatch, capsys):
    argv = ["sweep", "autoassociative", "--profile", "smoke", "--out", str(tmp_path), "--only", "nosuchterm"]
    monkeypatch.setenv("DAMLITE_TRACEBACK", "0")
    assert cli.main(argv) == 2 and "matches none" in capsys.readouterr().err
    monkeypatch.setenv("DAMLITE_TRACEBACK", "yes")
    with pytest.raises(ValueError, match="matches none"):
        cli.main(argv)
    monkeypatch.setenv("DAMLITE_TRACEBACK", "maybe")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "DAMLITE_TRACEBACK must be one of" in err


def test_a_gpu_kernels_typo_is_refused_on_the_cpu_too(fresh_backend, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DAMLITE_GPU_KERNELS", "minibtach")
    with pytest.raises(ValueError, match="DAMLITE_GPU_KERNELS must be one of auto, minibatch, threepass, reference; got "
                                         "'minibtach'"):
        backend.get_backend("numpy")
    assert cli.main(["sweep", "autoassociative", "--profile", "smoke", "--out", str(tmp_path)]) == 2
    assert "DAMLITE_GPU_KERNELS must be one of" in capsys.readouterr().err and not any(tmp_path.iterdir())


@pytest.fixture
def no_git(monkeypatch):
    monkeypatch.setattr(ex, "_git", lambda *args: (None, "no git on PATH"))
    ex._git_info.cache_clear()
    yield
    monkeypatch.undo()
    ex._git_info.cache_clear()


@pytest.mark.parametrize("value", ["abc", "unknown", "g" * 40, "0123456789abcdef0123456789abcdef0123456"])
def test_a_git_commit_from_the_environment_is_checked(value, no_git, monkeypatch):
    monkeypatch.setenv("DAMLITE_GIT_COMMIT", value)
    with pytest.raises(ValueError, match=rf"DAMLITE_GIT_COMMIT must be a full commit hash \(40 or 64 hexadecimal "
                                         rf"digits\), got '{value}'"):
        ex.git_state()


def test_a_full_git_commit_from_the_environment_is_recorded(no_git, monkeypatch):
    monkeypatch.setenv("DAMLITE_GIT_COMMIT", " " + "AB" * 20 + " ")
    assert ex.git_state() == ("ab" * 20, None) and ex.git_problem() is None


def test_the_numba_failure_warning_says_how_to_clear_the_cache(monkeypatch):
    from damlite.kernels import cpu_kernels  # noqa: PLC0415

    if not cpu_kernels.available():
        pytest.skip("numba kernels are off here")
    monkeypatch.setattr(cpu_kernels, "_failure", None)
    monkeypatch.setattr(cpu_kernels, "_warned", False)
    with pytest.warns(cpu_kernels.CpuKernelsWarning) as rec:
        cpu_kernels._fail("kernel 'front' failed: UnpicklingError: pickle data was truncated")
    message = str(rec[0].message)
    cache = cpu_kernels._kernels.cache_dir()
    assert f"delete {cache}{os.sep}_cpu_numba.*.nbi and .nbc" in message and "silence" not in message


def test_a_complete_result_file_on_read_only_storage_is_nothing_to_do(tmp_path, toy, monkeypatch, capsys):
    toy(k=2)
    path = _sweep(tmp_path)
    monkeypatch.setattr(ex.os, "access", lambda p, mode: False)
    assert _sweep(tmp_path) == path
    argv = ["sweep", TOY, "--profile", "p", "--out", str(tmp_path), "--backend", "numpy", "--no-progress"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == f"{path}: nothing to do; all 2 blocks are done\n"
