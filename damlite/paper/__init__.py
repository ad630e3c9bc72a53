"""The paper's analysis: its claims graded, its arguments checked, its numbers computed.

* :mod:`damlite.paper.claims` and :mod:`damlite.paper.scorecard`: the claims, graded from the sweeps' results;
* :mod:`damlite.paper.theory`: executable checks of the homogeneity arguments;
* :mod:`damlite.paper.numerics`: where floating point breaks (formats, frontiers, mpmath references);
* :mod:`damlite.paper.capacity`: storage capacity of the classical Hopfield network and the idealised DAM.

It uses the model and the sweeps; neither imports it.
"""
