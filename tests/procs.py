"""Process helpers shared by the sweep-engine tests (signals, worker pools)."""
from __future__ import annotations

from pathlib import Path


def child_pids(pid):
    """PIDs of the live (non-zombie) child processes of ``pid``, read from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out
