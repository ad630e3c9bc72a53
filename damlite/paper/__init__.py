"""The paper's analysis: its claims graded, its arguments checked, its numbers computed.

* :mod:`damlite.paper.claims`: the scorecard's rule book (supported, refuted, undetermined);
* :mod:`damlite.paper.scorecard`: the claims, graded from the sweeps' results (tests in
  :mod:`damlite.paper.grading` and :mod:`damlite.paper.grading_mnist`, data in
  :mod:`damlite.paper.tables`), written to ``scorecard.json``; :mod:`damlite.paper.scorecard_markdown`
  renders it for the book;
* :mod:`damlite.paper.theory`: executable checks of the homogeneity arguments;
* :mod:`damlite.paper.numerics`: where floating point breaks (formats, frontiers, mpmath references);
* :mod:`damlite.paper.capacity`: storage capacity of the classical Hopfield network and the idealised DAM.

It uses the model and the sweeps; neither imports it.
"""
