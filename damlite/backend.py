"""Which array library runs the numbers: NumPy, or CuPy on a GPU.

This is the only module that knows CuPy exists. Everything else asks its input
arrays for their namespace (``xp = array_namespace(x)``) and keeps results where
the inputs live.

Backend selection
-----------------
``"auto"`` (the default) picks CuPy when it imports *and* a CUDA device answers a
small allocation, otherwise NumPy. The choice is made once per process and
announced once on standard error, with the reason. The environment variable
``DAMLITE_BACKEND=numpy|cupy|auto`` replaces the default ``"auto"``. Asking for
``"cupy"`` where it cannot run raises :class:`BackendUnavailableError`.

Environment switches
--------------------
Each has one meaning wherever it is read, and a value it does not know is refused (ValueError naming
it) when a backend is first asked for, on the CPU as on a GPU: ``DAMLITE_BACKEND`` (above);
``DAMLITE_GPU_KERNELS`` (:data:`GPU_KERNEL_MODES`, :mod:`damlite.kernels.gpu_kernels`); and the
on/off switches ``DAMLITE_QUIET`` (no announcement) and ``DAMLITE_TRACEBACK`` (the command line's
tracebacks), read by :func:`env_flag`: ``0``, ``false``, ``no``, ``off`` mean off, ``1``, ``true``,
``yes``, ``on`` mean on (any case), unset or empty means the default (off).
"""
from __future__ import annotations

import os
import sys
import textwrap
from dataclasses import dataclass

import numpy as np
from array_api_compat import array_namespace, is_cupy_namespace, is_numpy_namespace
from ._version import __version__

__all__ = [
    "GPU_KERNEL_MODES",
    "env_flag",
    "env_choice",
    "check_switches",
    "BackendUnavailableError",
    "BackendInfo",
    "array_namespace",
    "pin_full_float32",
    "backend_info",
    "get_backend",
    "to_numpy",
    "as_backend_array",
    "to_device",
    "resolve_dtype",
    "auto_dtype",
    "fast_float64",
    "FAST_FLOAT64_CAPABILITIES",
]

_VALID = ("auto", "numpy", "cupy")
_DTYPES = ("float16", "float32", "float64")

#: The values of DAMLITE_GPU_KERNELS (what each means: :mod:`damlite.kernels.gpu_kernels`).
GPU_KERNEL_MODES = ("auto", "minibatch", "threepass", "reference")
_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")


def env_flag(name: str, default: bool = False) -> bool:
    """The on/off environment switch ``name``: ``0``/``false``/``no``/``off`` off, ``1``/``true``/``yes``/``on``
    on (any case), unset or empty ``default``; any other value is refused (ValueError naming it).

    >>> env_flag("DAMLITE_NO_SUCH_SWITCH")
    False
    """
    raw = os.environ.get(name, "")
    value = raw.strip().lower()
    if not value:
        return default
    if value in _ON or value in _OFF:
        return value in _ON
    raise ValueError(f"{name} must be one of {', '.join(_OFF)} (off) or {', '.join(_ON)} (on), or unset; "
                     f"got {raw!r}")


def env_choice(name: str, choices, default: str) -> str:
    """The environment switch ``name``, one of ``choices`` (any case; unset or empty: ``default``), or ValueError."""
    raw = os.environ.get(name, "")
    value = raw.strip().lower() or default
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return value


def check_switches():
    """Refuse an unknown value of any of damlite's environment switches (ValueError naming it)."""
    _requested("auto")
    env_choice("DAMLITE_GPU_KERNELS", GPU_KERNEL_MODES, "auto")
    env_flag("DAMLITE_QUIET")
    env_flag("DAMLITE_TRACEBACK")


class BackendUnavailableError(RuntimeError):
    """Raised when a backend is asked for explicitly but cannot run here."""


@dataclass(frozen=True)
class BackendInfo:
    """Which backend is active, on which device, and why."""

    name: str
    device: str
    reason: str
    detail: str = ""  # the underlying error, where the automatic choice fell back to NumPy

    def __str__(self) -> str:  # wrapped to 88 columns: a terminal's or a book page's width
        text = f"damlite {__version__}, backend: {self.name} on {self.device} ({self.reason})"
        return textwrap.fill(text, 88, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


_cache: dict[str, tuple[object, BackendInfo]] = {}
_announced = False


def _tf32_asked() -> str | None:
    """The value of ``CUPY_TF32`` where it asks CuPy for TF32 products (CuPy's rule: an integer above 0; a value
    that is not an integer counts as asking), else None."""
    raw = os.environ.get("CUPY_TF32", "").strip()
    try:
        return raw if raw and int(raw) > 0 else None
    except ValueError:
        return raw


def pin_full_float32():
    """CuPy's matrix products in float32 and complex64 at full precision whatever ``CUPY_TF32`` says; raises
    :class:`BackendUnavailableError` (one line) where CuPy offers no way to pin them and ``CUPY_TF32`` asks for TF32.

    With ``CUPY_TF32=1`` CuPy runs float32 products on TF32 tensor cores (inputs rounded to a 10-bit
    mantissa, ~1e-3 relative), which the precision chapters would not survive, and says nothing. CuPy
    reads the variable once per dtype, at its first product, and keeps the answer; this sets that answer
    for the whole process to its default compute type (what CuPy uses with ``CUPY_TF32`` unset): full
    float32 products through cuBLAS. Called where damlite chooses CuPy (:func:`get_backend`) and before each fit
    on CuPy arrays (:func:`damlite.kernels.gpu_kernels.usable`), so that a product of damlite's never runs in
    TF32, even after other code of the process switched it on. No-op where CuPy is not imported.
    """
    if "cupy" not in sys.modules:
        return
    try:
        from cupy._core import _routines_linalg as linalg  # noqa: PLC0415

        for dtype in (np.float32, np.complex64):
            linalg.set_compute_type(dtype, linalg.COMPUTE_TYPE_DEFAULT)
    except Exception as exc:  # noqa: BLE001 - CuPy's internals moved
        asked = _tf32_asked()
        if asked is not None:
            raise BackendUnavailableError(
                f"CUPY_TF32={asked} asks CuPy for TF32 float32 products (a 10-bit mantissa) and this CuPy cannot be "
                f"told otherwise ({type(exc).__name__}): unset CUPY_TF32 to run damlite on CuPy") from exc


def _probe_cupy():
    """Return (cupy module, device description) or raise with the reason."""
    try:
        import cupy  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a broken CUDA library
        raise BackendUnavailableError(f"CuPy is not importable ({type(exc).__name__}: {exc})") from exc
    pin_full_float32()  # before any product: CUPY_TF32 never decides damlite's precision
    try:
        n_devices = cupy.cuda.runtime.getDeviceCount()
        if n_devices < 1:
            raise BackendUnavailableError("CuPy is installed but no CUDA device is visible")
        probe = cupy.arange(4, dtype=cupy.float64)
        float((probe * probe).sum())  # a real kernel launch and copy back
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
    except BackendUnavailableError:
        raise
    except Exception as exc:  # CUDARuntimeError, CompileException, ...
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise BackendUnavailableError(
            f"CuPy is installed but no usable GPU ({type(exc).__name__}: {msg})"
        ) from exc
    return cupy, f"GPU {cupy.cuda.Device().id}: {name}"


def _requested(name: str | None) -> str:
    if name is None or name == "auto":
        name = os.environ.get("DAMLITE_BACKEND", "auto").strip().lower() or "auto"
        source = "DAMLITE_BACKEND"
    else:
        source = "backend"
    if not isinstance(name, str) or name not in _VALID:
        raise ValueError(f"{source} must be one of {_VALID}, got {name!r}")
    return name


def get_backend(name: str | None = "auto", *, announce: bool = True):
    """Return ``(xp, info)`` for the backend ``name`` ('auto', 'numpy' or 'cupy').

    ``xp`` is an array-API compatible namespace (array_api_compat's wrapper of
    NumPy or CuPy); ``info`` is a :class:`BackendInfo`. The automatic choice is
    printed once per process on standard error (unless ``announce=False`` or
    ``DAMLITE_QUIET`` is on). Every environment switch is checked first (:func:`check_switches`).
    """
    global _announced
    check_switches()
    requested = _requested(name)
    if requested in _cache:
        return _cache[requested]
    import array_api_compat.numpy as xp_numpy  # noqa: PLC0415

    if requested == "numpy":
        result = (xp_numpy, BackendInfo("numpy", "cpu", "asked for NumPy"))
    elif requested == "cupy":
        cupy, device = _probe_cupy()  # raises BackendUnavailableError with the reason
        import array_api_compat.cupy as xp_cupy  # noqa: PLC0415

        result = (xp_cupy, BackendInfo("cupy", device, "asked for CuPy"))
    else:
        try:
            cupy, device = _probe_cupy()
            import array_api_compat.cupy as xp_cupy  # noqa: PLC0415

            result = (xp_cupy, BackendInfo("cupy", device, "CuPy found a usable GPU"))
        except BackendUnavailableError as exc:  # the short reason on the line; the error in .detail
            reason, _, detail = str(exc).partition(" (")
            result = (xp_numpy, BackendInfo("numpy", "cpu", reason, detail[:-1] if detail.endswith(")") else detail))
        if announce and not _announced and not env_flag("DAMLITE_QUIET"):
            print(str(result[1]), file=sys.stderr)
        _announced = _announced or announce
    _cache[requested] = result
    return result


def backend_info(name: str | None = "auto") -> BackendInfo:
    """Describe the backend that ``name`` resolves to: name, device and reason.

    Examples
    --------
    >>> import damlite
    >>> damlite.backend_info("numpy").name
    'numpy'
    """
    return get_backend(name, announce=False)[1]


def to_numpy(x) -> np.ndarray:
    """Copy an array from any supported library (NumPy, CuPy, array-api-strict) to NumPy."""
    if isinstance(x, (np.ndarray, list, tuple)) or np.isscalar(x):
        return np.asarray(x)
    xp = array_namespace(x)
    if is_cupy_namespace(xp):
        return x.get()
    if is_numpy_namespace(xp):
        return np.asarray(x)
    if hasattr(x, "to_device") and "array_api_strict" in type(x).__module__:
        import array_api_strict  # noqa: PLC0415

        x = x.to_device(array_api_strict.Device("CPU_DEVICE"))
    return np.asarray(x)


def to_device(x, xp, device=None, dtype=None):
    """Move host data ``x`` into namespace ``xp`` (on ``device``), with ``dtype``."""
    if device is None:
        return xp.asarray(x, dtype=dtype)
    return xp.asarray(x, dtype=dtype, device=device)


#: Compute capabilities whose GPUs run float64 at half (or more) their float32 rate: the
#: data-centre parts P100 (6.0), V100 (7.0), A100 (8.0), H100/H200 (9.0), B200 (10.0). The
#: others (T4 7.5, A10 8.6, L4 8.9, consumer cards) run it 32-64 times slower.
FAST_FLOAT64_CAPABILITIES = ((6, 0), (7, 0), (8, 0), (9, 0), (10, 0))


def fast_float64(xp) -> bool:
    """True where float64 is about as fast as it can be: the CPU, and GPUs in :data:`FAST_FLOAT64_CAPABILITIES`."""
    if not is_cupy_namespace(xp):
        return True
    import cupy  # noqa: PLC0415

    return capability_has_fast_float64(cupy.cuda.Device().compute_capability)


def capability_has_fast_float64(capability: str) -> bool:
    """Whether a CUDA compute capability as CuPy spells it ("75", "90", "100") runs float64 fast.

    >>> capability_has_fast_float64("75"), capability_has_fast_float64("90")
    (False, True)
    """
    return (int(capability[:-1]), int(capability[-1])) in FAST_FLOAT64_CAPABILITIES


def auto_dtype(xp, variant) -> str:
    """The dtype ``"auto"`` stands for: ``"float32"`` for the normalized network on a GPU without fast
    float64 (a Colab T4, say), else ``"float64"``.

    The normalized network keeps its arguments of F near 1, so float32 holds its numbers (the
    book's chapter 3); the original network's grow like N**n and need float64.

    >>> import numpy as np
    >>> auto_dtype(np, "normalized")
    'float64'
    """
    return "float32" if variant == "normalized" and not fast_float64(xp) else "float64"


def resolve_dtype(xp, dtype, variant=None):
    """Map 'float16'/'float32'/'float64' (or an xp dtype) to the dtype object of ``xp``;
    ``"auto"`` is :func:`auto_dtype` for ``variant``."""
    if dtype == "auto":
        dtype = auto_dtype(xp, variant)
    if isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES} or 'auto', got {dtype!r}")
        return getattr(xp, dtype)
    for name in _DTYPES:
        if dtype == getattr(xp, name):
            return dtype
    raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")


def itemsize_of(dtype) -> int:
    """Bytes per element of a float dtype from any array library."""
    name = str(dtype).rsplit(".", 1)[-1].strip("'>")
    return {"float16": 2, "float32": 4, "float64": 8}.get(name, 8)


# Arrays of G networks: shared by damlite.network and the kernels below it (damlite.kernels),
# and handed on by damlite.network, which documents them.
def per_network_scalar(value, xp, G, dtype, device=None):
    """A Python float or a length-G sequence as an xp array of shape (G, 1, 1) in ``dtype``."""
    if isinstance(value, (int, float)):
        arr = xp.full((G,), float(value), dtype=dtype, device=device)
    else:
        try:
            arr = xp.asarray(value, dtype=dtype, device=device)
        except Exception:  # a NumPy array headed for another namespace
            arr = xp.asarray(np.asarray(value, dtype=np.float64), dtype=dtype, device=device)
        arr = xp.reshape(arr, (-1,))
        if arr.shape[0] == 1 and G != 1:
            arr = xp.broadcast_to(arr, (G,))
        if arr.shape[0] != G:
            raise ValueError(f"per-network values must have length {G}, got {arr.shape[0]}")
    return xp.reshape(arr, (G, 1, 1))


def neuron_index(neurons, N):
    """``neurons`` as ``(slice or int64 index array, M)``, checked against N neurons.

    A slice, a tuple ``(start, stop[, step])`` of a slice, or a 1-D sequence of
    distinct integer indices in [-N, N). Contiguous ascending indices become a
    slice (the fast path). Raises ValueError naming ``neurons`` otherwise.
    """
    if neurons is None:
        return slice(0, N), N
    if isinstance(neurons, slice):
        cols = slice(*neurons.indices(N))
    else:
        idx = np.asarray(neurons)
        if idx.size == 0 and idx.ndim == 1:
            raise ValueError(f"neurons selects no neuron, got {neurons!r}")
        if idx.dtype == bool or idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("neurons must be a slice or a 1-D array of distinct integer neuron indices, "
                             f"got {neurons!r}")
        if idx.size and (idx.min() < -N or idx.max() >= N):
            raise ValueError(f"neurons must index the {N} neurons (in [-{N}, {N})), got {neurons!r}")
        idx = np.where(idx < 0, idx + N, idx).astype(np.int64)
        if len(np.unique(idx)) != idx.size:
            raise ValueError(f"neurons must be distinct, got {neurons!r}")
        contiguous = idx.size > 0 and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size))
        cols = slice(int(idx[0]), int(idx[0]) + idx.size) if contiguous else idx
    M = len(range(*cols.indices(N))) if isinstance(cols, slice) else cols.size
    if M == 0:
        raise ValueError(f"neurons selects no neuron, got {neurons!r}")
    return cols, M


def _all_bipolar(x):
    """True when every entry of ``x`` is exactly +1 or -1 (one host sync)."""
    xp = array_namespace(x)
    return bool(xp.all(xp.abs(x) == 1))


def as_backend_array(value, xp, dtype, copy=None):
    """``value`` as an array of namespace ``xp`` and ``dtype``; through NumPy where ``xp`` cannot take it as it
    is (another library's array, e.g. CuPy's into array-api-strict)."""
    try:
        return xp.asarray(value, dtype=dtype, copy=copy)
    except Exception:  # noqa: BLE001 - any refusal: the host copy is the common ground
        return xp.asarray(np.asarray(to_numpy(value)), dtype=dtype, copy=copy)
