"""Krotov & Hopfield's MNIST run (their notebook's configuration), one network, scored every epoch."""
from __future__ import annotations

import numpy as np

from ...datasets import describe_source

from ...classification import KROTOV_CONFIG, train_classifiers
from ..experiments import provenance

__all__ = ["run_krotov"]

def run_krotov(data, *, variant="original", epochs=300, temperature=None, out=None, eval_every=1,
               backend="auto", dtype="float64", random_state=0, progress=False, **overrides):
    """Train Krotov & Hopfield's MNIST classifier (:data:`~damlite.classification.KROTOV_CONFIG`), scoring the test set per epoch.

    ``variant="normalized"`` runs at :func:`~damlite.equivalent_temperature` of Krotov's
    T = 540 unless ``temperature`` is given: by homogeneity the same network.
    ``data`` is a :class:`damlite.datasets.MnistData`; training uses X_train (all
    of it: pass ``validation_size=0`` to ``load_mnist``). When ``out`` is a path,
    the JSON record is rewritten after every scored epoch, so a long run can be
    watched or stopped. Returns the record (a dict).
    """
    import json  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    cfg = dict(KROTOV_CONFIG)
    cfg.update(overrides)
    cfg["epochs"] = epochs
    N = data.X_train.shape[1] + 10
    if temperature is None:
        from ...model import equivalent_temperature  # noqa: PLC0415 - the model (and scikit-learn) only here

        temperature = cfg["temperature"] if variant == "original" else equivalent_temperature(cfg["temperature"], N)
    cfg["temperature"] = float(temperature)
    record = dict(
        experiment="krotov_mnist", variant=variant, config=cfg, data_source=describe_source(data.source),
        n_train=int(len(data.y_train)), n_test=int(len(data.y_test)), encoding=data.encoding,
    )

    def write(res, finished):
        acc = res.accuracy.get("test")
        record.update(
            finished=finished,
            epochs_done=int(len(res.epoch_seconds)),
            eval_epochs=res.eval_epochs.tolist(),
            test_accuracy=[] if acc is None else acc[:, 0].tolist(),
            test_macro_f1=[] if acc is None else res.f1["test"][:, 0].tolist(),
            train_loss=np.asarray(res.loss)[:, 0].tolist() if np.size(res.loss) else [],
            epoch_seconds=res.epoch_seconds.tolist(),
            median_epoch_seconds=float(np.median(res.epoch_seconds)) if len(res.epoch_seconds) else None,
            eval_seconds=res.eval_seconds,
            beta_in=float(res.beta_in[0]), beta_out=float(res.beta_out[0]),
            finite=bool(res.finite[0]),
            provenance=provenance(host=True, **res.settings),
        )
        if "test" in res.confusion:
            record["test_confusion"] = res.confusion["test"][0].tolist()
        if out is not None:
            path = Path(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(json.dumps(record, indent=1))
            tmp.replace(path)

    res = train_classifiers(
        data.X_train, data.y_train, variant=variant, eval_sets={"test": (data.X_test, data.y_test)},
        eval_every=eval_every, backend=backend, dtype=dtype, random_state=random_state, progress=progress,
        on_epoch=lambda epoch, partial: write(partial, False), **cfg,
    )
    write(res, True)
    if out is not None:  # the learned memories, small enough to keep next to the record
        np.save(Path(out).with_suffix(".memories.npy"), res.memories[0].astype(np.float16))
    record["memories"] = res.memories[0]  # not in the JSON; for the caller
    return record


