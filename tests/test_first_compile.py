"""The README's promise: when numba compiles damlite's CPU kernels for a while, one line on stderr says so, also
when its cache already holds other kernels (a float32 fit after float64 ones: 24 s of CPU, issue 45).

Each fit runs in a fresh process on one fresh numba cache directory: float64 first (the first compile
ever), then float32 (kernels the cache does not hold yet), then float32 again (all cached: silent).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FIT = ("import numpy as np, damlite; P = np.random.default_rng(0).choice([-1.0, 1.0], (20, 100)); "
       "damlite.DenseAssociativeMemory(16, n=4, epochs=2, dtype={dtype!r}, backend='numpy', "
       "random_state=0).fit(P)")


def _announces_every_dtype():
    """Whether the kernels' compile listener announces each dtype's first compile (not only the first ever)."""
    from damlite.kernels import cpu_kernels

    if not cpu_kernels.available():
        pytest.skip("the numba CPU kernels are off here")
    from damlite.kernels import _cpu_numba

    return hasattr(_cpu_numba._FirstCompile(), "said")


def _compile_lines(dtype, cache):
    env = {k: v for k, v in os.environ.items() if k not in ("DAMLITE_QUIET", "DAMLITE_CPU_KERNELS")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", FIT.format(dtype=dtype)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=True)
    return [line for line in proc.stderr.splitlines() if "compil" in line]


@pytest.mark.slow
def test_the_first_float32_compile_says_so(tmp_path):
    if not _announces_every_dtype():
        pytest.xfail("damlite/kernels/_cpu_numba.py's _FirstCompile announces only a cache's first kernels")
    first = _compile_lines("float64", tmp_path)
    assert len(first) == 1 and "compiling the CPU kernels with numba" in first[0], first
    more = _compile_lines("float32", tmp_path)
    assert len(more) == 1 and "float32" in more[0] and str(tmp_path) in more[0], more
    assert _compile_lines("float32", tmp_path) == []  # cached now: nothing compiles, nothing said
