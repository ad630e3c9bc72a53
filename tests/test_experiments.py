"""damlite.sweeps.experiments and the CLI: batched sweeps, resumption after SIGKILL, executors."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from damlite.sweeps import experiments as ex
from damlite.sweeps.tasks import autoassociative as aa

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "DAMLITE_BACKEND": "numpy", "DAMLITE_QUIET": "1"}


def _strip(records):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def _smoke():
    return ex.profile_blocks("autoassociative", "smoke")


def test_block_identity_and_seed_are_stable():
    a, b = aa.autoassociative_block("normalized", 5), aa.autoassociative_block("normalized", 5)
    assert a.key == b.key and a.seed.entropy == b.seed.entropy
    c = aa.autoassociative_block("normalized", 5, dtype="float32")
    assert c.key != a.key and c.seed.generate_state(1)[0] != a.seed.generate_state(1)[0]
    assert ex.Block.from_json(json.loads(json.dumps(a.to_json()))) == a
    assert a.n_networks == 10 * 10 * 5


def test_original_grid_is_the_normalized_one_divided_by_N():
    o = aa.autoassociative_block("original", 3, N=250, patterns=30)
    n = aa.autoassociative_block("normalized", 3, N=250, patterns=30)
    np.testing.assert_allclose(np.array(o.inv_temperature) * 250, n.inv_temperature, rtol=1e-5)


def test_original_and_normalized_give_the_same_records():
    """With beta_out = beta_in**n the two variants are the same networks (homogeneous F)."""
    blocks = [b for b in _smoke() if b.n == 3]
    recs = {b.variant: ex.run_block(b, backend="numpy")["records"] for b in blocks}
    d_o = [r["distance"] for r in recs["original"]]
    d_n = [r["distance"] for r in recs["normalized"]]
    assert len(d_o) == 8 and d_o == d_n
    assert min(d_n) < max(d_n) or min(d_n) == 0.0


def test_registered_task_interface(tmp_path):
    calls = []

    def run(block, *, backend, dtype, memory_budget):
        calls.append((block.n, dtype, memory_budget))
        return [{"repeat": r, "inv_temperature": it, "learning_rate": lr, "distance": float(block.n + i + j)}
                for r, i, j, it, lr in block.cells()]

    ex.register_task("toy", run)
    try:
        blocks = [ex.Block("toy", "normalized", n, "coarse", (1.0, 2.0), (0.1,), 2) for n in (1, 2)]
        path = ex.run_sweep("toy", "p", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False,
                            memory_budget=2**20)
        recs = ex.load_records(path, blocks=blocks)
        assert len(recs) == 8 and {r["task"] for r in recs} == {"toy"}
        assert calls == [(1, "float64", 2**20), (2, "float64", 2**20)]
        ex.run_sweep("toy", "p", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False)
        assert len(calls) == 2  # nothing recomputed on resume
        table = ex.heatmap_table(recs, "normalized", 2, "coarse")
        assert table[2].shape == (2, 1) and table[2][0, 0] == 2.0
    finally:
        ex.TASKS.pop("toy")


def test_good_region_finds_the_optimum():
    its, lrs = np.array([0.1, 1.0, 10.0]), np.array([0.01, 0.1])
    z = np.array([[9.0, 9.0], [0.2, 0.0], [0.4, 5.0]])
    g = ex.good_region((its, lrs, z), tolerance=0.5)
    assert g["best"] == 0.0 and g["best_inv_temperature"] == 1.0 and g["best_learning_rate"] == 0.1
    assert g["good_fraction"] == pytest.approx(3 / 6)
    assert (g["good_inv_temperature_min"], g["good_inv_temperature_max"]) == (1.0, 10.0)


def test_partial_line_is_dropped_and_resumed(tmp_path):
    blocks = _smoke()[:2]
    path = ex.run_sweep("autoassociative", "smoke", blocks=blocks[:1], out_dir=tmp_path, backend="numpy", progress=False)
    with open(path, "ab") as fh:
        fh.write(b'{"key": "cut sho')  # a write killed half-way
    ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["key"] for line in lines)


def _cli(out, *extra):
    return [sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out", str(out),
            "--backend", "numpy", "--no-progress", *extra]


@pytest.mark.slow
def test_sigkill_then_resume_is_identical_to_an_uninterrupted_run(tmp_path):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    subprocess.run(_cli(clean), check=True, env=ENV, cwd=ROOT, capture_output=True, timeout=120)
    path = ex.results_path(killed, "autoassociative", "smoke")
    proc = subprocess.Popen(_cli(killed), env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not (path.exists() and path.read_bytes().count(b"\n") >= 1):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_before = path.read_bytes().count(b"\n")
    assert 1 <= n_before < len(_smoke()), "the kill should land mid-sweep"
    subprocess.run(_cli(killed), check=True, env=ENV, cwd=ROOT, capture_output=True, timeout=120)
    blocks = _smoke()
    a = _strip(ex.load_records(clean, "autoassociative", "smoke", blocks=blocks))
    b = _strip(ex.load_records(killed, "autoassociative", "smoke", blocks=blocks))
    assert len(a) == sum(bl.n_networks for bl in blocks) and a == b
    prov = ex.load_provenance(path)
    assert {"damlite", "git_commit", "backend", "device", "date", "seconds", "seed", "memory_budget"} <= set(prov[0])


def test_dask_executor_matches_in_process(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    blocks = _smoke()[:3]
    local = ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path / "a", backend="numpy",
                         progress=False)
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path / "b", backend="numpy",
                              progress=False, executor=client.get_executor())
    assert _strip(ex.load_records(local, blocks=blocks)) == _strip(ex.load_records(remote, blocks=blocks))


def test_cli_help_and_summarize(tmp_path):
    out = subprocess.run([sys.executable, "-m", "damlite", "--help"], env=ENV, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "sweep" in out.stdout and "summarize" in out.stdout
    path = ex.run_sweep("autoassociative", "smoke", blocks=_smoke()[:2], out_dir=tmp_path, backend="numpy", progress=False)
    out = subprocess.run([sys.executable, "-m", "damlite", "summarize", str(path), "--json"], env=ENV, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)
    assert {r["variant"] for r in rows} == {"original", "normalized"} and all(0 < r["good_fraction"] <= 1 for r in rows)


def test_profile_selection(monkeypatch):
    monkeypatch.setenv("DAMLITE_PROFILE", "smoke")
    assert ex.profile_name() == "smoke" and ex.profile_name("full") == "full"
    full = ex.profile_blocks("autoassociative", "full")
    ns = {(b.variant, b.options["N"]): sorted({x.n for x in full if (x.variant, x.options["N"]) == (b.variant, b.options["N"])})
          for b in full}
    assert ns[("original", 100)] == [2, 3, 5, 10, 20, 30]
    assert ns[("normalized", 100)] == [2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100]
    assert ns[("original", 250)] == ns[("normalized", 250)] == [2, 3, 5, 10, 20, 30]
    assert {b.repeats for b in full} == {5} and len({b.key for b in full}) == len(full)


def test_process_pool_matches_in_process(tmp_path):
    blocks = _smoke()[:2]
    a = ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path / "a", backend="numpy", progress=False)
    b = ex.run_sweep("autoassociative", "smoke", blocks=blocks, out_dir=tmp_path / "b", backend="numpy", progress=False,
                     workers=2)
    assert _strip(ex.load_records(a, blocks=blocks)) == _strip(ex.load_records(b, blocks=blocks))
