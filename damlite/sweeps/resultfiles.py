"""Result files: one JSON line per finished block, read without modification, written under a lock.

A sweep's results live in ``<out_dir>/<task>-<profile>.jsonl``. Readers
(:func:`read_results`, :func:`load_records`) never modify a file and count a
line only when it is a complete, valid line of a block of the file's task and
profile. The writer (:func:`damlite.sweeps.experiments.run_sweep`) holds
an exclusive lock on ``<file>.lock`` for the whole sweep, repairs a cut-short
last line and appends each block in one fsync'd write that a full disk takes
back, after checking the line as readers do (``_line_problem``) and that
the file is as it left it (``_file_state``). A line keyed as damlite keyed
lines before keys were exact (grid values to 6 digits) is read as its block's
line, under the block's key today.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path

from .blocks import BUILTIN_TASKS, TASKS, Block, get_task, profile_blocks

__all__ = ["results_path", "ResultFileError", "read_results", "check_out_dir", "load_records", "load_provenance"]


def results_path(out_dir, task, profile) -> Path:
    return Path(out_dir) / f"{task}-{profile}.jsonl"


class ResultFileError(RuntimeError):
    """A result file or its directory cannot be used; the message says what to do."""


def _check_path(path: Path, what="result file") -> bool:
    """True if ``path`` is a regular file, False if absent; ResultFileError for anything else."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise ResultFileError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                                  f"create its target or remove the link") from None
        return False
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    if stat.S_ISDIR(mode):
        raise ResultFileError(f"{path} is a directory; pass a result file (.jsonl) or use --out for the directory")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise ResultFileError(f"{path} is {kind}, not a regular file; move it away or choose another --out "
                              f"for the {what}")
    return True


def _file_identity(path: Path):
    """(task, profile) from a result file's name ``<task>-<profile>.jsonl``, else (None, None)."""
    stem = path.name.removesuffix(".jsonl")
    for task in sorted({*TASKS, *BUILTIN_TASKS}, key=len, reverse=True):
        if stem.startswith(task + "-") and len(stem) > len(task) + 1:
            return task, stem[len(task) + 1:]
    return None, None


def _expected(task, profile):
    """(metric name or None, set of the profile's block keys or None) for lines of ``task``'s ``profile``."""
    try:
        spec = get_task(task)
    except ValueError:
        return None, None
    keys = {b.key for b in profile_blocks(task, profile)} if profile in spec.profiles else None
    return spec.metric, keys


def _line_problem(obj, task=None, profile=None, metric=None, keys=None):
    """Why ``obj`` is not a complete result line of ``task``'s ``profile`` (None if it is).

    The one check of a line: readers apply it to each line they read, and the writer to each
    line before it writes it (so a block whose line readers would skip fails, naming the field)."""
    return _check_line(obj, task, profile, metric, keys)[0]


def _check_line(obj, task=None, profile=None, metric=None, keys=None):
    """(why ``obj`` is not a complete result line, or None; its block's key, or None).

    A line keyed as damlite keyed it before keys were exact (:attr:`Block.legacy_key`) is its
    block's line: the key returned is the block's key today."""
    if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
        return "not a result line (bad JSON, or no 'key')", None
    try:
        block = Block.from_json(obj["block"])
        key = block.key
    except (KeyError, TypeError, ValueError, AttributeError):
        return "its 'block' is missing or malformed", None
    if obj["key"] != key and obj["key"] != block.legacy_key:
        return "its 'key' is not its block's key", None
    if task is not None and block.task != task:
        return f"a block of task {block.task!r}, not {task!r}", None
    if profile is not None and obj.get("profile", profile) != profile:
        return f"a line of profile {obj['profile']!r}, not {profile!r}", None
    if keys is not None and key not in keys:
        return f"not a block of {block.task}'s profile {profile!r}", None
    if not isinstance(obj.get("provenance"), dict):
        return "no provenance", None
    records = obj.get("records")
    if not isinstance(records, list) or len(records) != block.n_networks:
        got = len(records) if isinstance(records, list) else "no"
        return (f"{got} records where its block has {block.n_networks} network"
                f"{'s' * (block.n_networks != 1)}"), None
    ident = block.identity()
    for g, (rec, (r, _, _, it, lr)) in enumerate(zip(records, block.cells())):
        if not isinstance(rec, dict):
            return f"record {g} is not an object", None
        for k, v in ident.items():
            if rec.get(k) != v:
                got = "missing" if k not in rec else repr(rec[k])
                return (f"record {g} does not carry its block's identity: its {k!r} is {got}, not its block's "
                        f"{v!r}"), None
        for k, v in (("repeat", r), ("inv_temperature", it), ("learning_rate", lr)):
            if rec.get(k) != v:
                got = "missing" if k not in rec else repr(rec[k])
                return f"record {g} is not network {g} of its block: its {k!r} is {got}, not {v!r}", None
        if metric is not None and not (rec.get(metric, "") is None or isinstance(rec.get(metric), (int, float))):
            return f"record {g} has no {metric!r} (a number, or null)", None
    return None, key



def read_results(path, *, warn=True, task=None, profile=None) -> list[dict]:
    """The complete, valid blocks of a result file, read without modifying it.

    A line counts only when it is a JSON object whose ``key`` is its
    ``block``'s key, of the file's task (``task``, else the task in the file's
    name ``<task>-<profile>.jsonl``, else the first valid line's) and profile
    (one of the profile's blocks, when the profile is registered), with
    provenance and one record per network of the block in the block's order,
    each carrying the block's identity, its cell and the task's metric. Any
    other line is skipped with a warning naming its line number, and its block
    is not counted as done. A last line without its newline is kept when it is
    such a line (a file whose final newline was lost) and otherwise ignored
    silently (a write in progress, or one cut short: the next sweep's writer
    repairs it).
    """
    import warnings  # noqa: PLC0415

    path = Path(path)
    if not _check_path(path):
        return []
    if task is None:
        task, profile = _file_identity(path)
    metric, keys = _expected(task, profile) if task is not None else (None, None)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    out = []
    for number, line in enumerate([*lines, tail], start=1):
        if not line.strip():
            continue
        obj = _parse_line(line)
        if task is None and _line_problem(obj) is None:  # a file named otherwise: its first line's task
            task = obj["block"]["task"]
            metric, keys = _expected(task, None)
        problem, key = _check_line(obj, task, profile, metric, keys)
        if problem is None:
            obj["key"] = key  # a key written before keys were exact: the block's key today
            out.append(obj)
        elif warn and number <= len(lines):
            warnings.warn(f"{path}:{number}: {problem}; skipped, not counted as a finished block", stacklevel=2)
    return out


def _parse_line(line: bytes):
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def check_out_dir(out_dir) -> Path:
    """Create ``out_dir`` if needed and check that result files can be written there (before any work)."""
    out = Path(out_dir)
    if out.is_symlink() and not out.exists():
        raise ResultFileError(f"--out {out} is a symbolic link to {os.readlink(out)}, which does not exist; "
                              f"create that directory or remove the link")
    if out.exists() and not out.is_dir():
        raise ResultFileError(f"--out {out} is a file; give a directory for the result files")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResultFileError(f"cannot create the result directory {out}: {err.strerror}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ResultFileError(f"the result directory {out} is not writable; choose another --out")
    return out


class _WriterLock:
    """An exclusive ``flock`` on ``<file>.lock`` for one sweep; waits (and says so) when taken."""

    def __init__(self, path: Path, say=print):
        self.path = Path(str(path) + ".lock")
        self.say = say
        self.fh = None

    def __enter__(self):
        import fcntl  # noqa: PLC0415

        _check_path(self.path, "lock file")
        try:
            self.fh = open(self.path, "a+")
        except OSError as err:
            raise ResultFileError(f"cannot open the lock file {self.path}: {err.strerror}; "
                                  f"free some space or choose another --out") from None
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read().strip() or "another process"
            self.say(f"{self.path.name[:-5]}: another sweep ({holder}) is writing it; waiting for it to finish")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        try:  # who holds it, for the message above: a note only (a full disk may refuse it)
            self.fh.seek(0)
            self.fh.truncate()
            self.fh.write(f"pid {os.getpid()}")
            self.fh.flush()
        except OSError:
            pass
        return self

    def __exit__(self, *exc):
        import fcntl  # noqa: PLC0415

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        try:
            self.fh.close()
        except OSError:  # the pid note could not be flushed (a full disk): nothing is lost
            pass


def _repair_tail(path: Path, say=print):
    """Writer only, under the lock: end the file on a newline before appending; returns what it did
    (None when the file already ends on a newline), which it also says unless it only added a newline.

    A last line without its newline that is a complete line gets its newline;
    the start of a record (a write cut short) is removed; anything else is kept
    and ended with a newline (readers then skip it with a warning).
    """
    if not path.exists():
        return None
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return None
        fh.seek(max(0, size - 1))
        if fh.read(1) == b"\n":
            return None
        data = path.read_bytes()
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        number = data.count(b"\n") + 1
        if _parse_line(tail) is not None or not tail.startswith(b'{"key":'):
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            if _parse_line(tail) is None:
                did = (f"line {number} has no newline and is not a result line; kept, ended with a newline "
                       f"(readers skip it)")
                say(f"{path.name}: {did}")
            else:
                did = f"its last line (line {number}) lacked its newline; added"
        else:
            fh.truncate(start)
            did = (f"removed an unfinished last line ({len(tail)} bytes, no newline: a write that was cut short); "
                   f"it held part of a block's line, and that block is not done")
            say(f"{path.name}: {did}")
        fh.flush()
        os.fsync(fh.fileno())
    return did


def _file_state(path: Path):
    """(device, inode, size) of the file at ``path``, or None where there is none: what the writer saw last."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size


def _change(before, now) -> str:
    """How a result file changed between two ``_file_state`` values, in a few words."""
    if now is None:
        return "was removed (a new file is started at its path)"
    if before is None:
        return f"was created by another program ({now[2]} bytes)"
    if now[:2] != before[:2]:
        return f"was replaced by another file ({now[2]} bytes)"
    if now[2] < before[2]:
        return f"shrank from {before[2]} to {now[2]} bytes"
    return f"grew by {now[2] - before[2]} bytes that this sweep did not write"


def _write_error(path, err) -> str:
    what = {errno.ENOSPC: "the disk is full: free some space", errno.EFBIG:
            "the file size limit is reached (ulimit -f): raise it", getattr(errno, "EDQUOT", -1):
            "the disk quota is exceeded: free some space", errno.EROFS:
            "the file system is read-only: choose another --out", errno.EACCES:
            "permission denied: make it writable or choose another --out"}.get(err.errno, "fix that")
    return (f"cannot write to {path}: {err.strerror}; {what}, then rerun the same command to resume "
            f"(the blocks already in the file are kept)")


def _append_line(path: Path, obj: dict):
    """Append one line in one piece: fsync'd, or (a full disk) taken back so the file ends on a newline.

    Returns the file's ``_file_state`` just after the write."""
    data = (json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as err:
        raise ResultFileError(_write_error(path, err)) from None
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            st = os.fstat(fd)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise ResultFileError(_write_error(path, err)) from None
        return st.st_dev, st.st_ino, st.st_size
    finally:
        os.close(fd)



def load_records(path_or_dir, task=None, profile=None, *, blocks=None) -> list[dict]:
    """All records of a result file (or ``<dir>/<task>-<profile>.jsonl``), in a stable order.

    With ``blocks``, only the records of those blocks (by key), in their order.
    Each record gains the block's ``seconds`` and ``key``. Reading never
    modifies the file; invalid lines are skipped with a warning (:func:`read_results`).
    """
    path = Path(path_or_dir)
    if path.is_dir() or task is not None:
        path = results_path(path, task, profile)
    lines = {}
    for line in read_results(path, task=task, profile=profile):
        lines.setdefault(line["key"], line)  # the first complete copy of a block wins
    keys = [b.key for b in blocks] if blocks is not None else sorted(lines)
    out = []
    for k in keys:
        if k in lines:
            seconds = lines[k]["provenance"].get("seconds")
            for rec in lines[k]["records"]:
                out.append({**rec, "key": k, "seconds": seconds})
    return out


def load_provenance(path) -> list[dict]:
    return [dict(line["provenance"], key=line["key"]) for line in read_results(Path(path))]
