"""What a sweep may ask of the machine: worker processes, memory and address space, checked before any work.

* :func:`cap_workers`: ``workers`` no more than the pending blocks, :data:`WORKERS_PER_CORE` per
  usable core, and the blocks that fit in memory side by side;
* :func:`check_blocks`: each pending block's memory (its task's estimate of its own arrays plus the
  memory budget) against the machine's memory (or the GPU's), and, under an address-space limit
  (``ulimit -v``), against that limit, with what the process maps already and what numba's compiler
  and threads take. A block that cannot fit is refused up front, in one line that names it and says
  what would make it fit; the native libraries would otherwise abort later with no damlite line.

The numbers are estimates ("about"): measured on the autoassociative task (its
:func:`~damlite.sweeps.tasks.autoassociative.block_memory`) and on the runtime's overhead, below.
"""
from __future__ import annotations

import os
import resource
import sys

__all__ = ["WORKERS_PER_CORE", "NUMBA_RUNTIME", "BASE_RUNTIME", "usable_cores", "memory_total",
           "address_space_limit", "mapped_now", "fmt_bytes", "cap_workers", "check_budget", "check_blocks"]

#: Worker processes per usable core at most: a block keeps its cores busy, so more only share them.
WORKERS_PER_CORE = 2

#: Address space a sweep's process takes beyond what it maps when the sweep starts, with numba's CPU
#: kernels (the compiler, its threads and their malloc arenas) and without them (NumPy's threads and
#: arenas). Measured on a 2-core x86-64 Linux machine with the smoke profile: 499-681 MiB with numba
#: (1 and 2 threads), 209 MiB without; these are below what was measured, so a limit they refuse is
#: one the sweep cannot run under.
NUMBA_RUNTIME = 400 * 2**20
BASE_RUNTIME = 150 * 2**20


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _cgroup_limit():
    """The memory limit of this process's control group (a container's), or None."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:
            return int(text)
    return None


def memory_total(backend_name="numpy") -> int | None:
    """Bytes of memory a block may use: the GPU's for CuPy; else the machine's (or its container's
    limit, if lower). None where it cannot be told."""
    if backend_name == "cupy":
        try:
            import cupy  # noqa: PLC0415

            return int(cupy.cuda.Device().mem_info[1])
        except Exception:  # noqa: BLE001 - no answer: no check
            return None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = None
    cgroup = _cgroup_limit()
    return min(x for x in (total, cgroup) if x) if (total or cgroup) else None


def address_space_limit() -> int | None:
    """The soft address-space limit (``ulimit -v``, RLIMIT_AS) in bytes, or None when unlimited."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (AttributeError, ValueError, OSError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def mapped_now() -> int:
    """Bytes of address space this process maps now (Linux: VmSize); 0 where it cannot be told."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def fmt_bytes(n) -> str:
    """``n`` bytes for a message: "401 MiB", "1.0 GiB", "582 GiB"."""
    if n < 2**30:
        return f"{n / 2**20:.0f} MiB"
    return f"{n / 2**30:.1f} GiB" if n < 100 * 2**30 else f"{n / 2**30:.0f} GiB"


def _where(backend_name):
    return "this GPU" if backend_name == "cupy" else "this machine"


def check_budget(budget, backend_name="numpy"):
    """ValueError when the memory budget alone is more than the memory there is."""
    total = memory_total(backend_name)
    if total and budget > total:
        raise ValueError(f"memory_budget of {fmt_bytes(budget)} is more than the {fmt_bytes(total)} memory of "
                         f"{_where(backend_name)}; give a smaller one (--memory-budget, in MiB)")


def block_need(spec, block, budget) -> tuple:
    """(bytes of the block's own arrays by its task's estimate (0 without one), with the budget added)."""
    try:
        arrays = int(spec.memory(block)) if spec.memory is not None else 0
    except (KeyError, TypeError, ValueError):  # a block the estimate does not know (its task's run says why)
        arrays = 0
    return arrays, arrays + int(budget)


def _numba_wanted(backend_name) -> bool:
    """Whether this sweep will load numba's CPU kernels (DAMLITE_CPU_KERNELS allows it and numba is installed)."""
    if backend_name != "numpy":
        return False
    import importlib.util  # noqa: PLC0415

    from ..kernels import cpu_kernels  # noqa: PLC0415

    if cpu_kernels._mode() == "numpy":
        return False
    return "numba" in sys.modules or importlib.util.find_spec("numba") is not None


def check_blocks(blocks, spec, budget, backend_name, number):
    """Refuse (ValueError, one line naming the block) a block that cannot fit in memory or under
    ``ulimit -v``; ``number(block)`` gives its "i/n" for the message."""
    total = memory_total(backend_name)
    limit = address_space_limit() if backend_name == "numpy" else None  # CUDA maps what it likes
    if limit is not None:
        mapped = mapped_now()
        numba = _numba_wanted(backend_name)
        runtime = NUMBA_RUNTIME if numba else BASE_RUNTIME
    for block in blocks:
        arrays, need = block_need(spec, block, budget)
        if total and need > total:
            raise ValueError(
                f"block {number(block)} ({block.label}) needs about {fmt_bytes(need)} (its networks' own arrays, "
                f"about {fmt_bytes(arrays)}, and the {fmt_bytes(budget)} budget), more than the {fmt_bytes(total)} "
                f"memory of {_where(backend_name)}: give it a smaller grid, fewer repeats or smaller networks")
        if limit is not None and mapped + runtime + need > limit:
            what = "numba's compiler and threads" if numba else "the runtime's threads"
            space = mapped + runtime + need
            raise ValueError(
                f"the address-space limit (ulimit -v) is {fmt_bytes(limit)}, below the about {fmt_bytes(space)} "
                f"block {number(block)} ({block.label}) needs ({fmt_bytes(mapped)} mapped now, about "
                f"{fmt_bytes(runtime)} for {what}, {fmt_bytes(need)} for its arrays and the memory budget); "
                f"raise it, e.g. ulimit -v {-(-space // 2**30) * 2**20} (KiB) or ulimit -v unlimited")


def cap_workers(workers, blocks, spec, budget, backend_name, say) -> int:
    """``workers`` capped at the pending ``blocks``, :data:`WORKERS_PER_CORE` per usable core and the
    blocks that fit in memory side by side; one line said when it is capped."""
    if workers <= 1 or not blocks:
        return 1
    cores = usable_cores()
    caps = [(len(blocks), "the pending blocks"),
            (WORKERS_PER_CORE * cores, f"{WORKERS_PER_CORE} per core, {cores} core{'s' * (cores != 1)}")]
    total = memory_total(backend_name)
    if total:
        need = max(block_need(spec, b, budget)[1] for b in blocks)
        caps.append((max(1, total // max(need, 1)),
                     f"each block needs about {fmt_bytes(need)} of the {fmt_bytes(total)} memory"))
    cap, why = min(caps, key=lambda c: c[0])
    if cap >= workers:
        return int(workers)
    say(f"--workers {workers} capped at {cap}: {why}")
    return int(cap)
