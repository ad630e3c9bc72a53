"""Sphinx extension: every page loads each script once.

sphinx-thebe (which Jupyter Book 1 always loads) registers an inline script that
declares ``const THEBE_JS_URL``; with Sphinx 7.4 it reaches each page twice, and the
second copy stops with "Identifier 'THEBE_JS_URL' has already been declared" in the
browser's console. This keeps the first of any scripts that are identical (same file,
same attributes, same inline body; an inline script's file is ``None`` in one
copy and ``""`` in the other) and drops the rest, on every page.
"""
from __future__ import annotations


def _key(script):
    attributes = getattr(script, "attributes", {}) or {}
    filename = getattr(script, "filename", script) or ""  # an inline script: None or ""
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def unique_scripts(scripts):
    """``scripts`` without repeats, in their order (the first of each kept)."""
    seen, out = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            out.append(script)
    return out


def _page_context(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app):
    app.connect("html-page-context", _page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
