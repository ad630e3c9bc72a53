r"""How a relaxation ended, per probe, and the energy it descends: the estimator's ``relax`` and ``energy``.

A relaxation applies :math:`\xi_i \leftarrow \operatorname{sign}\Delta_i` until a sweep changes nothing
(a *fixed point*) or ``max_sweeps`` runs out. Asynchronous updates lower the energy

.. math:: E(\xi) = -\sum_{\mu=1}^{K} F\big(a\, \zeta^\mu \cdot \xi\big)

at every flip (a = 1 for the original network, 1/N for the normalized one), so they settle; synchronous
updates can instead alternate between two states for ever (a *2-cycle*). :func:`relax_states` says which
happened to each probe and warns with :class:`RelaxationWarning` when any probe did not settle.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .backend import to_numpy
from ._monitor import overflow_error, warn_underflow
from .network import energy_difference, quiet_numpy, relax, similarities
from .validation import user_stacklevel

__all__ = ["STATUSES", "RelaxResult", "RelaxationWarning", "energy", "relax_states"]

#: What ``RelaxResult.status`` holds for each probe.
STATUSES = ("fixed_point", "cycle", "max_sweeps")


class RelaxationWarning(UserWarning):
    """Some probes did not reach a fixed point: caught in a 2-cycle (``mode="sync"``) or out of ``max_sweeps``."""


class RelaxResult(NamedTuple):
    """The end of a relaxation.

    ``states`` (B, N) on the estimator's backend; ``converged`` (B,) True where a sweep changed nothing;
    ``n_sweeps`` the sweeps run; ``status`` (B,) one of ``STATUSES`` per probe ("fixed_point";
    "cycle": two states that turn into each other under ``mode="sync"``; "max_sweeps": still moving when
    the sweeps ran out); with ``record=True`` also ``trajectory`` (S + 1, B, N), the states before the
    first sweep and after each, and ``energies`` (S + 1, B) their energies E, as NumPy arrays.
    """

    states: object
    converged: object
    n_sweeps: int
    status: object = None
    trajectory: object = None
    energies: object = None


def energy(est, xi):
    """E(xi) = -sum_mu F(a zeta^mu . xi) of the (B, N) states ``xi`` under ``est``'s memories, shape (B,)."""
    xp, mem = est.xp_, est.memories_
    a = est.scales(mem.shape[1])[0]
    with quiet_numpy():
        return -xp.sum(est.interaction_(a * similarities(mem[None], xi)[0]), axis=-1)


def _step(est, xi, zero_sign, a):
    """One synchronous sweep of ``xi`` (the test for a 2-cycle)."""
    return relax(est.memories_[None], xi, est.interaction_, a, mode="sync", max_sweeps=1, zero_sign=zero_sign,
                 rescale=est.scaling == "adaptive", memory_budget=est._budget)[0][0]


def relax_states(est, xi, *, mode, max_sweeps, zero_sign, seed, record):
    """Relax the checked (B, N) states ``xi``: a :class:`RelaxResult`; overflow raises, underflow warns.

    ``seed`` is an int or None (a Generator drawn from already). With ``record`` the sweeps run one at
    a time from one Generator, so the orders, and the states, are those of the run without ``record``.
    """
    mem, a = est.memories_[None], est.scales(xi.shape[1])[0]
    kwargs = dict(mode=mode, zero_sign=zero_sign, rescale=est.scaling == "adaptive", memory_budget=est._budget)
    trajectory = energies = None
    if not record:
        out, converged, sweeps, finite = relax(mem, xi, est.interaction_, a, max_sweeps=max_sweeps,
                                               random_state=seed, **kwargs)
        out, converged = out[0], converged[0]
    else:
        rng, out, finite = np.random.default_rng(seed), xi, True
        trajectory, energies = [to_numpy(xi)], [to_numpy(energy(est, xi))]
        for sweeps in range(1, max_sweeps + 1):
            new, converged, _, ok = relax(mem, out, est.interaction_, a, max_sweeps=1, random_state=rng, **kwargs)
            out, converged, finite = new[0], converged[0], finite and bool(ok[0])
            trajectory.append(to_numpy(out))
            energies.append(to_numpy(energy(est, out)))
            if bool(est.xp_.all(converged)):
                break
        trajectory, energies = np.stack(trajectory), np.stack(energies)
        finite = np.array([finite])
    done = np.asarray(to_numpy(converged), dtype=bool)
    status = np.where(done, "fixed_point", "max_sweeps").astype(object)
    if not done.all() and mode == "sync":
        moving = est.xp_.asarray(np.flatnonzero(~done), device=getattr(out, "device", None))
        rest = est.xp_.take(out, moving, axis=0)
        back = _step(est, _step(est, rest, zero_sign, a), zero_sign, a)
        cycling = np.asarray(to_numpy(est.xp_.all(back == rest, axis=1)), dtype=bool)
        status[np.flatnonzero(~done)[cycling]] = "cycle"
    if not bool(np.all(np.asarray(to_numpy(finite)))):
        raise overflow_error(est, "relax", xi.shape[1])
    with quiet_numpy():
        _, underflow = energy_difference(mem, out, est.interaction_, a, rescale=est.scaling == "adaptive",
                                         memory_budget=est._budget, return_underflow=True)
    if bool(underflow[0]):
        warn_underflow(est, xi.shape[1])
    if not done.all() and max_sweeps > 1:
        _warn_not_settled(status, mode, max_sweeps)
    return RelaxResult(out, converged, sweeps, status, trajectory, energies)


def _warn_not_settled(status, mode, max_sweeps):
    cycles, out = int(np.sum(status == "cycle")), int(np.sum(status == "max_sweeps"))
    parts = []
    if cycles:
        parts.append(f"{cycles} alternate between two states (mode={mode!r} can; mode='async' settles)")
    if out:
        parts.append(f"{out} were still changing after max_sweeps={max_sweeps} (raise max_sweeps)")
    warnings.warn(f"relaxation: {cycles + out} of {status.size} probes did not reach a fixed point: "
                  f"{'; '.join(parts)}; RelaxResult.status says which", RelaxationWarning, stacklevel=user_stacklevel())
