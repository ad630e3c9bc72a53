"""Sphinx extension: the chapters execute with ``DAMLITE_QUIET=1``.

A build in a fresh clone finds numba's cache empty, and damlite says so on standard error when
it compiles its CPU kernels (one line, for someone waiting at a terminal or in Colab). On a page
that line would be build noise, so the build's notebook kernels, which inherit this process's
environment, run quiet. A reader who runs a chapter still sees the line.
"""
from __future__ import annotations

import os


def setup(app):
    os.environ["DAMLITE_QUIET"] = "1"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
