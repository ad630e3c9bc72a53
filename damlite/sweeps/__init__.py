"""The sweep engine: blocks, the engine that runs them, result files and the tasks.

* :mod:`damlite.sweeps.blocks`: what a sweep is made of, and the task registry;
* :mod:`damlite.sweeps.experiments`: the engine (``python -m damlite sweep``), resumable and batched;
* :mod:`damlite.sweeps.resultfiles`: one JSON line per finished block;
* :mod:`damlite.sweeps.limits`: workers, memory and address space, checked before any work;
* :mod:`damlite.sweeps.tasks`: the experiments that run on it, one module each.

It uses the model (:mod:`damlite.network`, :mod:`damlite.training`, ...); the model never imports it.
"""
