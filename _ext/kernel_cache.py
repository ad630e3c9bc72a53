"""Sphinx extension: numba's cache holds damlite's CPU kernels before the chapters execute.

In a fresh clone the cache is empty: each chapter would compile the kernels it runs (a loss kernel ~2 s, the
fit's and relaxation's others ~10 s a dtype), the first of them printing damlite's one line about compiling (for
someone waiting at a terminal or in Colab) onto its page, and two chapters read side by side could compile the same
kernel twice. Tiny fits (and one relaxation per dtype) of every loss kernel the chapters run
(:data:`BOOK_KERNELS`), split over as many subprocesses of the build's Python as will read the chapters
(``damlite.kernels._warm_up.compile_ahead``), fill the cache first; the chapters then run warm, and their pages
show what a reader who runs them sees (the backend announcement included). If the warm-up fails, the build goes on: the page check reports any compile line that
reaches a page.
"""
from __future__ import annotations

from parallel_chapters import jobs  # a sibling in _ext (Sphinx puts _ext on the path)

#: The loss kernels the chapters run, one numba build each (per interaction kind, bit length of n - 1 and dtype:
#: :func:`damlite.kernels._cpu_numba.loss_grad_key`), as a build of the book logged them (2026-11-29: 22 builds) and
#: named by an n of each bit length. Float32 first, so that a split in two gives one process every float32 build.
#: A kernel a chapter runs that is not here is compiled by that chapter: slower, the same page.
BOOK_KERNELS = tuple(
    [("polynomial", n, "float32") for n in (2, 3, 5, 10, 20, 40)]
    + [("polynomial", n, "float64") for n in (2, 3, 5, 10, 20, 40)]
    + [(kind, n, "float64") for kind in ("rectified_polynomial", "leaky_rectified_polynomial") for n in (2, 3, 5, 10, 20)]
)


def setup(app):
    from damlite.kernels._warm_up import compile_ahead  # noqa: PLC0415

    compile_ahead(BOOK_KERNELS, jobs())  # as many processes as will read the chapters
    return {"parallel_read_safe": True, "parallel_write_safe": True}
