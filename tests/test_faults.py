"""Interrupts and faults lose no finished work, and every message is one true line (2026-11-26, commit 4031b94).

Each test failed before the fix it names. The signal tests run a toy task on the real engine and
CLI (`TOY`, below): blocks that sleep, fail or allocate as told, and leave a marker file when they
start, so a test can see which blocks ran.
"""
from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from procs import child_pids

from damlite import __main__ as cli
from damlite.sweeps import experiments as ex

ROOT = Path(__file__).resolve().parents[1]
#: A commit for the provenance where git cannot give one (a CI container's checkout owned by another user),
#: so that the one-line stderr these tests expect holds there too; git's own answer wins where it has one.
#: A placeholder: DAMLITE_GIT_COMMIT takes only a full commit hash.
ENV = {**os.environ, "DAMLITE_BACKEND": "numpy", "DAMLITE_QUIET": "1",
       "DAMLITE_GIT_COMMIT": os.environ.get("DAMLITE_GIT_COMMIT") or "0" * 40}

#: A toy task "toy", profile "p": block n sleeps TOY_SLEEPS[n-1] seconds; blocks in TOY_FAIL raise
#: ValueError after their sleep; blocks in TOY_OOM raise MemoryError (a real failed allocation).
TOY = """
import os, signal, sys, time
import numpy as np
from damlite.sweeps import experiments as ex
from damlite import __main__ as cli

def run(block, *, backend, dtype, memory_budget):
    marks = os.environ.get("TOY_MARKS")
    if marks:
        open(os.path.join(marks, f"started-{block.n}"), "w").close()
    time.sleep(block.options["sleep"])
    if block.n in ex_fail:
        raise ValueError(f"toy failure in block {block.n}")
    if block.n in ex_oom:
        np.empty(2**62, dtype=np.uint8)
    return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": float(block.n)}
            for r, _, _, t, lr in block.cells()]

def ints(name):
    return {int(x) for x in os.environ.get(name, "").split(",") if x}

ex_fail, ex_oom = ints("TOY_FAIL"), ints("TOY_OOM")
# a sweep started from a terminal, however pytest was started: a shell starts a background job with
# SIGINT ignored, its children inherit that, and a sweep keeps an ignored SIGINT ignored
signal.signal(signal.SIGINT, signal.SIG_IGN if os.environ.get("TOY_SIGINT_IGNORED")
              else signal.default_int_handler)
if os.environ.get("TOY_MASK_MAIN"):  # only a helper thread can take SIGINT: the main thread blocks it
    import threading
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
sleeps = [float(x) for x in os.environ["TOY_SLEEPS"].split(",")]
ex.register_task("toy", run, profiles={"p": lambda: [
    ex.Block("toy", "normalized", n, "g", (1.0,), (0.1,), 1, settings=(("sleep", s),))
    for n, s in enumerate(sleeps, start=1)]})
sys.exit(cli.main(["sweep", "toy", "--profile", "p", "--backend", "numpy", *sys.argv[1:]]))
"""


def _toy(out, sleeps, *args, fail="", oom="", marks=None, mask_main=False, sigint_ignored=False, **popen):
    env = {**ENV, "TOY_SLEEPS": ",".join(map(str, sleeps)), "TOY_FAIL": fail, "TOY_OOM": oom,
           "TOY_MARKS": str(marks or ""), "TOY_MASK_MAIN": "1" if mask_main else "",
           "TOY_SIGINT_IGNORED": "1" if sigint_ignored else ""}
    return subprocess.Popen([sys.executable, "-c", TOY, "--out", str(out), *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _lines(path):
    return ex.read_results(path, warn=False) if path.exists() else []


def _wait_for_lines(path, n, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and len(_lines(path)) < n:
        time.sleep(0.05)
    assert len(_lines(path)) >= n, f"the sweep did not write {n} blocks in {timeout} s"


def _alive(pids):
    alive = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.append(pid)
        except OSError:
            pass
    return alive


# --------------------------------------------------------------------- 1. interrupts
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("sig, to_group", [(signal.SIGINT, True), pytest.param(signal.SIGINT, False, marks=pytest.mark.slow),
                                           pytest.param(signal.SIGTERM, True, marks=pytest.mark.slow)])
def test_a_signal_with_two_workers_keeps_finished_blocks_and_exits_at_once(tmp_path, sig, to_group):
    """Blocks 1 and 2 finish, 3 and 4 run for a minute: the signal keeps 1 and 2, stops 3 and 4 at once."""
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.2, 0.2, 60, 60, 60], "--workers", "2", "--no-progress", start_new_session=True)
    _wait_for_lines(path, 2, proc)
    deadline = time.time() + 30
    while time.time() < deadline and len(child_pids(proc.pid)) < 2:
        time.sleep(0.05)
    workers = child_pids(proc.pid)
    time.sleep(0.3)  # blocks 3 and 4 are running
    start = time.time()
    os.killpg(proc.pid, sig) if to_group else proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    took = time.time() - start
    assert took < 5, f"exited {took:.1f} s after the signal"
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert err.strip().splitlines() == [
        f"damlite: interrupted; 2 finished blocks kept (2/5 done in {path}), rerun the same command to resume"]
    assert "Traceback" not in out + err
    assert sorted(line["block"]["n"] for line in _lines(path)) == [1, 2]
    with open(str(path) + ".lock") as fh:  # the lock is released
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    time.sleep(0.5)
    assert not _alive(workers), "a worker outlived the interrupted sweep"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs pthread_sigmask")
def test_a_signal_that_another_thread_takes_still_stops_the_sweep_at_once(tmp_path):
    """Linux hands a process's signal to any thread that does not block it. Here only a helper thread can
    take SIGINT, so the signal never interrupts the main thread's wait for a block: the sweep must
    still act on it within a moment, not when a running block finishes."""
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.2, 0.2, 60, 60, 60], "--workers", "2", "--no-progress", mask_main=True,
                start_new_session=True)
    _wait_for_lines(path, 2, proc)
    time.sleep(0.3)  # blocks 3 and 4 are running
    start = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert time.time() - start < 5, f"exited {time.time() - start:.1f} s after the signal"
    assert proc.returncode == 128 + signal.SIGINT, (proc.returncode, err)
    assert "Traceback" not in out + err
    assert sorted(line["block"]["n"] for line in _lines(path)) == [1, 2]


@pytest.mark.slow
def test_a_sweep_started_with_sigint_ignored_keeps_running_on_sigint(tmp_path):
    """A background job's SIGINT is ignored from its start (the shell does so); the sweep keeps it ignored
    and finishes every block, while SIGTERM still stops it."""
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.2, 0.2, 1.5, 1.5], "--workers", "2", "--no-progress", sigint_ignored=True,
                start_new_session=True)
    _wait_for_lines(path, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (proc.returncode, err)
    assert sorted(line["block"]["n"] for line in _lines(path)) == [1, 2, 3, 4]


@pytest.mark.slow
def test_a_second_ctrl_c_never_hangs(tmp_path):
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.2, 0.2, 60, 60], "--workers", "2", start_new_session=True)  # progress bar on
    _wait_for_lines(path, 2, proc)
    time.sleep(0.3)
    start = time.time()
    for gap in (0.0, 0.02, 0.05):
        time.sleep(gap)
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:  # already gone
            break
    out, err = proc.communicate(timeout=60)
    assert time.time() - start < 5
    assert proc.returncode in (130, -signal.SIGINT)  # the last Ctrl-C may end the process itself
    assert "Traceback" not in out + err and "2 finished blocks kept" in err
    assert len(_lines(path)) == 2


def test_ctrl_c_in_process_keeps_what_finished(tmp_path):
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.1, 60], "--no-progress", start_new_session=True)
    _wait_for_lines(path, 1, proc)
    time.sleep(0.2)
    start = time.time()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert time.time() - start < 5 and proc.returncode == 128 + signal.SIGTERM
    assert "1 finished block kept (1/2 done" in err and "Traceback" not in err
    assert len(_lines(path)) == 1


@pytest.mark.slow
def test_workers_ignore_sigint():
    """The pool initialiser (run here, in a child process) leaves Ctrl-C to the sweep."""
    code = ("import os, signal, time\n"
            "from damlite.sweeps.experiments import _worker_init\n"
            "_worker_init()\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "time.sleep(0.1)\n"
            "print('alive')\n")
    out = subprocess.run([sys.executable, "-c", code], env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "alive", out.stderr


# --------------------------------------------------------------------- 2. failures
def test_a_failing_block_keeps_the_running_one_and_starts_no_other(tmp_path):
    """Block 2 fails at once while block 1 runs: block 1 is written, blocks 3 and 4 never start."""
    marks = tmp_path / "marks"
    marks.mkdir()
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [3.0, 0.0, 0.0, 0.0], "--workers", "2", "--no-progress", fail="2", marks=marks)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert [line["block"]["n"] for line in _lines(path)] == [1]
    assert sorted(p.name for p in marks.iterdir()) == ["started-1", "started-2"]
    errors = [line for line in err.splitlines() if line.startswith("damlite: error:")]
    assert len(errors) == 1 and "Traceback" not in err
    assert "block 2/4 (normalized n=2 g float64) failed: ValueError: toy failure in block 2" in errors[0]
    assert "1 finished block written" in errors[0] and "2 not started" in errors[0]


def test_keep_going_runs_every_other_block(tmp_path):
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.3, 0.0, 0.0, 0.0], "--workers", "2", "--no-progress", "--keep-going", fail="2")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in err
    assert sorted(line["block"]["n"] for line in _lines(path)) == [1, 3, 4]
    assert "block 2/4" in err and "3 finished blocks written" in err


def test_a_failure_in_process_stops_and_keeps_what_finished(tmp_path):
    def run(block, *, backend, dtype, memory_budget):
        if block.n == 2:
            raise RuntimeError("boom")
        return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": 0.0}
                for r, _, _, t, lr in block.cells()]

    ex.register_task("toy_inproc", run)
    try:
        blocks = [ex.Block("toy_inproc", "normalized", n, "g", (1.0,), (0.1,), 1) for n in (1, 2, 3)]
        with pytest.raises(ex.SweepFailed, match=r"block 2/3 .* failed: RuntimeError: boom.*1 not started") as info:
            ex.run_sweep("toy_inproc", "p", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False)
        assert info.value.kept == 1 and [b.n for b, _ in info.value.failed] == [2]
        path = ex.results_path(tmp_path, "toy_inproc", "p")
        assert [line["block"]["n"] for line in ex.read_results(path)] == [1]
        with pytest.raises(ex.SweepFailed):
            ex.run_sweep("toy_inproc", "p", blocks=blocks, out_dir=tmp_path, backend="numpy", progress=False,
                         keep_going=True)
        assert sorted(line["block"]["n"] for line in ex.read_results(path)) == [1, 3]
    finally:
        ex.TASKS.pop("toy_inproc")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_killed_worker_is_one_line_and_finished_blocks_are_kept(tmp_path):
    path = tmp_path / "toy-p.jsonl"
    proc = _toy(tmp_path, [0.1, 60, 60], "--workers", "2", "--no-progress")
    _wait_for_lines(path, 1, proc)
    deadline = time.time() + 30
    while time.time() < deadline and len(child_pids(proc.pid)) < 2:
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(child_pids(proc.pid)[0], signal.SIGKILL)  # the out-of-memory killer, say
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "a worker process died" in err
    assert len(_lines(path)) == 1


def test_an_allocation_failure_is_one_line(tmp_path):
    proc = _toy(tmp_path, [0.0, 0.0], "--no-progress", oom="1")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "MemoryError" in err and "--memory-budget" in err


# ---------------------------------------------------------- 4. result lines validated
@pytest.fixture(scope="module")
def smoke_lines(tmp_path_factory):
    """Three finished blocks of the autoassociative smoke profile, as written by a sweep."""
    out = tmp_path_factory.mktemp("smoke")
    path = ex.run_sweep("autoassociative", "smoke", out_dir=out, backend="numpy", progress=False, max_blocks=3)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _as_task(line, task):
    line = json.loads(json.dumps(line))
    line["block"]["task"] = task
    line["key"] = ex.Block.from_json(line["block"]).key
    for rec in line["records"]:
        rec["task"] = task
    return line


def _bad_lines(good):
    no_profile = {k: v for k, v in good.items() if k != "profile"}
    wrong_cell = json.loads(json.dumps(good))
    wrong_cell["records"][0]["inv_temperature"] = 123.0
    no_metric = json.loads(json.dumps(good))
    del no_metric["records"][3]["distance"]
    return {
        "only a key": ({"key": good["key"]}, "'block' is missing"),
        "no records": ({**good, "records": []}, "0 records where its block has 8 networks"),
        "another task": (_as_task(good, "mnist"), "a block of task 'mnist', not 'autoassociative'"),
        "another profile": ({**good, "profile": "quick"}, "a line of profile 'quick', not 'smoke'"),
        "a foreign key": ({**no_profile, "key": good["key"] + "x"}, "'key' is not its block's key"),
        "a wrong cell": (wrong_cell, "record 0 is not network 0"),
        "no metric": (no_metric, "record 3 has no 'distance'"),
    }


@pytest.mark.parametrize("case", ["only a key", "no records", "another task", "another profile", "a foreign key",
                                  "a wrong cell", "no metric"])
def test_a_line_that_is_not_its_blocks_line_is_warned_and_not_done(tmp_path, smoke_lines, case):
    bad, message = _bad_lines(smoke_lines[0])[case]
    path = _write(tmp_path / "autoassociative-smoke.jsonl", [smoke_lines[1], bad])
    with pytest.warns(UserWarning, match=rf"autoassociative-smoke.jsonl:2: .*{message}.*not counted") as rec:
        keys = [line["key"] for line in ex.read_results(path)]
    assert len(rec) == 1 and keys == [smoke_lines[1]["key"]]
    out = subprocess.run([sys.executable, "-m", "damlite", "list", "autoassociative", "--profile", "smoke",
                          "--out", str(tmp_path)], env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.count("done ") == 1
    assert out.stderr.count("damlite: warning:") == 1 and len(out.stderr.strip().splitlines()) == 1


def test_a_block_of_another_profile_is_not_summarized(tmp_path, smoke_lines):
    """A smoke line, without the profile field that older lines lack, in the quick profile's file."""
    stray = {k: v for k, v in smoke_lines[0].items() if k != "profile"}
    path = _write(tmp_path / "autoassociative-quick.jsonl", [stray])
    with pytest.warns(UserWarning, match="not a block of autoassociative's profile 'quick'"):
        assert ex.load_records(path) == []


def test_summarize_mixed_and_failed_blocks_without_a_traceback(tmp_path, smoke_lines):
    failed = json.loads(json.dumps(smoke_lines[1]))  # every network overflowed
    for rec in failed["records"]:
        rec.update(distance=None, exact_fraction=None, final_loss=None, finite=False)
    lines = [smoke_lines[0], _as_task(smoke_lines[2], "mnist"), {"key": "x"}, failed]
    path = _write(tmp_path / "autoassociative-smoke.jsonl", lines)
    out = subprocess.run([sys.executable, "-m", "damlite", "summarize", str(path)], env=ENV, cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("damlite: warning:") == 2
    rows = [line.split() for line in out.stdout.splitlines()[1:] if line.strip().startswith("16")]
    assert sorted((r[1], r[5]) for r in rows) == [("normalized", "nan"), ("original", "0.000")]
    assert "every network of that row failed" in out.stdout
    renamed = _write(tmp_path / "renamed.jsonl", lines)  # no task in the name: the first line's task
    out = subprocess.run([sys.executable, "-m", "damlite", "summarize", str(renamed), "--json"], env=ENV, cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and len(json.loads(out.stdout)) == 2 and "'mnist'" in out.stderr


def test_good_region_of_a_block_whose_networks_all_failed():
    g = ex.good_region((np.array([0.1, 1.0]), np.array([0.01]), np.full((2, 1), np.nan)))
    assert np.isnan(g["best"]) and g["good_fraction"] == 0.0 and np.isnan(g["good_inv_temperature_center"])


def test_lines_carry_their_profile(tmp_path, smoke_lines):
    assert {line["profile"] for line in smoke_lines} == {"smoke"}
    assert list(smoke_lines[0])[0] == "key"  # first, so that a torn line can be recognised


# ------------------------------------------------------------- 5. true, one-line messages
def test_a_torn_record_is_removed_and_said_truly(tmp_path, smoke_lines):
    path = _write(tmp_path / "autoassociative-smoke.jsonl", smoke_lines[:1])
    with open(path, "ab") as fh:
        fh.write(json.dumps(smoke_lines[1]).encode()[:300])
    said = []
    ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path, backend="numpy", progress=False, max_blocks=0,
                 say=said.append)
    assert path.read_bytes() == json.dumps(smoke_lines[0]).encode() + b"\n"
    assert len(said) == 1 and "removed an unfinished last line (300 bytes" in said[0]
    assert "kill" not in said[0] and "runs again" not in said[0]


def test_a_last_line_that_is_no_record_is_kept_not_deleted(tmp_path, smoke_lines):
    path = _write(tmp_path / "autoassociative-smoke.jsonl", smoke_lines[:1])
    with open(path, "ab") as fh:
        fh.write(b"a note someone typed")
    said = []
    with pytest.warns(UserWarning, match="smoke.jsonl:2: not a result line"):  # kept, and skipped by readers
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path, backend="numpy", progress=False, max_blocks=0,
                     say=said.append)
    assert path.read_bytes().endswith(b"\na note someone typed\n")
    assert len(said) == 1 and "line 2 has no newline and is not a result line; kept" in said[0]
    assert "removed" not in said[0] and "runs again" not in said[0]


def _limit_file_size(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def test_a_file_size_limit_names_the_file_and_leaves_no_torn_line(tmp_path, smoke_lines):
    cmd = [sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out", str(tmp_path),
           "--backend", "numpy", "--no-progress"]
    path = ex.results_path(tmp_path, "autoassociative", "smoke")
    limit = sum(len(json.dumps(line, separators=(",", ":"))) + 1 for line in smoke_lines[:2]) + 100
    # the kernels this sweep runs compiled and cached first: under the limit numba could not write its cache
    # either, and would say so in a line of its own
    ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path / "warm", backend="numpy", progress=False)
    out = subprocess.run(cmd, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         preexec_fn=_limit_file_size(limit))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert f"cannot write to {path}: File too large" in out.stderr and "ulimit -f" in out.stderr
    assert path.read_bytes().endswith(b"\n") and len(ex.read_results(path)) == 2  # the partial line taken back
    again = subprocess.run(cmd, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert "removed" not in again.stdout + again.stderr and len(ex.read_results(path)) == 6


def test_a_write_error_with_workers_stops_them_at_once(tmp_path):
    """The first block cannot be written: the sweep ends now, not when the running block would finish."""
    path = tmp_path / "toy-p.jsonl"
    start = time.time()
    proc = _toy(tmp_path, [0.1, 60, 60], "--workers", "2", "--no-progress", preexec_fn=_limit_file_size(100))
    out, err = proc.communicate(timeout=120)
    assert time.time() - start < 30 and proc.returncode == 2
    assert err.strip().splitlines() == [
        f"damlite: error: cannot write to {path}: File too large; the file size limit is reached (ulimit -f): raise "
        f"it, then rerun the same command to resume (the blocks already in the file are kept)"]
    assert path.read_bytes() == b""


def test_a_write_error_names_the_file_and_takes_back_a_partial_line(tmp_path, monkeypatch):
    path = tmp_path / "t-p.jsonl"
    path.write_bytes(b'{"key":"a"}\n')
    real, calls = os.write, []

    def full_disk(fd, data):  # the first write gets 10 bytes onto the disk, the next finds it full
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ex.os, "write", full_disk)
    with pytest.raises(ex.ResultFileError, match=rf"cannot write to {path}: No space left on device; the disk is full"):
        ex._append_line(path, {"key": "b"})
    monkeypatch.undo()
    assert path.read_bytes() == b'{"key":"a"}\n' and len(calls) == 2


def test_memory_budget_units_are_mib():
    with pytest.raises(ValueError, match=r"--memory-budget is in MiB: 1e-07 MiB is 0.105 bytes"):
        cli._memory_budget_bytes(1e-7)
    assert cli._memory_budget_bytes(1.5) == 3 * 2**19


def test_only_matching_nothing_is_an_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke",
                          "--out", str(tmp_path), "--only", "nosuchterm", "--no-progress"], env=ENV, cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--only 'nosuchterm' matches none of the 6 blocks" in out.stderr
    assert not any(tmp_path.iterdir())


def test_closed_stderr_with_a_progress_bar_still_writes_results(tmp_path):
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out",
                          str(tmp_path), "--max-blocks", "1"], env=ENV, cwd=ROOT, stdout=subprocess.PIPE,
                         text=True, timeout=120, preexec_fn=lambda: os.close(2))
    assert out.returncode == 0 and "1/6 blocks done" in out.stdout
    assert len(ex.read_results(ex.results_path(tmp_path, "autoassociative", "smoke"))) == 1


def test_missing_git_is_warned(tmp_path):
    env = {**ENV, "PATH": str(tmp_path)}  # no git on PATH
    env.pop("DAMLITE_GIT_COMMIT", None)
    out = subprocess.run([sys.executable, "-m", "damlite", "sweep", "autoassociative", "--profile", "smoke", "--out",
                          str(tmp_path), "--max-blocks", "1", "--no-progress"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert out.stderr.strip() == ("damlite: warning: no git commit will be recorded in the provenance (no git on "
                                  "PATH); set DAMLITE_GIT_COMMIT to the commit of this code to record one")


def test_git_refusing_the_checkout_is_warned(tmp_path, monkeypatch):
    def refuse(cmd, **kw):
        return subprocess.CompletedProcess(cmd, 128, "", "fatal: detected dubious ownership in repository at '/x'\n")

    def run(block, *, backend, dtype, memory_budget):
        return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": 0.0}
                for r, _, _, t, lr in block.cells()]

    monkeypatch.setattr(ex.subprocess, "run", refuse)
    monkeypatch.delenv("DAMLITE_GIT_COMMIT", raising=False)
    ex._git_info.cache_clear()
    ex.register_task("toy_git", run)
    try:
        assert ex.git_state() == (None, None)
        assert ex.git_problem() == "git said: detected dubious ownership in repository at '/x'"
        with pytest.warns(UserWarning, match=r"no git commit will be recorded in the provenance \(git said: "
                                             r"detected dubious ownership"):
            ex.run_sweep("toy_git", "p", blocks=[ex.Block("toy_git", "normalized", 1, "g", (1.0,), (0.1,), 1)],
                         out_dir=tmp_path, backend="numpy", progress=False)
        monkeypatch.setenv("DAMLITE_GIT_COMMIT", "abc" + "0" * 37)
        ex._git_info.cache_clear()
        assert ex.git_state() == ("abc" + "0" * 37, None) and ex.git_problem() is None
    finally:
        ex.TASKS.pop("toy_git")
        monkeypatch.undo()
        ex._git_info.cache_clear()


def test_provenance_never_takes_the_checkouts_index_lock(monkeypatch):
    """`git status` refreshes (writes) the index under index.lock unless told not to; a sweep killed then
    (or one under `ulimit -f`) left a stale lock that blocked every git command in the checkout."""
    calls = []

    def record(cmd, **kw):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, f"{ROOT}\n" if "--show-toplevel" in cmd else "0" * 40 + "\n", "")

    monkeypatch.setattr(ex.subprocess, "run", record)
    ex._git_info.cache_clear()
    try:
        ex.git_state()
    finally:
        monkeypatch.undo()
        ex._git_info.cache_clear()
    status = [c for c in calls if "status" in c]
    assert status and all("--no-optional-locks" in c[:c.index("status")] for c in status)


@pytest.mark.parametrize("command", ["list", "sweep", "summarize"])
def test_a_fifo_is_refused_not_read(tmp_path, command):
    fifo = tmp_path / "autoassociative-smoke.jsonl"
    os.mkfifo(fifo)
    args = {"list": ["list", "autoassociative", "--profile", "smoke", "--out", str(tmp_path)],
            "sweep": ["sweep", "autoassociative", "--profile", "smoke", "--out", str(tmp_path), "--no-progress"],
            "summarize": ["summarize", str(fifo)]}[command]
    out = subprocess.run([sys.executable, "-m", "damlite", *args], env=ENV, cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and out.stderr.strip() == (
        f"damlite: error: {fifo} is a FIFO, not a regular file; move it away or choose another --out for the "
        f"result file")


def test_dangling_symlinks_say_so(tmp_path):
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ex.ResultFileError, match=r"out is a symbolic link to .*nowhere, which does not exist"):
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path / "out", backend="numpy", progress=False)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "autoassociative-smoke.jsonl").symlink_to(tmp_path / "gone" / "x.jsonl")
    with pytest.raises(ex.ResultFileError, match=r"autoassociative-smoke.jsonl is a symbolic link to .*gone/x.jsonl"):
        ex.run_sweep("autoassociative", "smoke", out_dir=tmp_path / "d", backend="numpy", progress=False)
    with pytest.raises(ex.ResultFileError, match="which does not exist"):
        ex.read_results(tmp_path / "d" / "autoassociative-smoke.jsonl")


def test_the_cli_prints_warnings_in_one_line(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        cli._one_line_warning(UserWarning("something odd"), UserWarning, "x.py", 1)
    assert capsys.readouterr().err == "damlite: warning: something odd\n"
