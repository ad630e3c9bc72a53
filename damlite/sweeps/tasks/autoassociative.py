"""The paper's autoassociative task: store random bipolar patterns, recall them by relaxation.

Registered with the sweep engine (:mod:`damlite.sweeps.experiments`) as
``"autoassociative"`` with the profiles ``quick`` (minutes on a laptop CPU),
``full`` (the paper's grids: 55 blocks), ``leak`` (both networks under Krotov's
convention with the leaky F that the paper author's code used: chapter 6's
decisive experiment), ``censored`` (grids continued where the scorecard's verdicts
of 2026-11-27 were censored, and K = P at N = 250) and ``smoke`` (seconds, for tests); the
others are listed in ``book/results/autoassociative/README.md``.
"""
from __future__ import annotations

import math
import zlib

import numpy as np

from ..experiments import Block, register_task

__all__ = ["AUTOASSOCIATIVE", "CENSORED_LOWS", "GRIDS", "LEAKS", "autoassociative_block", "block_memory",
           "extend_down", "run_autoassociative_block", "task_streams"]

#: The autoassociative task's fixed choices (the paper leaves them open; see chapter 6).
AUTOASSOCIATIVE = {
    "interaction": "polynomial",  # homogeneous; no dead memories (rectified: see chapter 6)
    "memories": 100,  # K, as in the paper author's own autoassociative example
    "epochs": 200,
    "lr_decay": 0.999,
    "momentum": 0.0,
    "error_exponent": 1,
    "init_std": 0.1,  # memories ~ N(0, 0.1**2), clipped to [-1, 1]
    "max_sweeps": 20,  # asynchronous relaxation limit
}

#: Grids in the normalized network's 1/T; the original's 1/T is this divided by N (same networks, see chapter 6).
GRIDS = {
    "coarse": (tuple(np.round(np.logspace(-1, 2, 10), 6)), tuple(np.round(np.logspace(-3, 0, 10), 6))),
    "fine": (tuple(np.round(np.logspace(np.log10(0.5), np.log10(30), 12), 6)),
             tuple(np.round(np.logspace(-2, 0, 8), 6))),
}


def autoassociative_block(variant, n, grid="coarse", *, N=100, patterns=20, repeats=5, dtype="float64",
                          grids=GRIDS, **overrides) -> Block:
    """A block of the autoassociative task; the original's 1/T grid is the normalized one / N."""
    inv_t, lrs = grids[grid] if isinstance(grid, str) else grid
    name = grid if isinstance(grid, str) else "custom"
    if variant == "original":
        inv_t = tuple(float(f"{x / N:.6g}") for x in inv_t)
    settings = dict(AUTOASSOCIATIVE, N=N, patterns=patterns, **overrides)
    return Block("autoassociative", variant, int(n), name, tuple(float(x) for x in inv_t),
                 tuple(float(x) for x in lrs), int(repeats), dtype, tuple(sorted(settings.items())))


def task_streams(block: Block, repeat: int):
    """Patterns, initial memories and relaxation seed of one repeat: shared by all blocks of the
    same (N, patterns, K, base seed), so every grid cell, n and variant sees the same data
    (common random numbers)."""
    o = block.options
    ss = np.random.SeedSequence([block.base_seed, zlib.crc32(b"autoassociative"), o["N"], o["patterns"],
                                 o["memories"], repeat])
    s_pat, s_mem, s_relax = ss.spawn(3)
    patterns = np.where(np.random.default_rng(s_pat).random((o["patterns"], o["N"])) < 0.5, -1.0, 1.0)
    if o.get("init", "normal") == "uniform":  # U[0, 1), as the paper author's code before 14886c4
        memories = np.random.default_rng(s_mem).random((o["memories"], o["N"]))
    else:
        memories = np.clip(np.random.default_rng(s_mem).normal(0.0, o["init_std"], (o["memories"], o["N"])), -1, 1)
    return patterns, memories, int(s_relax.generate_state(1, np.uint64)[0] >> np.uint64(1))


def run_autoassociative_block(block: Block, *, backend="auto", dtype="float64", memory_budget=256 * 2**20):
    """Train and probe all G = cells x repeats networks of ``block``; one record per network.

    Each repeat (its grid of networks, which share patterns and initial
    memories) is one batched call; ``memory_budget`` bounds the kernels'
    intermediates. Metric: mean Euclidean distance between each learned
    pattern and the state it relaxes to (asynchronous updates, sign(0) = +1).
    For a rectified F the records also give ``inactive_memories``: the fraction
    of memories whose similarity with every pattern is <= 0 after training (the
    rectified part never switches on: with no leak such a memory is dead).
    With the setting ``relax_variants=True`` the same trained networks are also
    relaxed synchronously and asynchronously with sign(0) = -1 and sign(0) =
    "keep": ``distance_sync``, ``distance_zero_minus``, ``distance_zero_keep``.
    """
    from ...backend import get_backend, resolve_dtype, to_numpy  # noqa: PLC0415
    from ...interactions import make_interaction  # noqa: PLC0415
    from ...network import relax  # noqa: PLC0415
    from ...training import train_memories  # noqa: PLC0415

    xp, _ = get_backend(backend)
    xdt = resolve_dtype(xp, dtype)
    o = block.options
    N = o["N"]
    F = make_interaction(o["interaction"], block.n, **{k: o[k] for k in ("epsilon", "leak") if k in o})
    cells = list(block.cells())
    per_rep = block.n_cells
    records = []
    for r in range(block.repeats):
        patterns, init, relax_seed = task_streams(block, r)
        mine = cells[r * per_rep:(r + 1) * per_rep]
        inv_t = np.array([c[3] for c in mine])
        lr = np.array([c[4] for c in mine])
        G = len(mine)
        if block.variant == "original":
            beta_in, beta_out, scale = 1.0, inv_t ** block.n, 1.0
        elif block.variant == "normalized":
            beta_in, beta_out, scale = inv_t / N, 1.0, 1.0 / N
        else:
            raise ValueError(f"variant must be 'original' or 'normalized', got {block.variant!r}")
        pat = xp.asarray(patterns, dtype=xdt)
        mem = xp.asarray(np.broadcast_to(init, (G, *init.shape)).copy(), dtype=xdt)
        res = train_memories(mem, pat, pat, F, beta_in=beta_in, beta_out=beta_out, learning_rate=lr,
                             lr_decay=o["lr_decay"], momentum=o["momentum"], epochs=o["epochs"],
                             error_exponent=o["error_exponent"], random_state=0, memory_budget=memory_budget,
                             step_floor=o.get("step_floor"))
        states, converged, sweeps, finite = relax(res.memories, pat, F, scale, mode="async",
                                                  max_sweeps=o["max_sweeps"], zero_sign=1,
                                                  random_state=relax_seed, memory_budget=memory_budget)
        states = to_numpy(states).astype(np.float64)
        converged = to_numpy(converged)
        finite_all = to_numpy(finite) & res.finite
        dist = np.linalg.norm(states - patterns[None], axis=2)  # (G, P)
        extra = {}
        if o.get("relax_variants"):
            for name, mode, zero in (("sync", "sync", 1), ("zero_minus", "async", -1), ("zero_keep", "async", "keep")):
                st, _, _, fin = relax(res.memories, pat, F, scale, mode=mode, max_sweeps=o["max_sweeps"],
                                      zero_sign=zero, random_state=relax_seed, memory_budget=memory_budget)
                d_v = np.linalg.norm(to_numpy(st).astype(np.float64) - patterns[None], axis=2).mean(axis=1)
                extra[f"distance_{name}"] = np.where(to_numpy(fin) & res.finite, d_v, np.nan)
        if o["interaction"] != "polynomial":  # rectified families: memories that no pattern activates
            sims = np.einsum("gkn,pn->gkp", to_numpy(res.memories).astype(np.float64), patterns)
            inactive = (sims.max(axis=2) <= 0).mean(axis=1)  # (G,): max over patterns of zeta . xi <= 0
        for g, (rep, i, j, it, lrate) in enumerate(mine):
            ok = bool(finite_all[g])
            records.append({
                "repeat": rep, "i_T": i, "i_lr": j, "inv_temperature": it, "learning_rate": lrate,
                "distance": float(dist[g].mean()) if ok else None,
                "exact_fraction": float((dist[g] == 0).mean()) if ok else None,
                "converged_fraction": float(converged[g].mean()),
                "final_loss": float(res.loss[-1, g] / (N * o["patterns"])) if ok else None,
                "finite": ok, "failed_epoch": int(res.failed_epoch[g]), "sweeps": int(sweeps),
            })
            if o["interaction"] != "polynomial":
                records[-1]["inactive_memories"] = float(inactive[g])
            for name, values in extra.items():
                records[-1][name] = float(values[g]) if np.isfinite(values[g]) else None
    return records


def block_memory(block: Block) -> int:
    """Bytes a block's own arrays take at most, beyond the memory budget (an estimate, for the sweep's checks).

    One repeat's G = grid-cell networks live at a time: with K memories of N neurons and P patterns, about
    ``itemsize * (10 G K N + 2 G P N + 2 G K P)`` (memories, their velocities and gradients and copies;
    the relaxed states; the similarities), plus ``8 G K N`` for the float64 initial memories of a
    float32 or float16 block. Measured peak resident memory at G = 400 (numba and NumPy paths, float64):
    (N, K, P) = (100, 100, 20): 256-317 MiB (estimate 330); (50, 200, 50): 305 MiB (381);
    (200, 20, 100): 208 MiB (256).
    """
    o = block.options
    G, K, N, P = block.n_cells, o["memories"], o["N"], o["patterns"]
    item = {"float16": 2, "float32": 4}.get(block.dtype, 8)
    return item * (10 * G * K * N + 2 * G * P * N + 2 * G * K * P) + (8 * G * K * N if item < 8 else 0)


def _aa_quick():
    blocks = []
    grids = {"coarse": ((0.3, 1.0, 3.0, 10.0, 30.0), (0.05, 0.3))}
    for variant in ("original", "normalized"):
        for n in (2, 10):
            blocks.append(autoassociative_block(variant, n, "coarse", repeats=2, epochs=30, grids=grids))
    blocks.append(autoassociative_block("normalized", 10, "coarse", repeats=2, epochs=30, grids=grids, dtype="float32"))
    return blocks


def _aa_full():
    blocks = []
    for grid in ("coarse", "fine"):
        blocks += [autoassociative_block("original", n, grid) for n in (2, 3, 5, 10, 20, 30)]
        blocks += [autoassociative_block("normalized", n, grid) for n in (2, 3, 5, 10, 15, 20, 25, 30)]
    blocks += [autoassociative_block("normalized", n, "fine") for n in range(40, 101, 10)]
    blocks += [autoassociative_block("normalized", n, "coarse", dtype="float32") for n in (2, 3, 5, 10, 15, 20, 25, 30)]
    for variant in ("original", "normalized"):
        blocks += [autoassociative_block(variant, n, "coarse", N=250, patterns=30) for n in (2, 3, 5, 10, 20, 30)]
    return blocks


#: The leaks of the decisive experiment (chapter 6), in the order they run: the paper
#: author's code (+eps x) at eps = 0.01, the paper's sign (-eps x), and +x (eps = 1: the
#: author's earlier "rectified polynomial"). The homogeneous control is the full
#: profile's polynomial coarse blocks (same patterns and initial memories).
LEAKS = (("code", 0.01), ("paper", 0.01), ("code", 1.0))
LEAK_NS = (2, 3, 5, 10, 20, 30)


def _aa_leak():
    """Both networks under convention A with a non-homogeneous (leaky) F; K = 20 for one leak."""
    leaky = dict(interaction="leaky_rectified_polynomial")

    def both(leak, eps, **kw):
        return [autoassociative_block(v, n, "coarse", leak=leak, epsilon=eps, **leaky, **kw)
                for n in LEAK_NS for v in ("normalized", "original")]

    (first_leak, first_eps), *others = LEAKS
    blocks = both(first_leak, first_eps) + both(first_leak, first_eps, memories=20)  # K = 20: cheap, run early
    for leak, eps in others:
        blocks += both(leak, eps)
    return blocks


def _aa_leak250():
    """The N claim (the normalized optimum does not depend on N) under the leak readings: the
    normalized network at N = 250 (30 patterns), coarse grid, with the author's +0.01 x leak,
    then the paper's -0.01 x. CPU-sized: 12 blocks of about 8 minutes."""
    (leak, eps), (paper_leak, paper_eps), _ = LEAKS
    return [autoassociative_block("normalized", n, "coarse", N=250, patterns=30,
                                  interaction="leaky_rectified_polynomial", leak=lk, epsilon=e)
            for lk, e in ((leak, eps), (paper_leak, paper_eps)) for n in (10, 20, 5, 30, 3, 2)]


def _aa_leak_unshifted():
    """The original network with the author's leak at n = 20 on the normalized network's own
    1/T values (not divided by N): what a grid shared by both networks would show."""
    inv_t, lrs = GRIDS["coarse"]
    grids = {**GRIDS, "unshifted": (tuple(x * 100 for x in inv_t), lrs)}
    return [autoassociative_block("original", 20, "unshifted", grids=grids, interaction="leaky_rectified_polynomial",
                                  leak="code", epsilon=0.01)]


def _aa_rectified_control():
    """The leak's epsilon -> 0 limit: the (homogeneous) rectified polynomial, both networks."""
    return [autoassociative_block(v, n, "coarse", interaction="rectified_polynomial")
            for n in LEAK_NS for v in ("normalized", "original")]


#: n of the sensitivity study (chapter 6): small, middle and large.
SENSITIVITY_NS = (2, 10, 20)


def _aa_sensitivity():
    """The paper author's other choices, one at a time, on the homogeneous (polynomial) network:
    U[0, 1] initial memories; synchronous relaxation and sign(0) in {-1, keep} (same trained
    networks, ``relax_variants``); float32. 3 repeats (CPU-sized)."""
    blocks = []
    for n in SENSITIVITY_NS:
        for v in ("normalized", "original"):
            blocks.append(autoassociative_block(v, n, "coarse", repeats=3, relax_variants=True))
            blocks.append(autoassociative_block(v, n, "coarse", repeats=3, init="uniform", relax_variants=True))
    for n in SENSITIVITY_NS:
        blocks += [autoassociative_block(v, n, "coarse", repeats=3, dtype="float32") for v in ("normalized", "original")]
    return blocks


#: The normalized fine grid widened to 1/T = 1000 where the full profile's fine grid (to 30) cut the
#: good region off (n >= 30).
WIDE_GRID = (tuple(np.round(np.logspace(np.log10(0.5), 3, 14), 6)), GRIDS["fine"][1])


def _aa_wide():
    return [autoassociative_block("normalized", n, "wide", repeats=3, grids={**GRIDS, "wide": WIDE_GRID})
            for n in (30, 40, 50, 60, 70, 80, 90, 100)]


def _aa_fine250():
    """The fine grid at N = 250 (30 patterns), normalized network first (the N claim), n = 10 and 20 first."""
    order = (10, 20, 5, 30, 3, 2)
    return ([autoassociative_block("normalized", n, "fine", N=250, patterns=30) for n in order]
            + [autoassociative_block("original", n, "fine", N=250, patterns=30) for n in order])


def _aa_scorecard():
    """The paper's untested side claims (2026-11-26, commit 129bd78), CPU-sized, most decisive blocks first.

    Coarse grid, 3 repeats; repeats 0-2 see the same patterns and initial memories as the
    full profile's control (common random numbers), so each block is compared with the
    control's repeats 0-2. One setting changed at a time: learning-rate decay 1.0;
    momentum 0.9 and 0.5; error exponent m = 4 and 2 (m = 1 is the control); the
    original at n = 20 where its region vanishes (the paper's sign of the leak, fresh
    seeds, 5 repeats; the paper's grid read as convention B); last, K = 20 with the author's leak at N = 250 (the N
    claim under the K = 20 reading).
    """
    from dataclasses import replace  # noqa: PLC0415

    blocks = []

    def both(n, **kw):
        return [autoassociative_block(v, n, "coarse", repeats=3, **kw) for v in ("original", "normalized")]

    blocks += both(10, lr_decay=1.0) + both(10, momentum=0.9) + both(20, error_exponent=4)
    # the vanished region (paper, Fig. n = 20): it vanishes only under the paper's sign of the leak
    # (replicated with fresh seeds) and under reading B (the paper's 1/T_B grid, 1/T_A = (1/T_B)**(1/n))
    paper_leak = dict(interaction="leaky_rectified_polynomial", leak=LEAKS[1][0], epsilon=LEAKS[1][1])
    blocks.append(replace(autoassociative_block("original", 20, "coarse", **paper_leak), base_seed=SCORECARD_SEED))
    inv_b, lrs = GRIDS["coarse"][1], GRIDS["coarse"][1]
    grid_b = {"paper-b": (tuple(float(f"{x ** (1 / 20) * 100:.6g}") for x in inv_b), lrs)}  # / N in the block
    blocks.append(autoassociative_block("original", 20, "paper-b", repeats=3, grids=grid_b))
    blocks += both(10, momentum=0.5) + both(20, error_exponent=2) + both(10, error_exponent=4)
    blocks += both(3, lr_decay=1.0) + both(3, momentum=0.9) + both(3, error_exponent=4)
    (leak, eps), *_ = LEAKS
    blocks += [autoassociative_block("normalized", n, "coarse", N=250, patterns=30, memories=20,
                                     interaction="leaky_rectified_polynomial", leak=leak, epsilon=eps)
               for n in (10, 20, 5, 30, 3, 2)]
    return blocks


#: Base seed of the scorecard profile's replication blocks (fresh patterns and memories).
SCORECARD_SEED = 20261126


def extend_down(grid, low):
    """``grid`` = (1/T', learning rates) with its 1/T' axis continued below its low end, at the
    axis's own (log) spacing, down to ``low``; the existing values are kept as they are."""
    its, lrs = grid
    step = math.log10(its[-1] / its[0]) / (len(its) - 1)
    k = round(math.log10(its[0] / low) / step)
    return tuple(float(f"{its[0] * 10 ** (-step * i):.6g}") for i in range(k, 0, -1)) + tuple(its), tuple(lrs)


#: Where the coarse grid is continued down to (2026-11-27, commit c8372fb), in each network's own 1/T: the good region
#: there is a plateau (for a small beta_out the normalised step does not depend on 1/T) that ends where
#: the optimiser's step floor (1e-30, as in Krotov's and the author's code) stops training; measured on
#: repeat 0 before the runs: original n = 3 from 1/T ~ 1e-12, n = 5 from ~1e-7 (all three Fs), normalized
#: n = 10 (homogeneous F) from 1/T' ~ 0.03. Each limit is a row or two past that edge.
CENSORED_LOWS = {("original", 3): 1e-13, ("original", 5): 1e-9, ("normalized", 10): 1e-3}


def _aa_censored():
    """Blocks that settle verdicts the scorecard could only call censored (2026-11-27), most decisive first.

    (a) the original at n = 3 and 5 on the coarse grid continued below 1/T = 1e-3 at its spacing (a
    third of a decade) until training stops (:data:`CENSORED_LOWS`), under reading A (homogeneous F),
    the author's +0.01x leak and the paper's -0.01x leak; (b) the normalized network (homogeneous F)
    at n = 10 on the coarse grid continued below 1/T' = 0.1, likewise. Grid ``coarse-ext``: the coarse
    grid's own rows and learning rates plus the new rows, one self-contained block per (network, n, F),
    5 repeats, the base seed of the blocks they extend (the same patterns and initial memories per
    repeat: common random numbers). (c) "A + leak, K = 20" made K = P at N = 250: the normalized
    network with the author's leak at N = 250, 30 patterns and K = 30 memories, otherwise the scorecard
    profile's K = 20 blocks (coarse grid, 5 repeats); K is part of the data's seed, so these blocks
    see other patterns than the K = 20 ones.
    """
    def ext(variant, n, **kw):
        low = CENSORED_LOWS[(variant, n)] * (100 if variant == "original" else 1)  # grids are in 1/T' = N/T, N = 100
        grid = extend_down(GRIDS["coarse"], low)
        return autoassociative_block(variant, n, "coarse-ext", grids={**GRIDS, "coarse-ext": grid}, **kw)

    (leak, eps), (paper_leak, paper_eps), _ = LEAKS
    leaky = dict(interaction="leaky_rectified_polynomial", epsilon=eps)
    blocks = [ext("original", n) for n in (3, 5)] + [ext("normalized", 10)]
    blocks += [ext("original", n, leak=leak, **leaky) for n in (3, 5)]
    blocks += [ext("original", n, **dict(leaky, leak=paper_leak, epsilon=paper_eps)) for n in (3, 5)]
    blocks += [autoassociative_block("normalized", n, "coarse", N=250, patterns=30, memories=30, leak=leak, **leaky)
               for n in (10, 20, 5, 30, 3, 2)]
    return blocks


#: The optimiser setting of the floor runs (2026-11-29): the normalised step's floor 1e-60 instead of 1e-30.
LOW_FLOOR = 1e-60
#: Where the floor runs' grid goes down to, in each network's own 1/T (``CENSORED_LOWS`` with the floor's 30
#: decades spread over n: the gradient scales like (1/T)**n, so with the floor 1e-30 lower the edge would move
#: 30/n decades down if the floor sets it), sampled a decade apart below the censored grid's last row.
FLOOR_LOWS = {3: 1e-23, 5: 1e-15}


def floor_grid(n):
    """The floor runs' 1/T' rows (N = 100): a decade apart from a decade above the censored grid's last row (two rows
    shared with it, where the two floors are compared) down to :data:`FLOOR_LOWS`, with the coarse grid's ten
    learning rates."""
    top = CENSORED_LOWS[("original", n)]
    rows = [float(f"{top * 10 ** -k * 100:.6g}") for k in range(-1, round(math.log10(top / FLOOR_LOWS[n])) + 1)]
    return tuple(sorted(rows)), GRIDS["coarse"][1]


def _aa_floor():
    """Landscape or the optimiser's floor (pre-registered 2026-11-29)? The original at n = 3 and 5 below the censored
    grid, with the normalised step's floor 1e-60 (``step_floor``; its default 1e-30 unchanged), under reading A
    (homogeneous F), the author's +0.01x leak and the paper's -0.01x leak; 3 repeats, the censored blocks' seeds;
    then the censored blocks' last two rows again with the new floor, where the two floors must agree."""
    (leak, eps), (paper_leak, paper_eps), _ = LEAKS
    fs = ({}, dict(interaction="leaky_rectified_polynomial", leak=leak, epsilon=eps),
          dict(interaction="leaky_rectified_polynomial", leak=paper_leak, epsilon=paper_eps))
    return [autoassociative_block("original", n, "floor-ext", grids={"floor-ext": floor_grid(n)}, repeats=3,
                                  step_floor=LOW_FLOOR, **f)
            for n in (3, 5) for f in fs]


#: The learning-rate axis continued past 1 (to 10) at the coarse grid's spacing, with 1 kept as the overlap.
RATE_PAST_ONE = (1.0, 2.15443, 4.64159, 10.0)


def _aa_rate10():
    """Does the normalized network's region reach larger learning rates than the original's (pre-registered
    2026-11-29)? The coarse 1/T rows at learning rates 1 to 10, both networks, n = 3 and 10, under the readings where
    the two networks differ (the author's +0.01x leak, the paper's -0.01x leak) and under reading A (one network:
    the normalized network only). 5 repeats, the coarse blocks' seeds."""
    (leak, eps), (paper_leak, paper_eps), _ = LEAKS
    grid = {"rate10": (GRIDS["coarse"][0], RATE_PAST_ONE)}
    blocks = []
    for n in (3, 10):
        for lk, e in ((leak, eps), (paper_leak, paper_eps)):
            blocks += [autoassociative_block(v, n, "rate10", grids=grid, interaction="leaky_rectified_polynomial",
                                             leak=lk, epsilon=e) for v in ("normalized", "original")]
        blocks.append(autoassociative_block("normalized", n, "rate10", grids=grid))
    return blocks


#: Base seed of the n = 25 replication (2026-11-29): fresh patterns and initial memories.
N25_SEED = 20261129


def _aa_n25():
    """Why does the normalized network fail to recall at n = 25 alone (pre-registered 2026-11-29)? n = 20, 25 and 30
    on the coarse grid with fresh patterns and initial memories (5 repeats), then n = 25 in float32."""
    from dataclasses import replace  # noqa: PLC0415

    blocks = [replace(autoassociative_block("normalized", n, "coarse"), base_seed=N25_SEED) for n in (25, 20, 30)]
    return blocks


def _aa_parity():
    """Exploratory, after the n = 25 replication failed again (2026-11-29, not pre-registered): the normalized network
    with the homogeneous polynomial F at n = 21 ... 27 on the coarse grid, one repeat (the full profile's first
    patterns and memories). A 5 x 2 trial grid had recalled at n = 24 and 26 and failed at 23, 25 and 27."""
    return [autoassociative_block("normalized", n, "coarse", repeats=1) for n in range(21, 28)]


def noise_blocks():
    """The committed blocks rerun at rounding level (pre-registered 2026-11-29), a stratified sample, cheapest
    first: every reading, small and large n, both networks. Each is the very block on file (same settings, grid and
    seeds), computed there on this project's CPU with the numba kernels (reading A's normalized n = 25 on a GPU);
    the variations are the machine's (kernel, threads, NumPy; see ``book/results/noise/README.md``)."""
    (leak, eps), (paper_leak, paper_eps), _ = LEAKS
    leaky = dict(interaction="leaky_rectified_polynomial", epsilon=eps)
    pick = {b.label: b for b in _aa_censored() + _aa_fine250()}
    return [autoassociative_block("normalized", 10, "coarse", memories=20, leak=leak, **leaky),   # A + leak, K = 20
            autoassociative_block("original", 5, "coarse", leak=leak, **leaky),                   # A + leak
            autoassociative_block("normalized", 30, "coarse", leak=paper_leak, **leaky),          # A - leak
            [b for b in _aa_censored() if b.variant == "normalized" and b.grid == "coarse-ext"][0],  # A, n = 10
            autoassociative_block("original", 3, "coarse", leak=paper_leak, **leaky),             # A - leak
            autoassociative_block("normalized", 20, "coarse", leak=leak, **leaky),                # A + leak
            [b for b in pick.values() if b.variant == "original" and b.n == 3 and b.grid == "fine"][0],  # A, N = 250
            autoassociative_block("normalized", 25, "coarse")]                                    # A (a GPU block)


def _aa_noise_f32():
    """The float32 side of the noise floor: the normalized blocks of :func:`noise_blocks` in float32 (the original
    network's scale needs float64)."""
    from dataclasses import replace  # noqa: PLC0415

    return [replace(b, dtype="float32") for b in noise_blocks() if b.variant == "normalized"]


def _aa_smoke():
    """Seconds in all: tiny networks, for tests and CI."""
    grids = {"coarse": ((1.0, 3.0), (0.1, 0.3))}
    return [autoassociative_block(v, n, "coarse", N=16, patterns=3, repeats=2, grids=grids, memories=8, epochs=15)
            for n in (2, 3, 4) for v in ("original", "normalized")]


register_task("autoassociative", run_autoassociative_block,
              profiles={"quick": _aa_quick, "full": _aa_full, "leak": _aa_leak, "leak-unshifted": _aa_leak_unshifted,
                        "leak250": _aa_leak250,
                        "rectified": _aa_rectified_control,
                        "sensitivity": _aa_sensitivity, "wide": _aa_wide, "fine250": _aa_fine250,
                        "scorecard": _aa_scorecard, "censored": _aa_censored, "smoke": _aa_smoke,
                        "floor": _aa_floor, "rate10": _aa_rate10, "n25": _aa_n25, "noise": noise_blocks,
                        "parity": _aa_parity,
                        "noise-f32": _aa_noise_f32},
              memory=block_memory)
