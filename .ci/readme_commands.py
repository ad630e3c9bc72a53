#!/usr/bin/env python3
"""Print one of the README's two commands for a fresh machine, exactly as the README writes it.

    python3 .ci/readme_commands.py test   # set up and run the tests
    python3 .ci/readme_commands.py book   # build the book

``.ci/run`` runs what this prints, so CI runs the README's commands verbatim;
``tests/test_readme.py`` checks what they install and run. Standard library only
(it runs before any virtual environment exists).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Two commands for a fresh machine"


def commands(text: str) -> dict[str, str]:
    """``{"book": ..., "test": ...}``: the one-line ``bash`` blocks of the README's section :data:`SECTION`."""
    if SECTION not in text:
        raise ValueError(f"README.md has no section {SECTION!r}")
    start = text.index(SECTION) + len(SECTION)
    end = text.find("\n## ", start)
    section = text[start:end if end >= 0 else len(text)]
    found = {}
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        command = block.strip()
        if "\n" in command:
            raise ValueError(f"a command of {SECTION!r} spans several lines: {command!r}")
        kind = "book" if "jupyter-book build" in command else "test" if "pytest" in command else None
        if kind is None or kind in found:
            raise ValueError(f"{SECTION!r} must hold one book command and one test command; got {command!r}")
        found[kind] = command
    if set(found) != {"book", "test"}:
        raise ValueError(f"{SECTION!r} must hold one book command and one test command; got {sorted(found)}")
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in ("book", "test"):
        print("usage: python3 .ci/readme_commands.py book|test", file=sys.stderr)
        return 2
    print(commands(README.read_text(encoding="utf-8"))[argv[0]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
