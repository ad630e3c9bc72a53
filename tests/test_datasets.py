"""Tests of damlite.datasets: checks, encodings, splits, search order."""

import gzip
import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

from damlite import datasets
from damlite.datasets import (BUNDLED_SHA256, ENV_VAR, MNIST_URL, SHA256,
                              bipolar_one_hot, load_mnist, make_bundled_subset)

REPO = Path(__file__).resolve().parents[1]
MNIST = REPO.parent / "shared" / "data" / "mnist"
NAMES = list(SHA256)
REAL_FETCH = datasets._fetch
HAVE_MNIST = all((MNIST / n).is_file() for n in NAMES)
needs_mnist = pytest.mark.skipif(
    not HAVE_MNIST, reason=f"the canonical MNIST files are not in {MNIST}")


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No user env var, an empty private cache, and no network ever."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    def no_network(*args, **kwargs):
        raise AssertionError("a test tried to download")
    monkeypatch.setattr(datasets, "_fetch", no_network)


def linked_copy(dest: Path, skip=()) -> Path:
    """``dest`` with symlinks to the real files, except those in ``skip``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        if name not in skip:
            (dest / name).symlink_to(MNIST / name)
    return dest


def raw_real(name):
    return np.frombuffer((MNIST / name).read_bytes(), np.uint8,
                         offset=16 if "images" in name else 8)


# ---------------------------------------------------------------- bundled

def bundled_npz():
    with np.load(datasets._BUNDLED, allow_pickle=False) as f:
        return dict(f)


def test_bundled_subset_is_balanced_and_small():
    assert datasets._BUNDLED.stat().st_size <= 2_000_000
    assert hashlib.sha256(datasets._BUNDLED.read_bytes()).hexdigest() \
        == BUNDLED_SHA256
    d = load_mnist(source="bundled")
    assert d.source == "bundled subset" and d.encoding == "continuous"
    assert d.X_train.shape == (2500, 784) and d.X_val.shape == (500, 784)
    assert d.X_test.shape == (1000, 784) and d.X_train.dtype == np.float32
    for y, n in ((d.y_train, 250), (d.y_val, 50), (d.y_test, 100)):
        assert y.dtype == np.int64
        np.testing.assert_array_equal(np.bincount(y, minlength=10), [n] * 10)
    npz = bundled_npz()
    # Distinct canonical rows, no duplicate digit.
    assert len(set(npz["idx_train"])) == 3000
    assert len(set(npz["idx_test"])) == 1000


@needs_mnist
def test_bundled_subset_equals_the_real_rows(tmp_path):
    npz = bundled_npz()
    X_tr = raw_real("train-images-idx3-ubyte").reshape(-1, 784)
    y_tr = raw_real("train-labels-idx1-ubyte")
    X_te = raw_real("t10k-images-idx3-ubyte").reshape(-1, 784)
    y_te = raw_real("t10k-labels-idx1-ubyte")
    np.testing.assert_array_equal(npz["X_train"], X_tr[npz["idx_train"]])
    np.testing.assert_array_equal(npz["y_train"], y_tr[npz["idx_train"]])
    np.testing.assert_array_equal(npz["X_test"], X_te[npz["idx_test"]])
    np.testing.assert_array_equal(npz["y_test"], y_te[npz["idx_test"]])
    # And the recipe reproduces the shipped file byte for byte.
    assert make_bundled_subset(MNIST, tmp_path / "s.npz") == BUNDLED_SHA256


def test_corrupted_bundled_subset_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "mnist_subset.npz"
    data = bytearray(datasets._BUNDLED.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    monkeypatch.setattr(datasets, "_BUNDLED", bad)
    with pytest.raises(ValueError, match="SHA-256.*Reinstall"):
        load_mnist(source="bundled")
    monkeypatch.setattr(datasets, "_BUNDLED", tmp_path / "absent.npz")
    with pytest.raises(FileNotFoundError, match="make_bundled_subset"):
        load_mnist(source="bundled")


# ---------------------------------------------------------------- encodings

def test_encodings_values_and_ranges():
    npz = bundled_npz()
    x = npz["X_train"][:2500].astype(np.float64)
    c = load_mnist(source="bundled", dtype="float64")
    np.testing.assert_allclose(c.X_train, 2 * x / 255 - 1, atol=1e-15)
    assert c.X_train.min() == -1.0 and c.X_train.max() == 1.0
    b = load_mnist(source="bundled", encoding="binary")
    assert b.encoding == "binary" and b.X_train.dtype == np.float32
    np.testing.assert_array_equal(b.X_train, np.where(x > 127, 1, -1))
    assert set(np.unique(b.X_test)) == {-1.0, 1.0}
    assert load_mnist(source="bundled", encoding="binary",
                      dtype="int8").X_test.dtype == np.int8
    with pytest.raises(ValueError, match="dtype"):
        load_mnist(source="bundled", dtype="int8")  # continuous needs floats


@pytest.mark.parametrize("kwargs, match", [
    (dict(source="everything"), "source"),
    (dict(encoding="gray"), "encoding"),
    (dict(source="bundled", data_dir="."), "data_dir"),
    (dict(source="bundled", validation_size=3000), "validation_size"),
    (dict(source="bundled", validation_size=1.5), "validation_size"),
    (dict(source="bundled", validation_size=-1), "validation_size"),
    (dict(source="bundled", validation_size="10"), "validation_size"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_mnist(**kwargs)


def test_validation_split_of_the_bundled_subset():
    npz = bundled_npz()
    for size, n_val in ((None, 500), (1000, 1000), (0.1, 300), (0, 0)):
        d = load_mnist(source="bundled", validation_size=size,
                       encoding="binary")
        assert len(d.y_val) == n_val and len(d.y_train) == 3000 - n_val
        assert d.X_val.shape == (n_val, 784)
        # The validation set is the tail of the training rows: disjoint.
        idx = npz["idx_train"]
        assert not set(idx[:3000 - n_val]) & set(idx[3000 - n_val:])
        np.testing.assert_array_equal(d.y_val, npz["y_train"][3000 - n_val:])


# ---------------------------------------------------------------- full data

@needs_mnist
def test_full_data_split_and_labels():
    d = load_mnist(source="full", data_dir=MNIST, encoding="binary")
    assert d.source == str(MNIST)
    assert d.X_train.shape == (50000, 784) and d.X_val.shape == (10000, 784)
    assert d.X_test.shape == (10000, 784)
    y = raw_real("train-labels-idx1-ubyte")
    np.testing.assert_array_equal(d.y_train, y[:50000])
    np.testing.assert_array_equal(d.y_val, y[50000:])  # the last 10 000
    np.testing.assert_array_equal(d.y_test, raw_real("t10k-labels-idx1-ubyte"))
    x_val = raw_real("train-images-idx3-ubyte").reshape(-1, 784)[50000:]
    np.testing.assert_array_equal(d.X_val, np.where(x_val > 127, 1, -1))
    assert d.y_train.dtype == np.int64
    assert set(np.unique(d.y_train)) == set(range(10))


def altered(tmp_path, name, change):
    """A linked copy of the real files whose ``name`` is ``change(bytes)``."""
    d = linked_copy(tmp_path / "alt", skip=[name])
    (d / name).write_bytes(change(bytearray((MNIST / name).read_bytes())))
    return d


def flip_last(b):
    b[-1] ^= 0x01
    return bytes(b)


def bad_magic(b):
    b[3] = 0x02
    return bytes(b)


@needs_mnist
@pytest.mark.parametrize("name, change, match", [
    ("t10k-labels-idx1-ubyte", flip_last, "SHA-256.*corrupted"),
    ("t10k-images-idx3-ubyte", flip_last, "SHA-256.*corrupted"),
    ("train-labels-idx1-ubyte", lambda b: bytes(b[:-100]), "truncated"),
    ("t10k-labels-idx1-ubyte", bad_magic, "magic"),
])
def test_corrupted_or_truncated_file_is_refused(tmp_path, name, change, match):
    d = altered(tmp_path, name, change)
    for source in ("full", "auto"):  # never a silent fallback to the subset
        with pytest.raises(ValueError, match=match) as err:
            load_mnist(source=source, data_dir=d)
        assert name in str(err.value) and "fetch it again" in str(err.value)


@needs_mnist
def test_missing_file_is_refused(tmp_path):
    d = linked_copy(tmp_path / "partial", skip=["t10k-images-idx3-ubyte"])
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        load_mnist(data_dir=d)


@needs_mnist
def test_gzipped_files_are_read_and_checked(tmp_path):
    d = linked_copy(tmp_path / "gz", skip=NAMES[1:])  # train images stay raw
    for name in NAMES[1:]:
        (d / (name + ".gz")).write_bytes(
            gzip.compress((MNIST / name).read_bytes(), compresslevel=1))
    data = load_mnist(source="full", data_dir=d, validation_size=0)
    np.testing.assert_array_equal(data.y_test,
                                  raw_real("t10k-labels-idx1-ubyte"))
    assert len(data.y_train) == 60000 and len(data.y_val) == 0
    # A truncated .gz is refused.
    gz = d / "t10k-labels-idx1-ubyte.gz"
    gz.write_bytes(gz.read_bytes()[:-20])
    with pytest.raises(ValueError, match="truncated"):
        load_mnist(source="full", data_dir=d)


# ---------------------------------------------------------------- where from

@pytest.fixture
def fake_reader(monkeypatch):
    """Replace the reading of full data: report which directory was read."""
    def read(directory):
        rng = np.random.default_rng(0)
        return {"X_train": rng.integers(0, 256, (60, 784), dtype=np.uint8),
                "y_train": np.arange(60, dtype=np.uint8) % 10,
                "X_test": rng.integers(0, 256, (10, 784), dtype=np.uint8),
                "y_test": np.arange(10, dtype=np.uint8)}
    monkeypatch.setattr(datasets, "_read_full", read)


def touch_all(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        (d / name).touch()
    return d


def test_search_order(tmp_path, monkeypatch, fake_reader):
    explicit = touch_all(tmp_path / "explicit")
    env = touch_all(tmp_path / "env")
    cache = touch_all(tmp_path / "xdg" / "damlite" / "mnist")
    assert datasets.default_cache_dir() == cache
    assert load_mnist().source == str(cache)
    monkeypatch.setenv(ENV_VAR, str(env))
    assert load_mnist().source == str(env)          # env before cache
    assert load_mnist(data_dir=explicit).source == str(explicit)
    # An explicit data_dir without the files is an error, not a fallback.
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_mnist(data_dir=tmp_path / "nowhere")
    # An env var naming an empty directory: warn, then try the cache.
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "empty"))
    with pytest.warns(UserWarning, match=ENV_VAR):
        assert load_mnist().source == str(cache)


def test_auto_falls_back_to_bundled_and_full_says_what_to_do(tmp_path,
                                                             fake_reader):
    assert load_mnist().source == "bundled subset"
    with pytest.raises(FileNotFoundError) as err:
        load_mnist(source="full")
    message = str(err.value)
    assert ENV_VAR in message and "data_dir" in message
    assert "download=True" in message


def test_default_cache_without_xdg(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert datasets.default_cache_dir() == \
        Path.home() / ".cache" / "damlite" / "mnist"


# ---------------------------------------------------------------- download

def gzip_fetcher(calls, corrupt=()):
    """A stand-in for pooch: gzip the local real file into place."""
    def fetch(url, fname, path):
        calls.append((url, fname))
        name = fname[:-len(".gz")]
        data = bytearray((MNIST / name).read_bytes())
        if name in corrupt:
            data[-1] ^= 0x01
        out = Path(path) / fname
        out.write_bytes(gzip.compress(bytes(data), compresslevel=1))
        return str(out)
    return fetch


@needs_mnist
def test_download_into_the_cache(tmp_path, monkeypatch):
    cache = datasets.default_cache_dir()
    # The big file is "already there": only the three others are fetched.
    linked_copy(cache, skip=NAMES[1:])
    calls = []
    monkeypatch.setattr(datasets, "_fetch", gzip_fetcher(calls))
    d = load_mnist(source="full", download=True)
    assert d.source == str(cache) and len(d.y_test) == 10000
    assert calls == [(MNIST_URL + n + ".gz", n + ".gz") for n in NAMES[1:]]
    assert all((cache / (n + ".gz")).is_file() for n in NAMES[1:])
    # Once there, nothing more is fetched, with or without download=True.
    assert load_mnist(download=True).source == str(cache)
    assert len(calls) == 3


@needs_mnist
def test_corrupted_download_is_deleted_and_refused(tmp_path, monkeypatch):
    target = linked_copy(tmp_path / "target", skip=["t10k-labels-idx1-ubyte"])
    calls = []
    monkeypatch.setattr(datasets, "_fetch", gzip_fetcher(
        calls, corrupt=["t10k-labels-idx1-ubyte"]))
    with pytest.raises(ValueError, match="downloaded.*deleted"):
        load_mnist(data_dir=target, download=True)
    assert calls == [(MNIST_URL + "t10k-labels-idx1-ubyte.gz",
                      "t10k-labels-idx1-ubyte.gz")]
    assert not (target / "t10k-labels-idx1-ubyte.gz").exists()


def test_download_without_pooch_says_what_to_install(tmp_path, monkeypatch):
    # The real _fetch, which fails on the import, before any network.
    monkeypatch.setattr(datasets, "_fetch", REAL_FETCH)
    monkeypatch.setitem(sys.modules, "pooch", None)
    with pytest.raises(ImportError, match=r"damlite\[download\]"):
        load_mnist(source="full", download=True)


# ---------------------------------------------------------------- targets

def test_bipolar_one_hot():
    t = bipolar_one_hot(np.array([3, 0, 9]))
    assert t.shape == (3, 10) and t.dtype == np.float32
    np.testing.assert_array_equal(t.argmax(axis=1), [3, 0, 9])
    np.testing.assert_array_equal(np.sort(np.unique(t)), [-1, 1])
    assert (t == 1).sum(axis=1).tolist() == [1, 1, 1]
    np.testing.assert_array_equal(bipolar_one_hot([1], n_classes=2), [[-1, 1]])
    assert bipolar_one_hot([], dtype="float64").shape == (0, 10)
    for bad in ([10], [-1], [1.5], [[1]]):
        with pytest.raises(ValueError, match="y|n_classes"):
            bipolar_one_hot(bad)
    with pytest.raises(ValueError, match="n_classes"):
        bipolar_one_hot([0], n_classes=0)
