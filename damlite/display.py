"""Show computed numbers in the book's prose (MyST-NB's ``glue``), also outside a book build."""
from __future__ import annotations

__all__ = ["glue"]


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
