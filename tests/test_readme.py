"""The README runs as written: its two commands for a fresh machine are what CI runs, every
``python -m damlite`` command in it parses (the cheap ones run), its Python runs, and its layout table
names the modules and the registered tasks that exist."""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
ENV = {**os.environ, "MPLBACKEND": "Agg"}

_spec = importlib.util.spec_from_file_location("readme_commands", ROOT / ".ci" / "readme_commands.py")
readme_commands = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_commands)


def _section(title: str) -> str:
    """The README's text under ``## title``, up to the next ``## `` heading."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end >= 0 else len(README)]


def _blocks(lang: str, text: str = README) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _damlite_commands() -> list[str]:
    """Every ``python -m damlite ...`` command of the README: its bash blocks (comments dropped, ``for p in
    a b; do ... $p ...; done`` expanded, environment assignments in front dropped) and its inline code."""
    found = []
    for block in _blocks("bash"):
        loop = None
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if m := re.match(r"for (\w+) in (.*); do$", line):
                loop = (m.group(1), m.group(2).split())
            elif line == "done":
                loop = None
            elif "python -m damlite" in line:
                cmd = line[line.index("python -m damlite"):]
                found += [cmd.replace("$" + loop[0], v) for v in loop[1]] if loop else [cmd]
    found += re.findall(r"`(python -m damlite(?: [^`]*)?)`", README)  # not python -m damlite.paper.reruns
    return found


def _argv(command: str) -> list[str]:
    """The arguments after ``python -m damlite``; the README's placeholders TASK and PROFILE filled in."""
    argv = shlex.split(command)[3:]
    return [{"TASK": "autoassociative", "PROFILE": "quick"}.get(a, a) for a in argv]


# --------------------------------------------------------------------------- the two commands
def test_the_two_commands_for_a_fresh_machine_are_what_ci_runs():
    cmds = readme_commands.commands(README)
    venv = "python3 -m venv .venv && . .venv/bin/activate && pip install uv && "
    # each installs its lock (tests/test_lock.py: the locks agree with pyproject.toml and requirements.txt)
    install = "uv pip install --no-deps -r requirements/{}.txt -e . && "
    assert cmds["test"].startswith(venv + install.format("dev") + "python -m pytest"), cmds["test"]
    assert cmds["book"].startswith(venv + install.format("book") + "jupyter-book build . -W"), cmds["book"]
    # .ci/run takes both from the README (not a copy of them), runs each in a virtual environment of its own,
    # and then the rest of the full suite that the README names
    for kind in ("test", "book"):
        assert f"readme_commands.py {kind})" in CI_RUN and f'bash -c "${kind}_cmd"' in CI_RUN
    assert "rm -rf .venv" in CI_RUN and "git clone" in CI_RUN
    assert "python -m pytest -n 2 --full -m slow" in CI_RUN and "python -m pytest -n 2 --full" in README


def test_readme_commands_refuses_a_section_without_both_commands():
    with pytest.raises(ValueError, match="one book command and one test command"):
        readme_commands.commands("## Two commands for a fresh machine\n\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="no section"):
        readme_commands.commands("# nothing here\n")


# --------------------------------------------------------------------------- the command line
def test_every_damlite_command_parses_with_a_registered_task_and_profile():
    from damlite.__main__ import _parser
    from damlite.sweeps.blocks import get_task

    commands = _damlite_commands()
    assert any(" sweep " in c for c in commands) and any(" list " in c for c in commands)
    parser = _parser()
    for command in commands:
        argv = _argv(command)
        if "--help" in argv:
            continue  # run below
        args = parser.parse_args(argv)
        if args.command in ("sweep", "list"):
            spec = get_task(args.task)
            assert args.profile is None or args.profile in spec.profiles, (command, sorted(spec.profiles))


def test_the_cheap_commands_run():
    """``--help`` and ``list`` run as written (``list`` reads nothing but an absent result file)."""
    ran = set()
    for command in _damlite_commands():
        argv = _argv(command)
        if argv[:1] == ["--help"] or argv[:1] == ["list"]:
            if tuple(argv) in ran:
                continue
            ran.add(tuple(argv))
            out = subprocess.run([sys.executable, "-m", "damlite", *argv], cwd=ROOT, env=ENV, capture_output=True,
                                 text=True, timeout=120)
            assert out.returncode == 0, (command, out.stderr[-2000:])
            assert out.stdout.strip(), command
    assert {a[0] for a in ran} == {"--help", "list"}


# --------------------------------------------------------------------------- the Python
def test_the_ten_lines_run(tmp_path):
    """The README's first Python block, as written, in a fresh interpreter (the second trains a classifier on
    the bundled digits: the book's Quickstart runs it)."""
    code = _blocks("python", _section("damlite in ten lines"))[0]
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "bits wrong after relaxing:" in out.stdout


# --------------------------------------------------------------------------- the layout table
def test_the_layout_table_names_files_that_exist_and_the_registered_tasks():
    from damlite.sweeps.blocks import BUILTIN_TASKS

    table = _section("Layout")
    rows = re.findall(r"^\| `([^`]+)`(?:, `([^`]+)`)? \| (.*) \|$", table, re.M)
    assert len(rows) >= 10
    for first, second, what in rows:
        path = ROOT / first
        assert path.exists(), first
        if second:
            assert (path.parent / second).exists(), second
        for name in re.findall(r"`(\w+\.py)`", what):  # the modules a folder's (or a module's) row names
            assert list((path if path.is_dir() else path.parent).rglob(name)), (first, name)
    sweeps = dict((r[0], r[2]) for r in rows)["damlite/sweeps/"]
    m = re.search(r"the sweep tasks, each registering itself \(([^)]*)\)", sweeps)
    assert m, "the damlite/sweeps/ row names the registered tasks"
    assert re.findall(r"`(\w+)`", m.group(1)) == sorted(BUILTIN_TASKS)
