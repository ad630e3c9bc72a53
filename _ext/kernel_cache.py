"""Sphinx extension: numba's cache holds damlite's CPU kernels before the chapters execute.

In a fresh clone the cache is empty: each chapter would compile the kernels it runs (a loss kernel ~4.5 s, the
fit's and relaxation's others ~20 s a dtype), the first of them printing damlite's one line about compiling (for
someone waiting at a terminal or in Colab) onto its page, and two chapters read side by side could compile the same
kernel twice. Tiny fits (and one relaxation per dtype) of every loss kernel the chapters run
(:data:`BOOK_KERNELS`), split over as many subprocesses of the build's Python as will read the chapters, fill the
cache first; the chapters then run warm, and their pages show what a reader who runs them sees (the backend
announcement included). If the warm-up fails, the build goes on: the page check reports any compile line that
reaches a page.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from parallel_chapters import jobs  # a sibling in _ext (Sphinx puts _ext on the path)

WARM_UP = """
import json, sys, warnings
import numpy as np, damlite
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
patterns = np.where(rng.random((4, 16)) < 0.5, -1.0, 1.0)
kernels, relax = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
for interaction, n, dtype in kernels:
    try:
        dam = damlite.DenseAssociativeMemory(4, interaction=interaction, n=n, epochs=1, dtype=dtype, random_state=0)
        dam.fit(patterns)
        if dtype in relax:
            dam.relax(patterns)
            relax.discard(dtype)
    except Exception:  # a warm-up only: the chapter that needs the kernel compiles it
        pass
"""

#: The loss kernels the chapters run, one numba build each (per interaction kind, bit length of n - 1 and dtype:
#: :func:`damlite.kernels._cpu_numba.loss_grad_key`), as a build of the book logged them (2026-11-29: 22 builds) and
#: named by an n of each bit length. Float32 first, so that the split below gives one process every float32 build.
#: A kernel a chapter runs that is not here is compiled by that chapter: slower, the same page.
BOOK_KERNELS = tuple(
    [("polynomial", n, "float32") for n in (2, 3, 5, 10, 20, 40)]
    + [("polynomial", n, "float64") for n in (2, 3, 5, 10, 20, 40)]
    + [(kind, n, "float64") for kind in ("rectified_polynomial", "leaky_rectified_polynomial") for n in (2, 3, 5, 10, 20)]
)


def blocks(kernels=BOOK_KERNELS, processes=1):
    """``kernels`` in ``processes`` contiguous blocks of (nearly) equal length, each with the dtypes whose
    relaxation it compiles: those no later block holds (each dtype's relaxation once, in its last block)."""
    processes = max(1, min(processes, len(kernels)))
    size = -(-len(kernels) // processes)
    parts = [list(kernels[i * size:(i + 1) * size]) for i in range(processes)]
    parts = [p for p in parts if p]
    out = []
    for i, part in enumerate(parts):
        later = {d for p in parts[i + 1:] for _, _, d in p}
        out.append((part, sorted({d for _, _, d in part} - later)))
    return out


def setup(app):
    env = {**os.environ, "DAMLITE_QUIET": "1", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    running = []
    try:
        for part, relax in blocks(processes=jobs()):  # as many processes as will read the chapters
            running.append(subprocess.Popen([sys.executable, "-c", WARM_UP, json.dumps(part), json.dumps(relax)],
                                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for proc in running:
            proc.wait(timeout=900)
    except (OSError, subprocess.SubprocessError):
        for proc in running:
            proc.kill()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
