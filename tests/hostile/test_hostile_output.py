"""Issue 53, item 7: stdout on a full disk is one line on stderr and exit status 2, for every command that prints.

Each command runs in a child process whose stdout is ``/dev/full`` (every write fails with ENOSPC, as a
redirection to a full disk does). Half of them run with ``PYTHONUNBUFFERED=1``, where the first write
fails at once (argparse's ``--help`` swallows that error), the other half buffered, where the failure
comes at the end, when barsym flushes; ``--help`` runs both ways. Before, ``memory export > backup`` or
``plan --format json > f`` on a full disk was a traceback from redact.py and exit 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.hostile,
    pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system"),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "diamond_pickaxe.jsonl"
LINE = "barsym: error: cannot write to standard output: No space left on device"


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A folder with a prose plan, a run file, a memory with one plan and a call log (made in-process)."""
    from barsym.cli import main

    folder = tmp_path_factory.mktemp("full")
    (folder / "prose.txt").write_text("chop 3 logs, then make 12 planks and 4 sticks\n")
    env = {"BARSYM_LOG_DB": str(folder / "logs.db")}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        run = ["eval", "--dataset", "bar", "--limit", "1", "--planner", "symbolic", "--quiet"]
        assert main([*run, "--run", str(folder / "run.jsonl"), "--memory", str(folder / "m.sqlite"), "--record"]) == 0
        assert main(["plan", "stick", "--llm-stand-in", "copy-facts", "-o", str(folder / "p.txt")]) == 0
    return folder


def _commands(folder: Path) -> list[list[str]]:
    memory = ["memory", "--memory", str(folder / "m.sqlite")]
    return [
        ["--help"],
        ["--version"],
        ["plan", "--help"],
        ["plan", "diamond_pickaxe", "--planner", "symbolic", "--format", "json"],
        ["plan", "stick", "--llm-stand-in", "copy-facts"],
        ["validate", str(EXAMPLE)],
        ["execute", str(EXAMPLE), "--runs", "5"],
        ["repair", str(EXAMPLE)],
        ["score", str(EXAMPLE), "--scores", "simulator"],
        ["parse", str(folder / "prose.txt"), "--llm-stand-in", "copy-facts"],
        ["eval", "--dataset", "bar", "--limit", "2", "--planner", "symbolic"],
        ["report", str(folder / "run.jsonl"), "-o", "-"],
        ["datasets"],
        ["graph", "iron_pickaxe"],
        ["versions"],
        ["plan", "stick", "--planner", "symbolic", "--format", "actions"],
        ["model"],
        ["logs"],
        ["completion", "bash"],
        [*memory, "show"],
        [*memory, "stats"],
        [*memory, "export"],
    ]


def _full(argv: list[str], folder: Path, unbuffered: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update(BARSYM_LOG_DB=str(folder / "logs.db"), COLUMNS="80")
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [sys.executable, "-m", "barsym", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=folder,
            timeout=300,
        )


@pytest.mark.parametrize("number", range(22), ids=lambda n: f"command{n}")
def test_a_full_stdout_is_one_line_and_exit_2(place, number):
    argv = _commands(place)[number]
    for unbuffered in (True, False) if number == 0 else (number % 2 == 1,):
        done = _full(argv, place, unbuffered)
        assert done.returncode == 2, (argv, unbuffered, done.stderr[-2000:])
        assert done.stderr.strip().splitlines()[-1] == LINE, (argv, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
        # what the command says on stderr besides (a resolved name, a progress note) is its own; one error line
        assert done.stderr.count("barsym: error:") == 1, done.stderr


def test_every_command_that_prints_is_in_the_list(place):
    from barsym.commands import COMMANDS

    named = {argv[0] for argv in _commands(place) if not argv[0].startswith("-")}
    assert set(COMMANDS) - named == {"distill"}  # distill's summary follows a training run (tests/test_distill.py)
