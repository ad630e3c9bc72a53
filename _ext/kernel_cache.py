"""Sphinx extension: numba's cache holds damlite's CPU kernels before the chapters execute.

In a fresh clone the cache is empty, and the first kernel call of a chapter would print damlite's
one line about compiling them (for someone waiting at a terminal or in Colab) onto that page. A
tiny fit and relaxation in a subprocess of the build's Python fill the cache first; the chapters
then compile the few kernels they need beyond it without a word, and their pages show what a
reader who runs them sees (the backend announcement included). If the warm-up fails, the build
goes on: the page check reports any compile line that reaches a page.
"""
from __future__ import annotations

import os
import subprocess
import sys

WARM_UP = """
import numpy as np, damlite
rng = np.random.default_rng(0)
patterns = np.where(rng.random((4, 16)) < 0.5, -1.0, 1.0)
for dtype in ("float64", "float32"):
    damlite.DenseAssociativeMemory(4, n=2, epochs=1, dtype=dtype, random_state=0).fit(patterns).relax(patterns)
"""


def setup(app):
    env = {**os.environ, "DAMLITE_QUIET": "1", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    try:
        subprocess.run([sys.executable, "-c", WARM_UP], env=env, capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.SubprocessError):
        pass
    return {"parallel_read_safe": True, "parallel_write_safe": True}
