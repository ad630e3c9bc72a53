"""Shared fixtures: hypothesis profile, random problems, and array backends.

Backends (``backend`` fixture, parametrized):

* ``numpy``  - array_api_compat's NumPy namespace;
* ``strict`` - array-api-strict on ``Device("device1")``, whose arrays refuse to
  become NumPy arrays: any hidden host transfer inside damlite fails the test;
* ``cupy``   - CuPy on a GPU; skipped, with damlite's own reason, where none is usable.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

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
