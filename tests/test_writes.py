"""Nothing damlite writes destroys what it did not make; nothing impossible it reads is graded (issue 46).

Writers replace only their own kind of file: ``scorecard --out`` refuses a result file, a directory, a
device, a FIFO, a symbolic link; keeps the old card's permissions; leaves no temporary file on any way
out. Lock files are never followed through a link nor truncated when damlite did not make them; result
files that are links are refused. Readers refuse a record its task cannot produce, naming file, line,
block and field, unless told to skip it. Each test here ran against the code before the fix and failed.
"""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import warnings
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace

import pytest

from damlite import __main__ as cli
from damlite.paper import scorecard
from damlite.sweeps import experiments as ex
from damlite.sweeps import validate
from damlite.sweeps.resultfiles import ResultFileError

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "DAMLITE_BACKEND": "numpy", "DAMLITE_QUIET": "1"}
TOY = "writetoy"
CARD = {"rules": [], "claims": []}


def _aa_line(distance=3.0, exact=0.5, finite=True, N=4, key_ok=True, **rec_extra):
    """One well-formed autoassociative line (N = 4, one network) with the given numbers."""
    block = ex.Block("autoassociative", "normalized", 2, "g", (1.0,), (0.1,), 1,
                     settings=(("N", N), ("epochs", 10), ("max_sweeps", 5)))
    rec = {**block.identity(), "repeat": 0, "i_T": 0, "i_lr": 0, "inv_temperature": 1.0, "learning_rate": 0.1,
           "distance": distance, "exact_fraction": exact, "converged_fraction": 1.0, "finite": finite,
           "failed_epoch": -1, "sweeps": 2, **rec_extra}
    return {"key": block.key, "block": block.to_json(), "provenance": {"seconds": 0.0}, "records": [rec]}


def _mnist_line(f1=0.5, accuracy=0.6):
    block = ex.Block("mnist", "normalized", 2, "g", (1.0,), (0.1,), 1, settings=(("epochs", 10),))
    rec = {**block.identity(), "repeat": 0, "i_T": 0, "i_lr": 0, "inv_temperature": 1.0, "learning_rate": 0.1,
           "f1": f1, "accuracy": accuracy, "f1_curve": [0.1, f1], "finite": True, "failed_epoch": -1}
    return {"key": block.key, "block": block.to_json(), "provenance": {"seconds": 0.0}, "records": [rec]}


def _write(path, *lines):
    path.write_text("".join(json.dumps(line, allow_nan=True) + "\n" for line in lines))
    return path


def _one_line_error(capsys, code, want, rc=2):
    err = capsys.readouterr().err.strip().splitlines()
    assert code == rc and len(err) == 1 and err[0].startswith("damlite: error: "), err
    assert want in err[0], err[0]
    return err[0]


@pytest.fixture
def toy():
    """Task TOY, profile "p": two one-network blocks with distance 0."""
    blocks = [ex.Block(TOY, "normalized", n, "g", (1.0,), (0.1,), 1) for n in (1, 2)]

    def run(block, **_):
        return [{"repeat": r, "inv_temperature": t, "learning_rate": lr, "distance": 0.0}
                for r, _, _, t, lr in block.cells()]
    ex.register_task(TOY, run, profiles={"p": lambda: blocks})
    yield blocks
    ex.TASKS.pop(TOY, None)


def _sweep(out):
    return ex.run_sweep(TOY, "p", out_dir=out, backend="numpy", progress=False, say=lambda _: None)


# ----------------------------------------------------------- 1. the scorecard replaces only a scorecard
def test_scorecard_out_refuses_a_result_file_before_any_work(tmp_path, capsys, monkeypatch):
    result = _write(tmp_path / "autoassociative-full.jsonl", _aa_line(), _aa_line(distance=2.0, exact=0.5))
    before = result.read_bytes()
    monkeypatch.setattr(scorecard, "build", lambda *a, **k: pytest.fail("graded before checking --out"))
    code = cli.main(["scorecard", "--results", str(tmp_path), "--out", str(result)])
    _one_line_error(capsys, code, "is a result file")
    assert result.read_bytes() == before
    with pytest.raises(OSError, match="refusing to write the scorecard .* result file"):
        scorecard.write(CARD, result)
    assert result.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [result.name]


def test_scorecard_out_refuses_a_directory_a_fifo_a_link_and_a_foreign_json(tmp_path):
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    target = _write(tmp_path / "notes.json", {"mine": 1})
    (tmp_path / "link").symlink_to(tmp_path / "card.json")
    for name, want in (("dir", "is a directory"), ("fifo", "is a FIFO"), ("link", "is a symbolic link"),
                       ("notes.json", "not a scorecard")):
        with pytest.raises(OSError, match=want) as err:
            scorecard.write(CARD, tmp_path / name)
        assert "\n" not in str(err.value)
    assert json.loads(target.read_text()) == {"mine": 1}
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "card.json").exists()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def test_a_device_is_not_a_scorecard():
    """As root `--out /dev/null` replaced the device by a file: the check refuses a device (checked,
    not written: were it wrong, the test would replace /dev/null)."""
    why = scorecard._what_is(Path("/dev/null"), os.lstat("/dev/null"))
    assert why and why.startswith("is a device")


def test_the_card_keeps_the_old_cards_mode_and_a_new_one_gets_the_umask(tmp_path):
    path = tmp_path / "scorecard.json"
    scorecard.write(CARD, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~scorecard._umask()
    os.chmod(path, 0o640)
    scorecard.write({**CARD, "x": 1}, path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640 and json.loads(path.read_text())["x"] == 1


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_no_temporary_file_survives_an_interrupted_fsync(tmp_path, monkeypatch, how):
    path = tmp_path / "scorecard.json"
    scorecard.write(CARD, path)
    real = os.fsync

    def interrupted(fd):
        if how == "ctrl-c":
            raise KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)  # the handler raises at the next bytecode
        real(fd)
    monkeypatch.setattr(os, "fsync", interrupted)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with pytest.raises(KeyboardInterrupt):
        scorecard.write({**CARD, "x": 1}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scorecard.json"]
    assert json.loads(path.read_text()) == CARD
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_read_only_folder_fails_fast_naming_scorecard_json(tmp_path, capsys, monkeypatch):
    import errno
    import tempfile

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    monkeypatch.setattr(scorecard, "build", lambda *a, **k: pytest.fail("graded before checking --out"))
    line = _one_line_error(capsys, cli.main(["scorecard", "--results", str(tmp_path)]), "scorecard.json")
    assert "Read-only file system" in line and ".tmp" not in line


def test_results_that_is_not_a_directory_says_so(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    _one_line_error(capsys, cli.main(["scorecard", "--results", str(tmp_path / "f")]), "is a file, not a directory")
    _one_line_error(capsys, cli.main(["scorecard", "--results", str(tmp_path / "none")]), "no such directory")


# ------------------------------------------------------------- 1. locks and result files: no links
def test_a_planted_lock_symlink_is_refused_and_its_target_untouched(tmp_path, toy):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / f"{TOY}-p.jsonl.lock").symlink_to(victim)
    with pytest.raises(ResultFileError, match="lock.* symbolic link|symbolic link.*lock"):
        _sweep(tmp_path)
    assert victim.read_text() == "precious\n"


def test_a_lock_that_is_a_directory_says_lock(tmp_path, toy):
    (tmp_path / f"{TOY}-p.jsonl.lock").mkdir()
    with pytest.raises(ResultFileError, match="is a directory where the sweep keeps its lock file"):
        _sweep(tmp_path)


def test_a_lock_file_damlite_did_not_make_is_never_truncated(tmp_path, toy):
    lock = tmp_path / f"{TOY}-p.jsonl.lock"
    lock.write_text("someone else's notes\n")
    _sweep(tmp_path)
    assert lock.read_text() == "someone else's notes\n"
    assert len(ex.read_results(tmp_path / f"{TOY}-p.jsonl")) == 2


def test_a_lock_file_damlite_made_gets_the_holders_pid(tmp_path, toy):
    _sweep(tmp_path)
    assert (tmp_path / f"{TOY}-p.jsonl.lock").read_text() == f"pid {os.getpid()}"


def test_a_result_file_that_is_a_symlink_or_a_hard_link_is_refused(tmp_path, toy):
    other = tmp_path / "other.txt"
    other.write_text("unrelated\n")
    path = tmp_path / f"{TOY}-p.jsonl"
    path.symlink_to(other)
    with pytest.raises(ResultFileError, match="is a symbolic link"):
        _sweep(tmp_path)
    path.unlink()
    os.link(other, path)
    with pytest.raises(ResultFileError, match="has 2 names \\(hard links\\)"):
        _sweep(tmp_path)
    assert other.read_text() == "unrelated\n"


# ------------------------------------------------------------------ 2. readers refuse the impossible
@pytest.mark.parametrize("line, field", [
    (_aa_line(distance=-5.0), "'distance' is -5, outside [0, 4]"),
    (_aa_line(distance=1e9), "'distance' is 1000000000, outside [0, 4]"),
    (_aa_line(exact=1.5), "'exact_fraction' is 1.5, outside [0, 1]"),
    (_aa_line(converged_fraction=-0.1), "'converged_fraction' is -0.1"),
    (_aa_line(distance=None), "'distance' is None where 'finite' is true"),
    (_aa_line(distance=float("nan")), "'distance' is nan where 'finite' is true"),
    (_aa_line(distance=2.0, exact=None, finite=False), "'distance' is 2 where 'finite' is false"),
    (_aa_line(finite="yes"), "'finite' is 'yes', not true or false"),
    (_aa_line(distance=0.0, exact=0.5), "a distance of 0 means every pattern is recalled"),
    (_aa_line(distance=0.5, exact=0.5), "below 2 (1 - exact_fraction)"),
    (_aa_line(N=0), "its setting 'N' is 0, outside [1, inf]"),
    (_mnist_line(f1=7.5), "'f1' is 7.5, outside [0, 1]"),
    (_mnist_line(accuracy=-0.2), "'accuracy' is -0.2"),
])
def test_an_impossible_record_is_refused_naming_file_line_block_and_field(tmp_path, line, field):
    task = line["block"]["task"]
    good = _aa_line() if task == "autoassociative" else _mnist_line()
    good["block"]["grid"] = "h"  # another block
    good = {**good, "key": ex.Block.from_json(good["block"]).key}
    good["records"] = [{**good["records"][0], "grid": "h"}]
    path = _write(tmp_path / f"{task}-x.jsonl", good, line)
    with pytest.raises(validate.InvalidRecord) as err:
        ex.load_records(path)
    text = str(err.value)
    assert f"{path}:2: block {line['key']}: " in text and field in text and "\n" not in text
    with validate.skipping_invalid() as skipped:
        assert [r["grid"] for r in ex.load_records(path)] == ["h"]
    assert [(s[1], s[2]) for s in skipped] == [(2, line["key"])]


def test_every_task_output_within_bounds_passes():
    assert validate.line_problem(ex.Block.from_json(_aa_line()["block"]), _aa_line()["records"], "distance") is None
    assert validate.line_problem(ex.Block.from_json(_aa_line(distance=4.0, exact=0.0)["block"]),
                                 _aa_line(distance=4.0, exact=0.0)["records"]) is None  # every entry flipped
    assert validate.line_problem(ex.Block.from_json(_aa_line(distance=None, exact=None, finite=False)["block"]),
                                 _aa_line(distance=None, exact=None, finite=False)["records"], "distance") is None


def test_summarize_refuses_an_impossible_best_unless_told_to_skip(tmp_path, capsys):
    path = _write(tmp_path / "autoassociative-x.jsonl", _aa_line(distance=-5.0))
    _one_line_error(capsys, cli.main(["summarize", str(path)]), "'distance' is -5")
    code = cli.main(["summarize", "--skip-invalid", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "damlite: skipped" in err and "no complete, valid block" in err
    assert "-5.000" not in capsys.readouterr().out


def test_the_scorecard_refuses_to_grade_an_impossible_f1(tmp_path, capsys, monkeypatch):
    (tmp_path / "mnist").mkdir()
    _write(tmp_path / "mnist" / "mnist-x.jsonl", _mnist_line(f1=7.5))

    def build(results, **kw):  # grading is not this test's concern: the reading is
        return {"claims": [], "rows": ex.load_records(Path(results) / "mnist" / "mnist-x.jsonl")}
    monkeypatch.setattr(scorecard, "build", build)
    monkeypatch.setattr(scorecard, "summary_rows", lambda card: [])
    _one_line_error(capsys, cli.main(["scorecard", "--results", str(tmp_path)]), "'f1' is 7.5, outside [0, 1]")
    assert not (tmp_path / "scorecard.json").exists()
    assert cli.main(["scorecard", "--results", str(tmp_path), "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert "damlite: skipped" in err and "mnist-x.jsonl:1" in err and "'f1' is 7.5" in err
    assert json.loads((tmp_path / "scorecard.json").read_text())["rows"] == []


def test_conflicting_copies_of_one_block_are_warned_naming_both_lines(tmp_path):
    a, b = _aa_line(distance=3.0), _aa_line(distance=2.5)
    path = _write(tmp_path / "autoassociative-x.jsonl", a, _aa_line(distance=3.0), b)
    with pytest.warns(UserWarning, match=r"lines 1 and 3 hold block .*'distance': 3.0 against 2.5\); line 1 is used"):
        records = ex.load_records(path)
    assert [r["distance"] for r in records] == [3.0]


def test_the_writer_fails_a_block_whose_record_is_impossible(tmp_path):
    blocks = [ex.Block(TOY, "normalized", 1, "g", (1.0,), (0.1,), 1, settings=(("N", 4),))]
    ex.register_task(TOY, lambda block, **_: [{"repeat": 0, "inv_temperature": 1.0, "learning_rate": 0.1,
                                                "distance": 0.0, "finite": "yes"}], profiles={"p": lambda: blocks})
    try:
        with pytest.raises(ex.SweepFailed, match="'finite' is 'yes', not true or false"):
            _sweep(tmp_path)
    finally:
        ex.TASKS.pop(TOY, None)
    assert ex.read_results(tmp_path / f"{TOY}-p.jsonl") == []


@pytest.mark.slow
def test_every_committed_result_file_passes_the_checks():
    files = sorted((ROOT / "book" / "results").glob("*/*.jsonl"))
    assert len(files) >= 15
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path in files:
            assert ex.read_results(path), path


# --------------------------------------------------------------------------- 3. the weak cases
def test_git_output_is_read_as_bytes_whatever_the_locale(monkeypatch):
    raw = b"/srv/d\xc3\xa4mlite-\xff"  # UTF-8 and not: an ASCII locale decodes neither strictly

    def run(args, **kw):
        assert not kw.get("text") and "encoding" not in kw  # bytes: no locale decoding
        return subprocess.CompletedProcess(args, 0, stdout=raw + b"\n", stderr=b"")
    monkeypatch.setattr(subprocess, "run", run)
    top, why = ex._git("rev-parse", "--show-toplevel")
    assert why is None and os.fsencode(top) == raw


def test_unencodable_characters_are_escaped_and_path_bytes_kept():
    cli._robust_streams()
    text = "verdict \u2212 /r\udcc3\udca9sultats"  # a minus sign; a path decoded from UTF-8 bytes under ASCII
    assert text.encode("ascii", errors="damlite-escape") == b"verdict \\u2212 /r\xc3\xa9sultats"


@pytest.mark.slow
def test_git_runs_under_an_ascii_locale_in_a_non_ascii_checkout(tmp_path):
    repo = tmp_path / "d\u00e4mlite-\u00fcber"
    repo.mkdir()
    if subprocess.run(["git", "init", "-q", str(repo)], capture_output=True).returncode:
        pytest.skip("git cannot init a repository here")
    code = ("import sys; from pathlib import Path; from damlite.sweeps import experiments as ex; "
            "import subprocess as sp; real = sp.run; "
            "sp.run = lambda a, **k: real(a, **{**k, 'cwd': sys.argv[1]}); "
            "top, why = ex._git('rev-parse', '--show-toplevel'); "
            "assert why is None and Path(top) == Path(sys.argv[1]), (top, why); print('ok')")
    env = {**ENV, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    out = subprocess.run([sys.executable, "-c", code, os.fsencode(repo)], env=env, cwd=ROOT, capture_output=True)
    assert out.returncode == 0 and out.stdout.strip() == b"ok", out.stderr.decode(errors="replace")


@pytest.mark.slow
def test_output_under_an_ascii_locale_never_fails_on_a_character(tmp_path):
    folder = tmp_path / "r\u00e9sultats"
    folder.mkdir()
    code = ("import sys; from damlite import __main__ as cli; print('x'); "
            "cli._robust_streams(); print('verdict \\u2212 ' + sys.argv[1]); sys.stdout.flush()")
    env = {**ENV, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    out = subprocess.run([sys.executable, "-c", code, os.fsencode(folder)], env=env, cwd=ROOT, capture_output=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1] == b"verdict \\u2212 " + os.fsencode(folder)  # the path's own bytes


class _FullStream:
    """A stdout on a full device."""

    encoding = "utf-8"

    def write(self, text):
        raise OSError(28, "No space left on device")

    def flush(self):
        raise OSError(28, "No space left on device")


def test_a_full_stdout_is_named_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _FullStream())
    code = cli.main(["list", "autoassociative", "--profile", "full", "--out", str(tmp_path)])
    assert isinstance(sys.stdout, _FullStream)  # put back
    _one_line_error(capsys, code, "cannot write to standard output: No space left on device")


@pytest.mark.slow
def test_a_full_stdout_is_named(tmp_path):
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "damlite", "list", "autoassociative", "--profile", "full",
                              "--out", str(tmp_path)], env=ENV, cwd=ROOT, stdout=full, stderr=subprocess.PIPE,
                             text=True)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["damlite: error: cannot write to standard output: No space left on "
                                               "device"]


class _FakeExecutor:
    """dask's ClientExecutor as the sweep sees it: futures that never finish; shutdown(wait=False) cancels."""

    def __init__(self):
        self.futures, self.shutdowns = [], []

    def submit(self, fn, *args, **kwargs):
        self.futures.append(Future())
        return self.futures[-1]

    def shutdown(self, wait=True):
        self.shutdowns.append(wait)
        if not wait:
            for f in self.futures:
                f.cancel()


def test_a_dask_sweep_stopped_by_sigterm_cancels_what_it_submitted(tmp_path, toy, monkeypatch):
    import types

    executor = _FakeExecutor()
    closed = []
    fake = types.ModuleType("dask.distributed")  # the command line's only use of dask: Client(address)
    fake.Client = lambda address: SimpleNamespace(get_executor=lambda: executor, close=lambda: closed.append(True))
    monkeypatch.setitem(sys.modules, "dask", sys.modules.get("dask") or types.ModuleType("dask"))
    monkeypatch.setitem(sys.modules, "dask.distributed", fake)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        code = cli.main(["sweep", TOY, "--profile", "p", "--out", str(tmp_path), "--scheduler", "tcp://x:1",
                         "--no-progress", "--backend", "numpy"])
    finally:
        timer.cancel()
        for s, h in old.items():
            signal.signal(s, h)
    assert code == 143 and closed == [True] and executor.shutdowns == [False]
    assert len(executor.futures) == 2 and all(f.cancelled() for f in executor.futures)


def test_the_overflow_hint_fits_the_network():
    from damlite._monitor import overflow_error as _overflow_error

    for variant in ("original", "normalized"):
        est = SimpleNamespace(variant=variant, n=3, _dtype_name="float32",
                              interaction_=SimpleNamespace(degree=3, name="polynomial"))
        text = str(_overflow_error(est, "fit", 100))
        assert ("use variant='normalized'" in text.lower()) == (variant == "original"), text
