"""Scalar code shared by the numba CPU kernels and the numba-cuda kernels.

Plain Python functions, never called as such: each side compiles them with its own
decorator (:mod:`damlite.kernels._cpu_numba` with ``numba.njit``, :func:`damlite.kernels._cuda_kernels.scalar_kernels`
with ``numba.cuda.jit(device=True)``), so the code exists once. The built-in interactions' codes
(:func:`damlite.kernels.cpu_kernels.interaction_code`) live here too, below both kernel families.
"""

#: The built-in interactions' kinds, as the kernels take them (``code = (kind, n, slope)``).
POLYNOMIAL, RECTIFIED, LEAKY, EXPONENTIAL = 0, 1, 2, 3


def ipow(base, e, one):
    """base**e for an integer e >= 0 by repeated squaring.

    The products of :func:`damlite.interactions.integer_power` in the same order:
    result <- result * base for each set bit of e, base <- base * base between bits.
    ``one`` is 1 in the type wanted (so that float32 code stays float32).
    """
    result = one
    while e:
        if e & 1:
            result *= base
        e >>= 1
        if e:
            base *= base
    return result
