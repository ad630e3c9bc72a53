"""Show computed numbers in the book's prose (MyST-NB's ``glue``), also outside a book build."""
from __future__ import annotations

import textwrap

__all__ = ["glue", "say", "sci"]

#: The widest line a book page shows without a scrollbar (and ruff's line length).
WIDTH = 88


def glue(name, value, display=True):
    """Store ``value`` under ``name`` for ``{glue:text}`name:.3g``` in the prose.

    NumPy scalars become Python numbers (MyST-NB cannot format ``np.float64``).
    Where MyST-NB is absent (plain Jupyter, Colab) the value is printed instead.
    """
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()
    try:
        from myst_nb import glue as _glue  # noqa: PLC0415
    except ImportError:
        print(f"{name} = {value}")
        return
    _glue(name, value, display=display)


def say(*parts, width=WIDTH):
    """Print ``parts`` (joined by spaces) with every line wrapped to ``width`` columns.

    A wrapped line continues two spaces further in than the line it came from, so a
    page's printed output never needs a horizontal scrollbar.
    """
    for line in " ".join(str(p) for p in parts).splitlines() or [""]:
        indent = line[: len(line) - len(line.lstrip())]
        print(textwrap.fill(line, width, subsequent_indent=indent + "  ", break_long_words=False,
                            break_on_hyphens=False) if line.strip() else line)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x, digits=2):
    """``x`` in scientific notation for prose: ``sci(3.4028235e38)`` is ``'3.4 × 10³⁸'``."""
    mantissa, exponent = f"{float(x):.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"
