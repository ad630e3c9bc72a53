"""MNIST for Dense Associative Memories: full data, bundled subset, targets.

:func:`load_mnist` returns the canonical MNIST digits in the encoding the
models use: ``"continuous"`` (``2 x / 255 - 1`` in ``[-1, 1]``, as in Krotov &
Hopfield, 2016) or ``"binary"`` (``+1`` where the pixel is above 127, ``-1``
elsewhere).

Where the data come from
------------------------
``source="full"`` reads the four canonical IDX files
(``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``), each either raw or
gzipped (same name plus ``.gz``). They are looked for, in this order:

1. ``data_dir``, when given (then it is the only place looked at);
2. the directory named by the environment variable ``DAMLITE_DATA_DIR``;
3. the user cache, ``$XDG_CACHE_HOME/damlite/mnist`` (by default
   ``~/.cache/damlite/mnist``);
4. only with ``download=True``: the gzipped files that the chosen directory
   (``data_dir``, else ``$DAMLITE_DATA_DIR`` if it holds some of them, else
   the user cache) lacks are fetched there with ``pooch``
   (``pip install damlite[download]``) from :data:`MNIST_URL`.

``source="bundled"`` reads the stratified subset shipped inside the package
(``damlite/data/mnist_subset.npz``: 3000 training and 1000 test digits, the
same number of each class; see ``damlite/data/README.txt`` and
:func:`make_bundled_subset`). ``source="auto"`` (the default) takes the full
data when found, else the bundled subset; ``MnistData.source`` says which.

Every file is checked against the SHA-256 of the canonical, decompressed
file, and against its IDX magic number and shape: a missing, truncated or
corrupted file is refused with a message saying what to do, never returned.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import shutil
import tempfile
import warnings
import zipfile
import zlib
from numbers import Integral, Real
from pathlib import Path

import numpy as np

__all__ = ["MnistData", "load_mnist", "bipolar_one_hot", "make_bundled_subset",
           "default_cache_dir", "ENV_VAR", "MNIST_URL"]

#: Environment variable naming a directory that holds the MNIST files.
ENV_VAR = "DAMLITE_DATA_DIR"

#: Base URL of the canonical gzipped MNIST files used by ``download=True``.
MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"

#: SHA-256 of the canonical, *decompressed* IDX files.
SHA256 = {
    "train-images-idx3-ubyte":
        "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
    "train-labels-idx1-ubyte":
        "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
    "t10k-images-idx3-ubyte":
        "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "t10k-labels-idx1-ubyte":
        "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}

# name -> (IDX magic number, expected shape)
_LAYOUT = {
    "train-images-idx3-ubyte": (0x803, (60000, 28, 28)),
    "train-labels-idx1-ubyte": (0x801, (60000,)),
    "t10k-images-idx3-ubyte": (0x803, (10000, 28, 28)),
    "t10k-labels-idx1-ubyte": (0x801, (10000,)),
}

_BUNDLED = Path(__file__).resolve().parent / "data" / "mnist_subset.npz"
#: SHA-256 of the shipped ``damlite/data/mnist_subset.npz``.
BUNDLED_SHA256 = (
    "72f2807759e409854828b598d86aaa6bc3d38179d52056f4cb36f40809757716")

_ENCODINGS = ("continuous", "binary")
_WHAT_TO_DO = (
    f"Put the four canonical MNIST files (raw or .gz) in a directory and pass "
    f"data_dir=... or set {ENV_VAR}, or call load_mnist(download=True) "
    f"(needs `pip install damlite[download]`)."
)


@dataclasses.dataclass(frozen=True, repr=False)
class MnistData:
    """MNIST split into training, validation and test sets.

    Attributes
    ----------
    X_train, X_val, X_test : ndarray, shape (n, 784)
        Images, one flattened 28x28 digit per row, in ``encoding``.
    y_train, y_val, y_test : ndarray of int64, shape (n,)
        Labels 0..9.
    source : str
        Where the data came from: a directory, or ``"bundled subset"``.
    encoding : str
        ``"continuous"`` or ``"binary"``.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    source: str
    encoding: str

    def __repr__(self):
        return (f"MnistData(train={len(self.y_train)}, val={len(self.y_val)}, "
                f"test={len(self.y_test)}, encoding={self.encoding!r}, "
                f"dtype={self.X_train.dtype}, source={self.source!r})")


def describe_source(source: str) -> str:
    """A data source for a result record, without local paths (a directory becomes what it holds)."""
    return source if source == "bundled subset" else "full MNIST (IDX files, SHA256 checked)"


def default_cache_dir() -> Path:
    """The user cache for MNIST: ``$XDG_CACHE_HOME/damlite/mnist``.

    Returns
    -------
    Path
        ``~/.cache/damlite/mnist`` when ``XDG_CACHE_HOME`` is unset or empty.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "damlite" / "mnist"


# ---------------------------------------------------------------- reading

def _find(directory: Path, name: str) -> Path | None:
    for candidate in (directory / name, directory / (name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def _read_bytes(path: Path) -> bytes:
    if path.suffix != ".gz":
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as f:
            return f.read()
    except (EOFError, OSError, zlib.error) as err:
        raise ValueError(
            f"{path} is not a readable gzip file ({err}): it is truncated or "
            f"corrupted. Delete it and fetch it again. {_WHAT_TO_DO}") from err


def _read_idx(path: Path, name: str) -> np.ndarray:
    """Read, validate (size, magic, shape, SHA-256) and return uint8 data."""
    data = _read_bytes(path)
    magic, shape = _LAYOUT[name]
    header = 4 + 4 * len(shape)
    expected_size = header + int(np.prod(shape))
    redo = f"Delete it and fetch it again. {_WHAT_TO_DO}"
    if len(data) != expected_size:
        raise ValueError(
            f"{path} holds {len(data)} bytes (decompressed), the canonical "
            f"{name} holds {expected_size}: it is truncated or not that "
            f"file. {redo}")
    got_magic = int.from_bytes(data[:4], "big")
    got_shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big")
                      for i in range(len(shape)))
    if got_magic != magic or got_shape != shape:
        raise ValueError(
            f"{path} has IDX magic {got_magic:#x} and shape {got_shape}, "
            f"expected {magic:#x} and {shape} for {name}. {redo}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        raise ValueError(
            f"{path} has SHA-256 {digest}, the canonical {name} has "
            f"{SHA256[name]}: the file is corrupted or altered. {redo}")
    return np.frombuffer(data, np.uint8, offset=header).reshape(shape)


def _read_full(directory: Path) -> dict[str, np.ndarray]:
    """Read the four files from ``directory`` as uint8 arrays (X flattened)."""
    paths = {name: _find(directory, name) for name in SHA256}
    missing = [name for name, p in paths.items() if p is None]
    if missing:
        raise FileNotFoundError(
            f"{directory} lacks {', '.join(missing)} (raw or .gz). "
            f"{_WHAT_TO_DO}")
    arrays = {name: _read_idx(p, name) for name, p in paths.items()}
    return {
        "X_train": arrays["train-images-idx3-ubyte"].reshape(-1, 784),
        "y_train": arrays["train-labels-idx1-ubyte"],
        "X_test": arrays["t10k-images-idx3-ubyte"].reshape(-1, 784),
        "y_test": arrays["t10k-labels-idx1-ubyte"],
    }


def _has_any(directory: Path) -> bool:
    return any(_find(directory, name) is not None for name in SHA256)


def _read_bundled() -> dict[str, np.ndarray]:
    if not _BUNDLED.is_file():
        raise FileNotFoundError(
            f"The bundled subset {_BUNDLED} is missing: reinstall damlite, or "
            f"rebuild it with damlite.datasets.make_bundled_subset().")
    digest = hashlib.sha256(_BUNDLED.read_bytes()).hexdigest()
    if digest != BUNDLED_SHA256:
        raise ValueError(
            f"The bundled subset {_BUNDLED} has SHA-256 {digest}, expected "
            f"{BUNDLED_SHA256}: it is corrupted. Reinstall damlite, or "
            f"rebuild it with damlite.datasets.make_bundled_subset().")
    with np.load(_BUNDLED, allow_pickle=False) as f:
        return {k: f[k] for k in ("X_train", "y_train", "X_test", "y_test")}


# ---------------------------------------------------------------- download

def _fetch(url: str, fname: str, path: Path) -> Path:
    """Download ``url`` to ``path / fname`` with pooch; return the file."""
    try:
        import pooch
    except ImportError as err:
        raise ImportError(
            "load_mnist(download=True) needs pooch: "
            "`pip install damlite[download]` (or `pip install pooch`)."
        ) from err
    # The gzip files' own hashes are not pinned: the decompressed bytes are
    # checked against SHA256 afterwards, in _download.
    return Path(pooch.retrieve(url, known_hash=None, fname=fname,
                               path=path, progressbar=False))


def _download(directory: Path) -> None:
    """Fetch the files ``directory`` lacks; delete and refuse bad ones."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in SHA256:
        if _find(directory, name) is not None:
            continue
        path = _fetch(MNIST_URL + name + ".gz", name + ".gz", directory)
        try:
            _read_idx(Path(path), name)
        except ValueError as err:
            Path(path).unlink(missing_ok=True)
            raise ValueError(
                f"The downloaded {name}.gz from {MNIST_URL} failed its check "
                f"and was deleted: {err}") from err


# ---------------------------------------------------------------- public API

def _locate(data_dir, download: bool) -> Path | None:
    """The directory holding the full data, following the search order.

    With ``download``, the chosen directory (``data_dir``, else
    ``$DAMLITE_DATA_DIR`` if it holds some of the files, else the cache)
    gets whatever files it lacks.
    """
    if data_dir is not None:
        directory = Path(data_dir).expanduser()
    else:
        directory = None
        env = os.environ.get(ENV_VAR)
        if env:
            if _has_any(Path(env).expanduser()):
                directory = Path(env).expanduser()
            else:
                warnings.warn(f"{ENV_VAR}={env!r} holds none of the MNIST "
                              f"files; looking in the user cache next.",
                              stacklevel=3)
        if directory is None:
            directory = default_cache_dir()
    if download:
        _download(directory)
    if _has_any(directory):
        return directory
    if data_dir is not None:
        raise FileNotFoundError(
            f"data_dir={str(data_dir)!r} holds none of the MNIST files. "
            f"{_WHAT_TO_DO}")
    return None


def _split_size(validation_size, n_train: int) -> int:
    if validation_size is None:
        return n_train // 6
    if isinstance(validation_size, bool) or not isinstance(
            validation_size, Real):
        raise ValueError(f"validation_size must be None, an int or a float in "
                         f"[0, 1), not {validation_size!r}.")
    if isinstance(validation_size, Integral):
        n = int(validation_size)
    elif 0 <= validation_size < 1:
        n = int(round(validation_size * n_train))
    else:
        raise ValueError(f"validation_size={validation_size!r}: a float must "
                         f"be a fraction in [0, 1); use an int for a count.")
    if not 0 <= n < n_train:
        raise ValueError(f"validation_size={validation_size!r} must leave "
                         f"some of the {n_train} training digits: use "
                         f"0 <= validation_size < {n_train}.")
    return n


def _encode(X: np.ndarray, encoding: str, dtype: np.dtype) -> np.ndarray:
    levels = np.arange(256)
    if encoding == "continuous":
        table = 2.0 * levels / 255.0 - 1.0
    else:
        table = np.where(levels > 127, 1, -1)
    return table.astype(dtype)[X]


def load_mnist(*, source="auto", data_dir=None, encoding="continuous",
               validation_size=None, dtype="float32",
               download=False) -> MnistData:
    """Load MNIST, checked, encoded, and split into train/validation/test.

    Parameters
    ----------
    source : {"auto", "full", "bundled"}
        ``"full"``: the 70 000 canonical digits, or an error saying how to
        get them. ``"bundled"``: the subset shipped with damlite (3000 train,
        1000 test, balanced). ``"auto"``: full if found, else bundled.
    data_dir : str or Path, optional
        Directory with the four IDX files (raw or ``.gz``). When given, it is
        the only place looked at. Otherwise ``$DAMLITE_DATA_DIR``, then the
        user cache (:func:`default_cache_dir`).
    encoding : {"continuous", "binary"}
        ``"continuous"``: ``2 x / 255 - 1`` in ``[-1, 1]``; ``"binary"``:
        ``+1`` where ``x > 127``, else ``-1``.
    validation_size : int, float or None
        The validation set is the *last* ``validation_size`` digits of the
        training set (a float is a fraction of it). ``None``: one sixth, i.e.
        the last 10 000 of the 60 000 canonical training digits, or the last
        500 of the bundled 3000 (whose rows cycle through the classes 0..9,
        so this tail holds 50 of each).
    dtype : str or dtype
        Floating dtype of the images (``"binary"`` also takes signed ints).
    download : bool
        Fetch, with pooch, the files missing from ``data_dir`` (else from
        ``$DAMLITE_DATA_DIR`` or the user cache); each is checked, and
        deleted if bad. Never done unless asked.

    Returns
    -------
    MnistData
        Images of shape ``(n, 784)`` and int64 labels; ``.source`` says
        where they came from.

    Raises
    ------
    FileNotFoundError
        No full data where asked for (``source="full"`` or ``data_dir``).
    ValueError
        A bad argument, or a file that fails its size, IDX or SHA-256 check.
    """
    if source not in ("auto", "full", "bundled"):
        raise ValueError(f"source must be 'auto', 'full' or 'bundled', "
                         f"not {source!r}.")
    if encoding not in _ENCODINGS:
        raise ValueError(f"encoding must be 'continuous' or 'binary', "
                         f"not {encoding!r}.")
    dtype = np.dtype(dtype)
    if not (dtype.kind == "f" or (encoding == "binary" and dtype.kind == "i")):
        raise ValueError(f"dtype={dtype} cannot hold the {encoding!r} "
                         f"encoding: use a floating dtype such as 'float32'.")
    if source == "bundled":
        if data_dir is not None or download:
            raise ValueError("source='bundled' takes neither data_dir nor "
                             "download: use source='full' or 'auto'.")
        raw, where = _read_bundled(), "bundled subset"
    else:
        directory = _locate(data_dir, download)
        if directory is not None:
            raw, where = _read_full(directory), str(directory)
        elif source == "full":
            looked = [f"${ENV_VAR}={os.environ.get(ENV_VAR) or '(unset)'}",
                      str(default_cache_dir())]
            raise FileNotFoundError(
                f"source='full': MNIST not found (looked in "
                f"{'; '.join(looked)}). {_WHAT_TO_DO}")
        else:
            raw, where = _read_bundled(), "bundled subset"

    n_train = len(raw["y_train"])
    n_val = _split_size(validation_size, n_train)
    cut = n_train - n_val
    X_train = _encode(raw["X_train"], encoding, dtype)
    X_test = _encode(raw["X_test"], encoding, dtype)
    y_train = raw["y_train"].astype(np.int64)
    y_test = raw["y_test"].astype(np.int64)
    return MnistData(
        X_train=X_train[:cut], y_train=y_train[:cut],
        X_val=X_train[cut:], y_val=y_train[cut:],
        X_test=X_test, y_test=y_test, source=where, encoding=encoding)


def bipolar_one_hot(y, n_classes=10, dtype="float32") -> np.ndarray:
    """Targets with ``+1`` at the label and ``-1`` elsewhere (Krotov's).

    Parameters
    ----------
    y : array_like of int, shape (n,)
        Labels in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes.
    dtype : str or dtype
        Dtype of the result.

    Returns
    -------
    ndarray, shape (n, n_classes)
    """
    y = np.asarray(y)
    if y.ndim != 1 or not (y.size == 0 or np.issubdtype(y.dtype, np.integer)):
        raise ValueError(f"y must be a 1-D array of integer labels, got "
                         f"shape {y.shape} and dtype {y.dtype}.")
    if isinstance(n_classes, bool) or not isinstance(n_classes, Integral) \
            or n_classes < 1:
        raise ValueError(f"n_classes must be a positive int, not "
                         f"{n_classes!r}.")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(f"y holds labels in [{y.min()}, {y.max()}], outside "
                         f"0..{n_classes - 1}: raise n_classes.")
    out = np.full((y.size, n_classes), -1, dtype=dtype)
    out[np.arange(y.size), y.astype(np.intp)] = 1
    return out


# ---------------------------------------------------------------- the subset

def _subset_indices(labels: np.ndarray, per_class: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``per_class`` indices of each class; row ``i`` has class ``i % 10``."""
    chosen = [np.sort(rng.choice(np.flatnonzero(labels == c), per_class,
                                 replace=False)) for c in range(10)]
    return np.stack(chosen, axis=1).reshape(-1)


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Like ``np.savez_compressed``, with fixed zip timestamps: same bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED,
                         compresslevel=9) as zf:
        for key, value in arrays.items():
            info = zipfile.ZipInfo(key + ".npy",
                                   date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w") as f:
                np.lib.format.write_array(f, np.ascontiguousarray(value),
                                          allow_pickle=False)


def make_bundled_subset(data_dir, out=None, *, n_train_per_class=300,
                        n_test_per_class=100, seed=0) -> str:
    """Build the stratified subset shipped in ``damlite/data/``.

    From the canonical files in ``data_dir`` (checked as in
    :func:`load_mnist`), draws ``n_train_per_class`` training and
    ``n_test_per_class`` test digits of each class with
    ``numpy.random.default_rng(seed)`` (training first, classes 0..9 in turn,
    indices sorted within a class), and orders the rows so that row ``i``
    holds class ``i % 10``. Stores uint8 pixels ``X_*`` (n, 784), uint8 labels
    ``y_*`` and the rows' canonical indices ``idx_*``.

    Parameters
    ----------
    data_dir : str or Path
        Directory with the four canonical IDX files.
    out : str or Path, optional
        Where to write; default the packaged ``damlite/data/mnist_subset.npz``.
    n_train_per_class, n_test_per_class : int
        Digits of each class taken from the training and test files.
    seed : int
        Seed of the draw.

    Returns
    -------
    str
        The SHA-256 of the written file.
    """
    raw = _read_full(Path(data_dir))
    rng = np.random.default_rng(seed)
    idx_train = _subset_indices(raw["y_train"], n_train_per_class, rng)
    idx_test = _subset_indices(raw["y_test"], n_test_per_class, rng)
    out = Path(out) if out is not None else _BUNDLED
    out.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so that a failure never leaves a half-written file.
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".npz",
                                     delete=False) as tmp:
        tmp_path = Path(tmp.name)
    try:
        _save_npz(tmp_path, {
            "X_train": raw["X_train"][idx_train],
            "y_train": raw["y_train"][idx_train],
            "idx_train": idx_train.astype(np.int32),
            "X_test": raw["X_test"][idx_test],
            "y_test": raw["y_test"][idx_test],
            "idx_test": idx_test.astype(np.int32),
        })
        tmp_path.chmod(0o644)
        shutil.move(tmp_path, out)
    finally:
        tmp_path.unlink(missing_ok=True)
    return hashlib.sha256(out.read_bytes()).hexdigest()


if __name__ == "__main__":  # python -m damlite.datasets DATA_DIR [OUT]
    import sys
    print(make_bundled_subset(*sys.argv[1:3]))
