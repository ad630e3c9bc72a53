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

A well-formed line whose numbers its task cannot produce (:mod:`damlite.sweeps.validate`) is
refused by readers, naming file, line, block and field, unless they are told to skip such lines;
the writer never appends one. Two lines holding one block with different records are warned
about, naming both lines. The writer appends only to a regular file under one name: a result
or lock file that is a symbolic link, or a result file with hard links, is refused; the lock
file is opened without following links and truncated only when damlite made it.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path

from .blocks import BUILTIN_TASKS, TASKS, Block, get_task, profile_blocks
from .validate import ResultFileError  # defined beside the checks that raise it

__all__ = ["results_path", "ResultFileError", "read_results", "check_out_dir", "load_records", "load_provenance"]


def results_path(out_dir, task, profile) -> Path:
    return Path(out_dir) / f"{task}-{profile}.jsonl"




def _check_path(path: Path, what="result file") -> bool:
    """True if ``path`` is a regular file, False if absent; ResultFileError for anything else."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise ResultFileError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist; "
                                  f"create its target or remove the link") from None
        return False
    except NotADirectoryError:
        raise ResultFileError(f"{_not_a_folder(path)} is not a directory; give the folder that holds the "
                              f"{what}") from None
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    if stat.S_ISDIR(mode):
        if what == "lock file":
            raise ResultFileError(f"{path} is a directory where the sweep keeps its lock file; remove it (a sweep "
                                  f"creates {path.name} as an empty file) or choose another --out")
        raise ResultFileError(f"{path} is a directory; pass a result file (.jsonl) or use --out for the directory")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise ResultFileError(f"{path} is {kind}, not a regular file; move it away or choose another --out "
                              f"for the {what}")
    return True


def _not_a_folder(path: Path) -> Path:
    """The first ancestor of ``path`` that exists and is not a directory (``path`` itself if none)."""
    for parent in reversed(Path(path).parents):
        if str(parent) not in ("", ".") and os.path.lexists(parent) and not os.path.isdir(parent):
            return parent
    return Path(path)


def _check_writable_file(path: Path, what="result file"):
    """Writer only: refuse a result (or lock) file that is a symbolic link, or a hard link (one file
    with more than one name), in one line. A sweep appends only to a file it owns under one name:
    through a link it would write to, and lock, a file other sweeps reach by another name."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as err:
        raise ResultFileError(f"cannot read {path}: {err.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise ResultFileError(f"{path} is a symbolic link (to {os.readlink(path)}); a sweep writes its {what} "
                              f"only in place, never through a link: replace the link by the file itself or give "
                              f"--out the folder it is in")
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise ResultFileError(f"{path} has {st.st_nlink} names (hard links); a sweep writes a {what} only "
                              f"under one name (another name may be another sweep's, which this sweep's lock "
                              f"does not hold back): copy it to a file of its own (cp, then mv over the link)")


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
    line before it writes it (so a block whose line readers would skip or refuse fails, naming the
    field): its shape (:func:`_check_line`), then its numbers against what its task can produce
    (:func:`damlite.sweeps.validate.line_problem`)."""
    problem, _ = _check_line(obj, task, profile, metric, keys)
    if problem is None:
        problem = _impossible(obj, metric)
    return problem


def _impossible(obj, metric=None):
    """Why a well-formed line holds numbers its task cannot produce (None if it holds none)."""
    from .validate import line_problem  # noqa: PLC0415

    block = Block.from_json(obj["block"])
    if metric is None and block.task in TASKS:
        metric = TASKS[block.task].metric
    return line_problem(block, obj["records"], metric)


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



def read_results(path, *, warn=True, task=None, profile=None, invalid=None) -> list[dict]:
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

    A well-formed line whose numbers its task cannot produce (a distance outside [0, 2 sqrt(N)],
    an F1 above 1, ...: :mod:`damlite.sweeps.validate`) is *impossible*: with ``invalid="raise"``
    (the default) the file is refused (:class:`~damlite.sweeps.validate.InvalidRecord`, naming
    file, line, block and field); with ``invalid="skip"`` the line is skipped (with a warning
    when ``warn``; within :func:`~damlite.sweeps.validate.skipping_invalid` the default is
    "skip", and the skipped lines are listed there). Two lines holding one block with different
    records are warned about, naming both line numbers; the first one is used.
    """
    import warnings  # noqa: PLC0415

    from .validate import InvalidRecord, skipped_list  # noqa: PLC0415

    skipped = skipped_list()
    if invalid is None:
        invalid = "skip" if skipped is not None else "raise"
    if invalid not in ("raise", "skip"):
        raise ValueError(f"invalid must be 'raise' or 'skip', got {invalid!r}")
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
    impossible = []
    seen = {}  # key -> (line number, records)
    for number, line in enumerate([*lines, tail], start=1):
        if not line.strip():
            continue
        obj = _parse_line(line)
        if task is None and _line_problem(obj) is None:  # a file named otherwise: its first line's task
            task = obj["block"]["task"]
            metric, keys = _expected(task, None)
        problem, key = _check_line(obj, task, profile, metric, keys)
        if problem is not None:
            if warn and number <= len(lines):
                warnings.warn(f"{path}:{number}: {problem}; skipped, not counted as a finished block", stacklevel=2)
            continue
        why = _impossible(obj, metric)
        if why is not None:
            impossible.append((number, key, why))
            continue
        obj["key"] = key  # a key written before keys were exact: the block's key today
        if key in seen:
            first, records = seen[key]
            if warn and _canonical(records) != _canonical(obj["records"]):
                warnings.warn(f"{path}: lines {first} and {number} hold block {key} with different records "
                              f"({_first_difference(records, obj['records'])}); line {first} is used",
                              stacklevel=2)
        else:
            seen[key] = (number, obj["records"])
        out.append(obj)
    if impossible and invalid == "raise":
        number, key, why = impossible[0]
        more = len(impossible) - 1
        raise InvalidRecord(f"{path}:{number}: block {key}: {why}; nothing is graded from a record its task cannot "
                            f"produce" + (f" ({more} more such line{'s' * (more != 1)} in this file)" if more else "")
                            + ": correct or remove the line (a sweep then reruns its block), or pass "
                              "--skip-invalid to leave such blocks out")
    for number, key, why in impossible:
        if skipped is not None:
            skipped.append((str(path), number, key, why))  # said by whoever skips them
        elif warn:
            warnings.warn(f"{path}:{number}: block {key}: {why}; skipped (impossible), its block left out",
                          stacklevel=2)
    return out


def _canonical(records) -> str:
    return json.dumps(records, sort_keys=True, allow_nan=True)


def _first_difference(a, b) -> str:
    """Where two lists of records first differ, in a few words."""
    if len(a) != len(b):
        return f"{len(a)} records against {len(b)}"
    for g, (x, y) in enumerate(zip(a, b)):
        if _canonical(x) != _canonical(y):
            field = next((k for k in sorted({*x, *y}) if _canonical(x.get(k, "absent")) != _canonical(
                y.get(k, "absent"))), "?")
            return f"record {g}'s {field!r}: {x.get(field, 'absent')!r} against {y.get(field, 'absent')!r}"
    return "equal"


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
    """An exclusive ``flock`` on ``<file>.lock`` for one sweep; waits (and says so) when taken.

    The lock file is opened without following a symbolic link (one there is refused), created
    if absent, and never truncated unless it is one damlite made (empty, or ``pid N``): the
    holder's pid is noted there for the waiting message only."""

    def __init__(self, path: Path, say=print):
        self.path = Path(str(path) + ".lock")
        self.say = say
        self.fh = None

    def __enter__(self):
        import fcntl  # noqa: PLC0415

        _check_writable_file(self.path, "lock file")
        _check_path(self.path, "lock file")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            try:
                fd, made = os.open(self.path, flags | os.O_EXCL, 0o666), True
            except FileExistsError:
                fd, made = os.open(self.path, flags, 0o666), False
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise ResultFileError(f"{self.path} is a symbolic link; a sweep never follows one for its lock "
                                      f"file: remove the link") from None
            raise ResultFileError(f"cannot open the lock file {self.path}: {err.strerror}; "
                                  f"free some space or choose another --out") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in since the check above
            os.close(fd)
            _check_path(self.path, "lock file")
            raise ResultFileError(f"{self.path} is not a regular file; remove it or choose another --out")
        self.fh = os.fdopen(fd, "r+b")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.seek(0)
            holder = self.fh.read(64).decode("ascii", "replace").strip() or "another process"
            self.say(f"{self.path.name[:-5]}: another sweep ({holder}) is writing it; waiting for it to finish")
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        try:  # who holds it, for the message above: a note only (a full disk may refuse it)
            self.fh.seek(0)
            if made or _is_lock_note(self.fh.read(65)):
                self.fh.seek(0)
                self.fh.truncate()
                self.fh.write(f"pid {os.getpid()}".encode())
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


def _is_lock_note(data: bytes) -> bool:
    """True if ``data`` is what damlite writes in a lock file (nothing, or ``pid N``)."""
    text = data.strip()
    return not text or (text.startswith(b"pid ") and text[4:].isdigit() and len(text) <= 24)


def _repair_tail(path: Path, say=print):
    """Writer only, under the lock: end the file on a newline before appending; returns what it did
    (None when the file already ends on a newline), which it also says unless it only added a newline.

    A last line without its newline that is a complete line gets its newline;
    the start of a record (a write cut short) is removed; anything else is kept
    and ended with a newline (readers then skip it with a warning).
    """
    if not path.exists():
        return None
    with open(path, "r+b", opener=_no_follow) as fh:
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


def _no_follow(path, flags):
    """An ``open`` opener that never follows a symbolic link (ELOOP where ``path`` is one)."""
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


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
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as err:
        if err.errno == errno.ELOOP:
            _check_writable_file(path)
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
    modifies the file; malformed lines are skipped with a warning, impossible ones refused
    (:func:`read_results`); of two lines holding one block, the first is used.
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
