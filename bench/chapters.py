"""Run the book's chapters cell by cell and record every glued value; compare two records.

    python bench/chapters.py run --out cpu.json                      # every chapter, this backend
    DAMLITE_BACKEND=cupy python bench/chapters.py run --out gpu.json
    DAMLITE_BACKEND=cupy python bench/chapters.py run --float64 slow --out gpu-t4.json
    python bench/chapters.py compare cpu.json gpu.json --out diff.json

``run`` executes each chapter's code cells in order, in one IPython shell per chapter (so
magics and the last expression of a cell behave as in Jupyter), from ``book/``, as the book
build does. ``glue`` (MyST-NB's, which :func:`damlite.book.display.glue` calls) is replaced by a
recorder, so a record holds every value a page glues into its prose, plus each chapter's
seconds, its stderr and the first failing cell with its traceback. No Jupyter kernel, no
Sphinx: what it needs is IPython, matplotlib and what the chapters import.

``--float64 slow`` makes damlite treat this GPU's float64 as slow (the decision it takes on
a Colab T4), so ``dtype="auto"`` gives the normalized network float32: the T4 path, run on
any GPU.

``compare`` grades every glued value of the second record against the first by the rules in
:data:`RULES`, written before any GPU run: exact for integers, booleans and text (counts,
verdicts, sentences), relative for floating-point numbers, not compared for wall-clock
measurements (their names say so). It lists every value that differs, each chapter's status,
and values present in one record only.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import platform
import re
import sys
import time
import traceback
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

#: The tolerance rules, in the order they are tried; the first whose pattern matches the
#: glued name (``re.search``) and whose kind matches the value decides. Written before the
#: first GPU run of the chapters (2026-11-27) and not tuned to its outcome.
RULES = [
    # wall-clock measurements differ from machine to machine by construction
    {"names": r"(second|_s$|_ms$|time|speed|faster|slower|wall|elapsed|per_epoch_s)", "kind": "any",
     "rule": "not compared", "why": "a wall-clock measurement"},
    {"names": r".", "kind": "int", "rule": "exact", "why": "a count"},
    {"names": r".", "kind": "bool", "rule": "exact", "why": "a yes/no"},
    {"names": r".", "kind": "str", "rule": "exact", "why": "a verdict or sentence"},
    {"names": r".", "kind": "float", "rule": "relative", "rtol": 1e-6, "atol": 1e-12,
     "why": "a computed number: float64 results on two backends agree to rounding"},
    {"names": r".", "kind": "other", "rule": "exact", "why": "its text form (a table, a list)"},
]


def chapters():
    """The book's notebooks in the order of ``_toc.yml``."""
    toc = (ROOT / "_toc.yml").read_text()
    names = re.findall(r"(?:root|file):\s*(book/[\w.-]+)", toc)
    return [ROOT / f"{name}.ipynb" for name in names if (ROOT / f"{name}.ipynb").exists()]


def _kind(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return "other"


def _plain(value):
    """A JSON-able form of a glued value: numbers and text as they are, anything else as text."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if type(value).__name__ == "Figure":
        return "<figure>"
    data = getattr(value, "data", None)  # IPython.display.Markdown, HTML
    if isinstance(data, str):
        return data
    return str(value)


class _Recorder:
    def __init__(self):
        self.values = {}

    def glue(self, name, value, display=True):  # noqa: ARG002 - MyST-NB's signature
        if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
            value = value.item()
        plain = _plain(value)
        kind = _kind(value) if isinstance(value, (bool, int, float, str)) else "other"
        if kind == "float" and isinstance(plain, str):  # inf, nan
            kind = "other"
        self.values[name] = {"kind": kind, "value": plain}


def _environment():
    env = {"python": platform.python_version(), "machine": platform.node(),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    import damlite  # noqa: PLC0415

    env["damlite"] = damlite.__version__
    try:
        env["backend"] = damlite.backend_info()
    except Exception as exc:  # noqa: BLE001 - the chapters then fail and say why
        env["backend"] = f"unavailable: {exc}"
    env["commit"] = os.environ.get("DAMLITE_GIT_COMMIT") or _git_commit()
    env["DAMLITE_BACKEND"] = os.environ.get("DAMLITE_BACKEND", "")
    try:
        import cupy  # noqa: PLC0415

        env["device"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        env["compute_capability"] = cupy.cuda.Device().compute_capability
    except Exception as exc:  # noqa: BLE001 - no GPU is an answer, not an error
        env["device"] = f"cpu ({type(exc).__name__})"
    return env


def _git_commit():
    try:
        import subprocess  # noqa: PLC0415

        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return None


def run_chapter(path, recorder, *, cell_limit_s=None):
    """Execute one notebook's code cells in a fresh IPython shell; return its record."""
    from IPython.core.interactiveshell import InteractiveShell  # noqa: PLC0415
    import matplotlib.pyplot as plt  # noqa: PLC0415

    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.colors = "NoColor"
    recorder.values = {}
    record = {"chapter": path.name, "cells": len(cells), "ran": 0, "status": "ok", "stderr": []}
    t0 = time.perf_counter()
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        for i, cell in enumerate(cells):
            source = "".join(cell["source"])
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result = shell.run_cell(source, store_history=False, silent=False)
            plt.close("all")
            record["ran"] = i + 1
            if err.getvalue().strip():
                record["stderr"].append({"cell": i, "text": err.getvalue()[-2000:]})
            if not result.success:
                exc = result.error_in_exec or result.error_before_exec
                record.update(status="failed", failed_cell=i, source=source[:2000],
                              error=f"{type(exc).__name__}: {exc}",
                              traceback="".join(traceback.format_exception(exc))[-6000:],
                              output_tail=out.getvalue()[-3000:])
                break
            if cell_limit_s and time.perf_counter() - t0 > cell_limit_s:
                record.update(status="stopped", note=f"past {cell_limit_s} s after cell {i}")
                break
    finally:
        os.chdir(cwd)
    record["seconds"] = round(time.perf_counter() - t0, 2)
    record["glued"] = dict(recorder.values)
    return record


def cmd_run(args):
    os.environ.setdefault("MPLBACKEND", "Agg")
    recorder = _Recorder()
    record_decisions = None
    fake = types.ModuleType("myst_nb")
    fake.glue = recorder.glue
    sys.modules["myst_nb"] = fake
    if args.float64 == "slow":  # what damlite decides on a T4: for CuPy arrays only, the CPU keeps float64
        import damlite.backend as backend  # noqa: PLC0415

        as_is = backend.fast_float64
        decisions = record_decisions = {"float32": 0, "float64": 0}

        def slow_on_gpu(xp):
            fast = as_is(xp) and not backend.is_cupy_namespace(xp)
            decisions["float64" if fast else "float32"] += 1
            return fast

        backend.fast_float64 = slow_on_gpu
    paths = chapters()
    if args.chapters:
        paths = [p for p in paths if any(sel in p.name for sel in args.chapters)]
    record = {"environment": _environment(), "float64": args.float64, "chapters": []}
    if args.float64 == "slow":
        record["auto_dtype_decisions"] = record_decisions  # how often "auto" asked, and what it chose
    out = Path(args.out)
    for path in paths:
        print(f"{path.name} ...", flush=True, file=sys.__stdout__)
        chapter = run_chapter(path, recorder, cell_limit_s=args.chapter_limit_s)
        record["chapters"].append(chapter)
        print(f"  {chapter['status']} in {chapter['seconds']} s, {chapter['ran']}/{chapter['cells']} cells, "
              f"{len(chapter['glued'])} glued" + (f": {chapter.get('error')}" if chapter["status"] != "ok" else ""),
              flush=True, file=sys.__stdout__)
        out.write_text(json.dumps(record, indent=1, default=str) + "\n")  # after every chapter
    failed = [c["chapter"] for c in record["chapters"] if c["status"] != "ok"]
    print(f"{len(paths) - len(failed)} of {len(paths)} chapters ran" + (f"; failed: {failed}" if failed else ""),
          file=sys.__stdout__)
    return 1 if failed else 0


def rule_for(name, kind):
    for rule in RULES:
        if re.search(rule["names"], name) and rule["kind"] in ("any", kind):
            return rule
    raise AssertionError(name)


def compare_values(name, a, b):
    """``None`` where glued value ``b`` agrees with the reference ``a`` under its rule, else a reason."""
    kind = a["kind"]
    rule = rule_for(name, kind)
    if rule["rule"] == "not compared":
        return None
    if a["kind"] != b["kind"]:
        return f"kind {a['kind']} -> {b['kind']}"
    if rule["rule"] == "exact":
        return None if a["value"] == b["value"] else "differs"
    x, y = a["value"], b["value"]
    if isinstance(x, str) or isinstance(y, str):  # non-finite, stored as text
        return None if x == y else "differs"
    if abs(x - y) <= rule["atol"] + rule["rtol"] * abs(x):
        return None
    return f"relative difference {abs(x - y) / max(abs(x), 1e-300):.2e} > {rule['rtol']:g}"


def compare(reference, other):
    """Every chapter's status and every glued value of ``other`` graded against ``reference``."""
    ref = {c["chapter"]: c for c in reference["chapters"]}
    rows, statuses = [], []
    for chapter in other["chapters"]:
        name = chapter["chapter"]
        statuses.append({"chapter": name, "status": chapter["status"], "seconds": chapter["seconds"],
                         "reference_seconds": ref.get(name, {}).get("seconds"),
                         "error": chapter.get("error")})
        glued_ref = ref.get(name, {}).get("glued", {})
        for key in sorted(set(glued_ref) | set(chapter["glued"])):
            a, b = glued_ref.get(key), chapter["glued"].get(key)
            if a is None or b is None:
                rows.append({"chapter": name, "name": key, "reference": a and a["value"], "value": b and b["value"],
                             "reason": "only in the reference" if b is None else "only in this record"})
                continue
            reason = compare_values(key, a, b)
            if reason:
                rows.append({"chapter": name, "name": key, "reference": a["value"], "value": b["value"],
                             "rule": rule_for(key, a["kind"])["why"], "reason": reason})
    compared = sum(len(c["glued"]) for c in other["chapters"])
    return {"reference": reference["environment"], "record": other["environment"], "float64": other.get("float64"),
            "chapters": statuses, "glued_values": compared, "differences": rows, "rules": RULES}


def cmd_compare(args):
    result = compare(json.loads(Path(args.reference).read_text()), json.loads(Path(args.record).read_text()))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, default=str) + "\n")
    for c in result["chapters"]:
        print(f"{c['chapter']:32s} {c['status']:7s} {c['seconds']:8.1f} s (reference {c['reference_seconds']} s)")
    print(f"{len(result['differences'])} of {result['glued_values']} glued values differ")
    for row in result["differences"]:
        print(f"  {row['chapter']} {row['name']}: {str(row['reference'])[:60]!r} -> {str(row['value'])[:60]!r} "
              f"({row['reason']})")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute the chapters and record their glued values")
    run.add_argument("chapters", nargs="*", help="run only chapters whose file name contains one of these")
    run.add_argument("--out", required=True, help="the record (JSON), rewritten after every chapter")
    run.add_argument("--float64", choices=("as-is", "slow"), default="as-is",
                     help="'slow': decide dtypes as on a GPU with slow float64 (a T4)")
    run.add_argument("--chapter-limit-s", type=float, default=None,
                     help="stop a chapter after the cell that passes this many seconds")
    cmp_ = sub.add_parser("compare", help="grade a record's glued values against a reference record")
    cmp_.add_argument("reference")
    cmp_.add_argument("record")
    cmp_.add_argument("--out")
    args = parser.parse_args(argv)
    return cmd_run(args) if args.command == "run" else cmd_compare(args)


if __name__ == "__main__":
    sys.exit(main())
