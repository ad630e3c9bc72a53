"""Sphinx extension: the chapters are read, and so executed, by as many processes as the machine has cores (at
most :data:`MOST`).

myst-nb executes a notebook while Sphinx reads it, and Jupyter Book 1.x starts Sphinx with one process (its
command line has no ``-j``), so the chapters ran one after another whatever the machine. Sphinx reads in
parallel when its application's ``parallel`` count is above one and every extension declares parallel
reading safe. This sets the count once the configuration is read (``DAMLITE_BOOK_JOBS`` overrides it, from 1
to the core count) and declares the two extensions Jupyter Book loads that say nothing about it, after
reading their code:

* ``sphinx_multitoc_numbering`` numbers sections in ``assign_section_numbers``, which Sphinx calls in the main
  process once every document is read; it keeps nothing per document;
* ``sphinx_jupyterbook_latex`` adds transforms and nodes that act for LaTeX builders only and keep no state.

Every other extension declares itself; if one did not, Sphinx would warn and read serially (a strict build then
fails, which is how a new undeclared extension is found). Each chapter still runs in its own kernel, so its
outputs are what a serial build gives.
"""
from __future__ import annotations

import os

#: The most reading processes: each runs a chapter's kernel, whose fits use the cores too.
MOST = 4

#: Extensions Jupyter Book loads without declaring parallel reading safe, checked as the module's text says.
CHECKED = ("sphinx_multitoc_numbering", "sphinx_jupyterbook_latex")


def jobs() -> int:
    """The reading processes: ``DAMLITE_BOOK_JOBS`` if set (1 to the core count), else min(cores, :data:`MOST`)."""
    cores = os.cpu_count() or 1
    raw = os.environ.get("DAMLITE_BOOK_JOBS", "").strip()
    if not raw:
        return max(1, min(cores, MOST))
    if not raw.isdigit() or not 1 <= int(raw) <= cores:
        raise ValueError(f"DAMLITE_BOOK_JOBS must be a whole number from 1 to {cores} (this machine's cores), "
                         f"not {raw!r}")
    return int(raw)


def _configure(app, config):
    app.parallel = jobs()
    for name in CHECKED:
        ext = app.extensions.get(name)
        if ext is not None and ext.parallel_read_safe is None:
            ext.parallel_read_safe = True


def setup(app):
    app.connect("config-inited", _configure)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
