"""Sphinx extension: numba's cache holds damlite's CPU kernels before the chapters execute.

In a fresh clone the cache is empty, and the first kernel call of a chapter would print damlite's
one line about compiling them (for someone waiting at a terminal or in Colab) onto that page. A
tiny fit and relaxation per dtype, in subprocesses of the build's Python (side by side where the machine has
the cores), fill the cache first; the chapters
then compile the few kernels they need beyond it without a word, and their pages show what a
reader who runs them sees (the backend announcement included). If the warm-up fails, the build
goes on: the page check reports any compile line that reaches a page.
"""
from __future__ import annotations

import os
import subprocess
import sys

from parallel_chapters import jobs  # a sibling in _ext (Sphinx puts _ext on the path)

WARM_UP = """
import sys, numpy as np, damlite
rng = np.random.default_rng(0)
patterns = np.where(rng.random((4, 16)) < 0.5, -1.0, 1.0)
dtype = sys.argv[1]
damlite.DenseAssociativeMemory(4, n=2, epochs=1, dtype=dtype, random_state=0).fit(patterns).relax(patterns)
"""

#: One warm-up per dtype, run side by side where the machine has the cores (each compiles its own kernels).
DTYPES = ("float64", "float32")


def setup(app):
    env = {**os.environ, "DAMLITE_QUIET": "1", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    side_by_side = jobs() >= len(DTYPES)  # the chapters' reading processes: as many at once
    running = []
    try:
        for dtype in DTYPES:
            proc = subprocess.Popen([sys.executable, "-c", WARM_UP, dtype], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            running.append(proc)
            if not side_by_side:
                proc.wait(timeout=600)
        for proc in running:
            proc.wait(timeout=600)
    except (OSError, subprocess.SubprocessError):
        for proc in running:
            proc.kill()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
