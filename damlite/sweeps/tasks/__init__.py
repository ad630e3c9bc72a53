"""The experiments that run on the sweep engine, one module each; each registers itself.

* :mod:`damlite.sweeps.tasks.autoassociative`: the paper's random-pattern recall task;
* :mod:`damlite.sweeps.tasks.mnist`: the paper's MNIST hyperparameter sweep;
* :mod:`damlite.sweeps.tasks.krotov`: Krotov & Hopfield's MNIST run (not a sweep).

:func:`damlite.sweeps.blocks.get_task` imports the first two on demand.
"""
