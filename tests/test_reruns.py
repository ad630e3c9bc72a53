"""The rounding-level reruns' comparison, the step floor as an optimiser setting, the kernel override."""
import json

import numpy as np
import pytest

from damlite.interactions import make_interaction
from damlite.paper import reruns
from damlite.training import train_memories


def _line(distances, *, repeats=2, variant="normalized", dtype="float64", backend="numpy"):
    """A result line of a 2 x 2 grid with the given per-(repeat, i, j) distances."""
    block = {"task": "autoassociative", "variant": variant, "n": 3, "grid": "coarse", "inv_temperature": [1.0, 2.0],
             "learning_rate": [0.1, 0.2], "repeats": repeats, "dtype": dtype,
             "settings": [["N", 100], ["interaction", "polynomial"]], "base_seed": 1}
    recs = [{"repeat": r, "i_T": i, "i_lr": j, "distance": distances[r][i][j]}
            for r in range(repeats) for i in range(2) for j in range(2)]
    return {"key": "k", "block": block, "records": recs, "provenance": {"backend": backend, "seconds": 1.0}}


def test_identical_rerun_has_no_noise():
    d = [[[0.0, 1.0], [3.0, 4.0]], [[0.0, 1.2], [3.0, 4.0]]]
    row = reruns.compare_blocks(_line(d), _line(d))
    assert row["identical_share"] == 1.0 and row["largest_mean_change"] == 0.0 and row["status_changes"] == 0


def test_rerun_that_moves_a_cell_across_the_good_threshold():
    a = [[[0.0, 0.4], [3.0, 4.0]], [[0.0, 0.4], [3.0, 4.0]]]
    b = [[[0.0, 0.6], [3.0, 4.0]], [[0.0, 0.4], [3.0, 4.0]]]  # one repeat's cell moves: mean 0.4 -> 0.5
    row = reruns.compare_blocks(_line(a), _line(b))
    assert row["identical_share"] == pytest.approx(7 / 8)
    assert row["largest_mean_change"] == pytest.approx(0.1)
    assert row["status_changes"] == 0  # 0.5 is still within 0.5 of the best (0)
    c = [[[0.0, 1.4], [3.0, 4.0]], [[0.0, 0.4], [3.0, 4.0]]]  # mean 0.9: no longer good
    assert reruns.compare_blocks(_line(a), _line(c))["status_changes"] == 1


def test_a_failed_network_is_not_counted_as_a_change():
    a = [[[0.0, 0.4], [3.0, None]], [[0.0, 0.4], [3.0, 4.0]]]
    row = reruns.compare_blocks(_line(a), _line(a))
    assert row["identical_share"] == 1.0 and row["largest_mean_change"] == 0.0


def test_noise_floor_matches_reruns_to_committed_blocks_by_identity(tmp_path):
    from damlite.sweeps.tasks.autoassociative import autoassociative_block  # noqa: F401 - registers the task

    d = [[[0.0, 1.0], [3.0, 4.0]], [[0.0, 1.2], [3.0, 4.0]]]
    f64, f32 = _line(d)["block"], _line(d, dtype="float32")["block"]
    assert reruns._identity(f64) != reruns._identity(f32)
    # a float32 rerun stands in for the float64 block; any other variation for the very same block
    assert reruns._as_committed(f32, "float32") == reruns._identity(f64)
    assert reruns._as_committed(f32, "one-thread") == reruns._identity(f32)
    assert reruns._as_committed(f64, "generic") == reruns._identity(f64)


def test_floor_reading_follows_rule_5():
    assert reruns._floor_reading(1e-22, 1e-12) == "follows the floor"
    assert reruns._floor_reading(1e-12, 1e-12) == "landscape"
    assert reruns._floor_reading(1e-14, 1e-12) == "undetermined"
    assert reruns._floor_reading(None, 1e-12) == "undetermined"


def test_unstable_lists_only_verdicts():
    noise = {"regrade": {"generic": {"changes": [
        {"claim": "orig_moves", "reading": "A", "item": None, "n": None, "committed": "supported", "rerun": "refuted"},
        {"claim": "orig_moves", "reading": "A", "item": "x", "n": "3", "committed": "supported", "rerun": "refuted"},
        {"claim": "orig_moves", "reading": "bottom line", "item": None, "n": None, "committed": "a", "rerun": "b"}]}}}
    out = reruns.unstable(noise)
    assert list(out) == ["orig_moves"] and list(out["orig_moves"]) == ["A"]
    assert "generic" in out["orig_moves"]["A"]


# ---------------------------------------------------------------------------- the step floor
def _tiny_fit(step_floor=None, dtype=np.float64):
    rng = np.random.default_rng(0)
    pat = np.where(rng.random((3, 8)) < 0.5, -1.0, 1.0).astype(dtype)
    mem = rng.normal(0, 0.1, (1, 4, 8)).astype(dtype)
    F = make_interaction("polynomial", 3)
    return train_memories(mem, pat, pat, F, beta_out=1e-36, learning_rate=0.1, epochs=3, random_state=0,
                          step_floor=step_floor)


def test_step_floor_decides_whether_a_tiny_gradient_moves_the_memories():
    # beta_out = 1e-36: every gradient entry is far below 1e-30, so the default floor freezes the memories,
    # while a floor of 1e-60 normalises the step to the learning rate.
    start = np.random.default_rng(0)
    start.random((3, 8))
    init = start.normal(0, 0.1, (1, 4, 8))
    frozen = np.asarray(_tiny_fit().memories)
    moved = np.asarray(_tiny_fit(1e-60).memories)
    assert np.abs(frozen - init).max() < 1e-5
    assert np.abs(moved - init).max() > 0.05


@pytest.mark.parametrize("bad", [0.0, -1e-30, 1.0, 1e-320, "1e-30", True])
def test_step_floor_is_checked(bad):
    with pytest.raises(ValueError, match="step_floor"):
        _tiny_fit(bad)


def test_step_floor_must_be_normal_in_float32():
    with pytest.raises(ValueError, match="step_floor"):
        _tiny_fit(1e-60, dtype=np.float32)


def test_json_rows_are_plain():
    d = [[[0.0, 1.0], [3.0, 4.0]], [[0.0, 1.2], [3.0, 4.0]]]
    json.dumps(reruns.compare_blocks(_line(d), _line(d, backend="cupy")))


def test_sweep_help_lists_every_profile(capsys):
    from damlite.__main__ import _parser
    from damlite.sweeps.blocks import get_task

    with pytest.raises(SystemExit):
        _parser().parse_args(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for task in ("autoassociative", "mnist"):
        for name in get_task(task).profiles:
            assert name in text, name


def _rate(variant, n, reach, top, recalls=True):
    return {"variant": variant, "n": n, "F": "A + leak", "best": 0.0, "recalls": recalls, "reach_lr": reach,
            "touches_top": top}


def test_norm_lr_on_the_rate_axis_follows_the_direction_rule():
    out = reruns.norm_lr_rate10([_rate("normalized", 3, 10.0, True), _rate("original", 3, 10.0, True),
                                 _rate("normalized", 10, 10.0, True), _rate("original", 10, 1.0, False, recalls=False),
                                 _rate("normalized", 5, 2.15, False), _rate("original", 5, 4.64, False)])
    by_n = {r["n"]: r["outcome"] for r in out}
    assert by_n == {3: "undetermined", 10: "supported", 5: "refuted"}


def test_n25_reading_follows_rule_7():
    row = lambda n, ok: {"n": n, "recalls": ok}  # noqa: E731
    assert reruns._n25_reading([row(25, False), row(20, True), row(30, True)]) == "systematic"
    assert reruns._n25_reading([row(25, True), row(20, True), row(30, True)]) == "seed-specific"
    assert reruns._n25_reading([row(25, False), row(20, False), row(30, True)]) == "undetermined"
    assert reruns._n25_reading([]) is None


def test_summary_is_none_without_files(tmp_path):
    assert reruns.summary(tmp_path) is None and reruns.noise_flags(tmp_path) == {}
