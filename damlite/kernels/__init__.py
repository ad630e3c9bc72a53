"""The kernels: the hot loops of :mod:`damlite.network` and :mod:`damlite.training`, on the CPU and the GPU.

* :mod:`damlite.kernels.cpu_kernels`: optional numba CPU kernels (``DAMLITE_CPU_KERNELS``), compiled
  from ``_cpu_numba``; :mod:`damlite.kernels.cpu_fit`: whole training epochs on them;
* :mod:`damlite.kernels.gpu_kernels`: fused numba-cuda kernels (``DAMLITE_GPU_KERNELS``), compiled from
  ``_cuda_kernels``; :mod:`damlite.kernels.gpu_fit`: whole training epochs on them;
* ``_scalar``: the scalar code and interaction codes both families compile.

The arrows go one way: the model's modules call these; these import only :mod:`damlite.backend` and
:mod:`damlite.interactions` from the rest of damlite. Each falls back to the NumPy path (or CuPy's
reference path) where it cannot run.
"""
