"""The CPU kernels: the line that says they are being compiled."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

numba = pytest.importorskip("numba")
ROOT = Path(__file__).resolve().parents[1]


def _python(code, **env):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("DAMLITE_CPU", "NUMBA_", "OMP_", "OPENBLAS_", "MKL_"))}
    full.update(env, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=600)


# ------------------------------------------------------------ the first compilation says so
_COMPILE = """
import numpy as np
from damlite.kernels import cpu_kernels
x = np.random.default_rng(0).integers(0, 5, (30, 40)).astype(float)
assert cpu_kernels.palette(x) is not None
"""


def test_the_first_compilation_in_a_cache_says_so_once(tmp_path):
    """An empty cache: one line on stderr naming the cache (several kernels compiled, one line); the same cache
    again: nothing; another empty cache with DAMLITE_QUIET=1: nothing. (palette: a small kernel, quick to compile.)"""
    first = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr[-2000:]
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("damlite: compiling the CPU kernels with numba, once"), first.stderr
    assert str(tmp_path / "a") in lines[0]
    again = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "a"))
    assert again.returncode == 0 and again.stderr == "", again.stderr
    quiet = _python(_COMPILE, NUMBA_CACHE_DIR=str(tmp_path / "b"), DAMLITE_QUIET="1")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
