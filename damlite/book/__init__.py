"""The book's helpers: figures, explorers and the glue of numbers into prose.

* :mod:`damlite.book.plots`: the chapters' figures (matplotlib);
* :mod:`damlite.book.widgets`: explorers, live (ipywidgets) and kernel-free (HTML and JS);
* :mod:`damlite.book.display`: ``glue``, ``say`` and ``sci``, for the chapters' prose;
* :mod:`damlite.book.tables`: computed tables as HTML that fits a page (words wrap, numbers do not);
* :mod:`damlite.book.results`: result files with their provenance, as the chapters read them.

The top of the house: it uses the model, the sweeps and the paper; nothing in damlite imports it.
"""
