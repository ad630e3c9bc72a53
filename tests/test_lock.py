"""The locks agree with what they lock: ``requirements/dev.txt`` with ``pyproject.toml``'s dependencies and its
``dev`` extra (the tests' environment), ``requirements/book.txt`` with ``requirements.txt`` (the book's), each
other, and the NumPy and numba that the committed CPU results ran on.

A test here fails when someone edits a range in ``pyproject.toml`` or ``requirements.txt`` and does not
regenerate the locks: ``bash requirements/lock.sh`` (``requirements/lock.sh`` says how).
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: tomli comes with pytest
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOCKS = {"dev": ROOT / "requirements" / "dev.txt", "book": ROOT / "requirements" / "book.txt"}
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


def parse_lock(text: str) -> dict[str, list[dict]]:
    """``{name: [{"version", "marker", "via", "hashes"}, ...]}``: one entry per pin of a ``uv pip compile
    --generate-hashes`` output (a package pinned once per Python range where its version differs)."""
    pins: dict[str, list[dict]] = defaultdict(list)
    entry = None
    for line in text.splitlines():
        if m := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: ; (.*?))?(?: \\)?$", line):
            entry = {"version": Version(m.group(2)), "marker": Marker(m.group(3)) if m.group(3) else None,
                     "via": [], "hashes": 0}
            pins[canonicalize_name(m.group(1))].append(entry)
        elif line.startswith(("-e", "--editable")) or re.match(r"^[A-Za-z]", line):
            raise AssertionError(f"a line the lock should not have: {line!r}")
        elif entry is not None and "--hash=sha256:" in line:
            entry["hashes"] += 1
        elif entry is not None and (m := re.match(r"^    #(?: via |   )(\S.*)$", line)):
            entry["via"].append(m.group(1).strip())
    return dict(pins)


@pytest.fixture(scope="module")
def locks():
    return {kind: parse_lock(path.read_text(encoding="utf-8")) for kind, path in LOCKS.items()}


def _requirements_txt() -> list[Requirement]:
    """requirements.txt's requirements (comments, ``-e .`` and blank lines dropped)."""
    out = []
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out.append(Requirement(line))
    return out


def _pins_for(pins: list[dict], python: str) -> list[dict]:
    env = {"python_version": python, "python_full_version": python + ".0", "sys_platform": "linux",
           "platform_machine": "x86_64", "implementation_name": "cpython", "platform_system": "Linux"}
    return [p for p in pins if p["marker"] is None or p["marker"].evaluate(env)]


def _direct(lock: dict, source: str) -> set[str]:
    """The names the lock says come straight from ``source`` (uv's ``# via`` annotation)."""
    return {name for name, pins in lock.items() for p in pins if source in p["via"]}


def _check_satisfied(lock: dict, requirements: list[Requirement], which: str):
    for req in requirements:
        name = canonicalize_name(req.name)
        assert name in lock, f"{req} ({which}) is not in the lock: run `bash requirements/lock.sh`"
        for python in PYTHONS:
            pins = _pins_for(lock[name], python)
            assert len(pins) == 1, f"{name} has {len(pins)} pins for Python {python} in the lock"
            assert req.specifier.contains(pins[0]["version"], prereleases=True), (
                f"{which} asks for {req}, the lock pins {name}=={pins[0]['version']} for Python {python}: "
                "run `bash requirements/lock.sh`")


# --------------------------------------------------------------------------- each lock and what it locks
def test_the_tests_lock_pins_pyproject_dependencies_and_the_dev_extra(locks):
    lock = locks["dev"]
    wanted = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    wanted += [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["dev"]]
    _check_satisfied(lock, wanted, "pyproject.toml")
    # and nothing that pyproject.toml no longer asks for is locked as if it did
    assert _direct(lock, "damlite (pyproject.toml)") == {canonicalize_name(r.name) for r in wanted}


def test_the_books_lock_pins_requirements_txt_and_damlites_dependencies(locks):
    lock = locks["book"]
    wanted = _requirements_txt()
    _check_satisfied(lock, wanted, "requirements.txt")
    assert _direct(lock, "-r requirements.txt") == {canonicalize_name(r.name) for r in wanted}
    ours = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]  # requirements.txt's `-e .`
    _check_satisfied(lock, ours, "pyproject.toml")
    assert "damlite" not in lock  # installed from the checkout, not pinned
    assert {canonicalize_name(r.name) for r in ours} <= _direct(lock, "damlite")


def test_a_package_in_both_locks_has_the_same_version(locks):
    for name in set(locks["dev"]) & set(locks["book"]):
        for python in PYTHONS:
            dev = {str(p["version"]) for p in _pins_for(locks["dev"][name], python)}
            book = {str(p["version"]) for p in _pins_for(locks["book"][name], python)}
            if dev and book:  # (a package one environment needs only on some Pythons)
                assert dev == book, (name, python, dev, book)


def test_every_pin_carries_its_hashes_and_the_locks_name_their_command():
    for kind, path in LOCKS.items():
        text = path.read_text(encoding="utf-8")
        assert "#    bash requirements/lock.sh" in text.splitlines()[1], kind
        for name, pins in parse_lock(text).items():
            for p in pins:
                assert p["hashes"] >= 1, (kind, name, str(p["version"]))


# --------------------------------------------------------------------------- the committed results
def _cpu_provenance() -> tuple[set[str], set[str]]:
    """The NumPy and numba versions that the committed CPU results (book/results/*/*.jsonl) record."""
    numpys, numbas = set(), set()
    for path in sorted((ROOT / "book" / "results").glob("*/*.jsonl")):
        with path.open(encoding="utf-8") as f:
            for line in f:
                if '"provenance"' not in line:
                    continue
                prov = json.loads(line).get("provenance") or {}
                if prov.get("device") != "cpu":
                    continue
                numpys.add(prov["numpy"])
                if kernels := prov.get("cpu_kernels"):
                    numbas.add(kernels.removeprefix("numba ").split(",")[0])  # "numba 0.68.1, 2 threads"
    return numpys, numbas


def test_the_locks_pin_the_numpy_and_numba_the_committed_cpu_results_ran_on(locks):
    numpys, numbas = _cpu_provenance()
    assert numpys and numbas, "no committed CPU result records its NumPy and numba"
    assert len(numpys) == 1 and len(numbas) == 1, (numpys, numbas)
    for kind, lock in locks.items():
        for python in PYTHONS[1:]:  # NumPy 2.4 has no wheel for Python 3.10
            assert {str(p["version"]) for p in _pins_for(lock["numpy"], python)} == numpys, (kind, python)
        for python in PYTHONS:
            assert {str(p["version"]) for p in _pins_for(lock["numba"], python)} == numbas, (kind, python)


def test_parse_lock_reads_markers_annotations_and_hashes():
    lock = parse_lock(
        "# header\n"
        "numpy==2.2.6 ; python_full_version < '3.11' \\\n"
        "    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "    # via\n    #   -r requirements.txt\n    #   numba\n"
        "numpy==2.4.6 ; python_full_version >= '3.11' \\\n    --hash=sha256:cc\n    # via damlite\n")
    assert [str(p["version"]) for p in lock["numpy"]] == ["2.2.6", "2.4.6"]
    assert lock["numpy"][0]["via"] == ["-r requirements.txt", "numba"] and lock["numpy"][0]["hashes"] == 2
    assert [str(p["version"]) for p in _pins_for(lock["numpy"], "3.12")] == ["2.4.6"]
    with pytest.raises(AssertionError, match="should not have"):
        parse_lock("-e .\n")
