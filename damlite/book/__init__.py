"""The book's helpers: figures, explorers and the glue of numbers into prose.

* :mod:`damlite.book.plots`: the chapters' figures (matplotlib);
* :mod:`damlite.book.widgets`: explorers, live (ipywidgets) and kernel-free (HTML and JS);
* :mod:`damlite.book.display`: ``glue``, ``say`` and ``sci``, for the chapters' prose.

The top of the house: it uses the model, the sweeps and the paper; nothing in damlite imports it.
"""
