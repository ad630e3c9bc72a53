"""Shared fixtures: hypothesis profile, random problems, and array backends; the fast run and the full suite.

Backends (``backend`` fixture, parametrized):

* ``numpy``  - array_api_compat's NumPy namespace;
* ``strict`` - array-api-strict on ``Device("device1")``, whose arrays refuse to
  become NumPy arrays: any hidden host transfer inside damlite fails the test;
* ``cupy``   - CuPy on a GPU; skipped, with damlite's own reason, where none is usable.

The fast run (``python -m pytest -n 2``, the README's) and the full suite (``--full``, which CI runs):

* without ``--full``, tests marked ``slow`` are deselected (unless ``-m`` chooses, or the test is
  named on the command line); ``--full`` runs them too;
* a test that skips because a module does not import fails instead, unless the module is one of
  :data:`OPTIONAL_MODULES`: ``pip install -e ".[dev]"`` installs everything else the tests import.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "damlite",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # reproducible runs; CI can choose another profile
)
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "damlite"))

sys.path.insert(0, os.path.dirname(__file__))  # `import reference` from any rootdir

INTERACTIONS = ["polynomial", "rectified_polynomial", "leaky_rectified_polynomial", "exponential"]
HOMOGENEOUS = ["polynomial", "rectified_polynomial"]
VARIANTS = ["original", "normalized"]


def random_problem(seed, K=4, N=7, B=3, *, continuous=False):
    """Memories uniform in [-1, 1] (K, N) and states: ±1 (default) or continuous in [-1, 1]."""
    rng = np.random.default_rng(seed)
    memories = rng.uniform(-1.0, 1.0, (K, N))
    if continuous:
        states = rng.uniform(-1.0, 1.0, (B, N))
    else:
        states = np.where(rng.random((B, N)) < 0.5, -1.0, 1.0)
    return memories, states


@dataclass
class Backend:
    """An array library to run damlite on: namespace, device, and conversions."""

    name: str
    xp: object
    device: object

    def asarray(self, x, dtype="float64"):
        dt = getattr(self.xp, dtype)
        if self.device is None:
            return self.xp.asarray(np.asarray(x), dtype=dt)
        return self.xp.asarray(np.asarray(x), dtype=dt, device=self.device)

    def on_device(self, x) -> bool:
        """True when ``x`` is an array of this backend on its device."""
        if self.name == "strict":
            return type(x).__module__.startswith("array_api_strict") and x.device == self.device
        if self.name == "cupy":
            import cupy  # noqa: PLC0415

            return isinstance(x, cupy.ndarray)
        return isinstance(x, np.ndarray)


def _make_backend(name):
    if name == "numpy":
        import array_api_compat.numpy as xp  # noqa: PLC0415

        return Backend("numpy", xp, None)
    if name == "strict":
        import array_api_strict as xp  # noqa: PLC0415

        return Backend("strict", xp, xp.Device("device1"))
    import damlite  # noqa: PLC0415

    try:
        xp, _ = damlite.get_backend("cupy")
    except damlite.BackendUnavailableError as exc:
        pytest.skip(f"no usable GPU: {exc}")
    return Backend("cupy", xp, None)


@pytest.fixture(params=["numpy", "strict", pytest.param("cupy", marks=pytest.mark.gpu)])
def backend(request):
    return _make_backend(request.param)


@pytest.fixture
def numpy_backend():
    return _make_backend("numpy")


@pytest.fixture
def cupy_backend():
    return _make_backend("cupy")


# ---------------------------------------------------------------- the fast run and the full suite
#: Modules a test may skip without: torch (``damlite[bench]``), CuPy (``damlite[gpu]``), tomllib (Python >= 3.11).
OPTIONAL_MODULES = {"torch", "cupy", "tomllib"}

def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="damlite's full suite: the tests marked slow too (CI runs it)")


#: The loss kernels the fast run meets in its own processes, one numba build each (per interaction kind, bit length
#: of n - 1 and dtype), as a logged run listed them (2026-11-29: 25 builds), named by an n of each bit length.
TEST_KERNELS = tuple(
    [(kind, n, "float32") for kind, ns in (("polynomial", (3, 20, 40)), ("rectified_polynomial", (3, 5, 20)),
                                           ("exponential", (1,))) for n in ns]
    + [(kind, n, "float64") for kind, ns in (("polynomial", (1, 2, 3, 5, 10, 20, 40)),
                                             ("rectified_polynomial", (1, 2, 3, 5, 10, 20)),
                                             ("leaky_rectified_polynomial", (1, 2, 3, 5)), ("exponential", (1,)))
       for n in ns]
)


def pytest_sessionstart(session):
    """The whole suite on several workers (the README's command): its kernels compiled first, once each, split over
    the workers' count of processes (damlite.kernels._warm_up), instead of by whichever worker meets each first, some
    twice at once. Not for a run of chosen files or on one process: those compile what they meet."""
    config = session.config
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not isinstance(workers, int) or workers < 2:
        return
    if [str(a) for a in config.args] != list(config.getini("testpaths")):
        return
    from damlite.kernels import cpu_kernels  # noqa: PLC0415
    from damlite.kernels._warm_up import compile_ahead  # noqa: PLC0415

    if not cpu_kernels.available():
        return
    import time  # noqa: PLC0415

    reporter = config.pluginmanager.get_plugin("terminalreporter")
    start = time.perf_counter()
    done = compile_ahead(TEST_KERNELS, workers)
    if reporter is not None:
        reporter.write_line(f"damlite: the CPU kernels the tests run compiled or found in numba's cache in "
                            f"{time.perf_counter() - start:.0f} s ({min(workers, os.cpu_count() or 1)} processes"
                            f"{'' if done else '; some failed: the tests compile those'})")


def pytest_report_header(config):
    if not config.getoption("--full"):
        return ["damlite: the fast run (slow tests left out); --full runs the full suite"]
    return ["damlite: the full suite"]


def _named(config):
    """(path, name prefix) of the tests named on the command line (``file.py::test``)."""
    named = []
    for arg in config.args:
        if "::" in arg:
            path, rest = arg.split("::", 1)
            named.append((Path(config.invocation_params.dir, path).resolve(), rest))
    return named


def pytest_collection_modifyitems(config, items):
    if config.getoption("--full") or config.getoption("markexpr"):
        return
    named = _named(config)
    keep, slow = [], []
    for item in items:
        chosen = any(item.path == path and item.nodeid.split("::", 1)[-1].startswith(rest) for path, rest in named)
        (slow if item.get_closest_marker("slow") and not chosen else keep).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


_MISSING = re.compile(r"could not import '([\w.]+)'")


def _missing_module_fails(report):
    """A skip for a module that does not import becomes a failure, unless the module is optional."""
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    m = _MISSING.search(str(report.longrepr[2]))
    if m and m.group(1).split(".")[0] not in OPTIONAL_MODULES:
        report.outcome = "failed"
        report.longrepr = (f"{m.group(1)} does not import, and the tests need it: pip install -e \".[dev]\" installs "
                           f"what they import (tests/conftest.py: OPTIONAL_MODULES may be absent). {report.longrepr[2]}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _missing_module_fails(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _missing_module_fails(outcome.get_result())
