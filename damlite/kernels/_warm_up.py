"""Compile damlite's CPU kernels ahead of their first use, split over processes.

numba builds one loss kernel per (interaction kind, bit length of n - 1, dtype), ~2 s each on this project's
2-core machine, and the fit's and relaxation's other kernels once per dtype (~10 s), then keeps them in its on-disk
cache. Where one run needs many of them on a fresh machine (the book's chapters, the test suite) and runs in several
processes, each process compiles what it meets first, some of them the same kernel at the same time. Here tiny fits
(and one relaxation per dtype) of a list of (interaction, n, dtype) run in subprocesses of this Python, the list in
contiguous blocks, one block a process, before the run starts: each kernel compiled once, on every core. Used by
the book's build (``_ext/kernel_cache.py``) and the tests' (``tests/conftest.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

#: What each subprocess runs: argv[1] its (interaction, n, dtype) list, argv[2] the dtypes it relaxes. A fit that
#: fails is passed over: the run that needs its kernel compiles it then.
SCRIPT = """
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
    except Exception:
        pass
"""


def blocks(kernels, processes=1):
    """``kernels`` in at most ``processes`` contiguous blocks of (nearly) equal length, each with the dtypes whose
    relaxation it compiles: those no later block holds (each dtype's relaxation once, in its last block)."""
    kernels = list(kernels)
    processes = max(1, min(int(processes), len(kernels) or 1))
    size = -(-len(kernels) // processes) or 1
    parts = [p for p in (kernels[i * size:(i + 1) * size] for i in range(processes)) if p]
    out = []
    for i, part in enumerate(parts):
        later = {d for p in parts[i + 1:] for _, _, d in p}
        out.append((part, sorted({d for _, _, d in part} - later)))
    return out


def compile_ahead(kernels, processes=1, *, timeout=900):
    """Compile the kernels of ``kernels`` ((interaction, n, dtype) each) in up to ``processes`` subprocesses (at
    most the machine's cores) and wait for them; True if every one exited cleanly. Quiet: damlite's first-compile
    line is for a person waiting on one fit, and the caller says what this is."""
    cores = os.cpu_count() or 1
    env = {**os.environ, "DAMLITE_QUIET": "1", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "Agg"}
    running = []
    try:
        for part, relax in blocks(kernels, min(processes, cores)):
            running.append(subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(part), json.dumps(relax)],
                                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        codes = [proc.wait(timeout=timeout) for proc in running]
        return all(code == 0 for code in codes)
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        for proc in running:
            if proc.poll() is None:
                proc.kill()
