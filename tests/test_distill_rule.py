"""The shipped adapter's training data keeps the rule: teach knowledge, hold out tasks.

Why: the taught model's numbers on BAR's 53 and DEPS' 70 mean something only if it was never shown those
tasks' plans, the evaluation prose, or the labelled step-score plans (:mod:`barsym.distill.goals` states
the rule; :mod:`barsym.distill.rule` checks an example as the trainer sees it). So the data is not
trusted as a file someone kept: every stage's examples are rebuilt here from the card's own recipe and
every example is checked, with the code of this checkout (what a user would rebuild today). And the card's
SHA-256 is checked where it was made: the recipe run with the source of the commit the card names
(``git archive``) must write the very file the card describes, byte for byte. (A later change to the
prompts or the planner rebuilds other examples at HEAD; the rule must hold for those too.)
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from barsym.llm.llamacpp.adapter import CARD

REPO = Path(__file__).resolve().parents[1]
PARAPHRASES = REPO / "tests" / "data" / "paraphrases.json"


def _stages() -> list[dict]:
    card = json.loads(CARD.read_text(encoding="utf-8"))
    return [*card.get("stages", []), {k: card[k] for k in ("data", "command", "training")}]


def _command(recipe: str, out: Path, source: Path | None = None) -> tuple[list[str], dict | None]:
    """The card's ``barsym distill --data-only`` command as argv and env, writing to ``out`` (with the barsym in
    ``source``/src when given, else this checkout's)."""
    import os

    argv = shlex.split(recipe)
    assert argv[:3] == ["barsym", "distill", "--data-only"], recipe
    argv[3] = str(out)
    env = dict(os.environ, PYTHONPATH=str(source / "src")) if source is not None else None
    return [sys.executable, "-m", "barsym", *argv[1:]], env


def _rebuild_all(jobs: dict[int, tuple[str, Path, Path | None]]) -> dict[int, Path | str]:
    """Run every stage's recipe, as many at a time as there are cores: {index: the data file, or the error}.

    Why at once: each rebuild is a few minutes of one core, and the card has nine stages; one after the
    other they would double the suite's time on a 2-core machine."""
    import os

    waiting = sorted(jobs.items())
    running: dict[int, tuple[subprocess.Popen, Path]] = {}
    done: dict[int, Path | str] = {}
    while waiting or running:
        while waiting and len(running) < max(1, os.cpu_count() or 1):
            index, (recipe, out, source) = waiting.pop(0)
            argv, env = _command(recipe, out, source)
            with open(out.with_suffix(".err"), "wb") as errors:  # a file: a pipe no one reads while it runs can fill
                running[index] = (
                    subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, env=env, cwd=out.parent),
                    out,
                )
        for index, (process, out) in list(running.items()):
            if process.poll() is None:
                continue
            said = out.with_suffix(".err").read_text(errors="replace")
            done[index] = out if process.returncode == 0 else f"exit {process.returncode}: {said[-2000:]}"
            del running[index]
        if running:
            time.sleep(0.2)
    return done


def _built(done: dict, index: int) -> Path:
    result = done[index]
    assert isinstance(result, Path), result
    return result


def _source_at(commit: str, into: Path) -> Path:
    """The repository's files at ``commit`` (skips where this is no git checkout or lacks the commit)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the card's commit cannot be read")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "src", "data"], capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"commit {commit[:12]} is not in this clone (shallow?): {archive.stderr.decode()[:200]}")
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def test_the_card_states_the_rule():
    card = json.loads(CARD.read_text(encoding="utf-8"))
    rule = card["data"]["rule"]
    assert "teach knowledge, hold out tasks" in rule
    for words in ("whole plan", "tests/data/paraphrases.json", "labelled step"):
        assert words in rule


@pytest.fixture(scope="module")
def evaluation(kb):
    from barsym.distill.rule import Evaluation

    return Evaluation.of(kb, PARAPHRASES)


@pytest.fixture(scope="module")
def rebuilt_here(tmp_path_factory) -> dict[int, Path | str]:
    """Every stage's data rebuilt with this checkout's code."""
    jobs: dict[int, tuple[str, Path, Path | None]] = {}
    for index, stage in enumerate(_stages()):
        folder = tmp_path_factory.mktemp(f"here{index}")
        jobs[index] = (stage["data"]["recipe"], folder / stage["data"]["file"], None)
    return _rebuild_all(jobs)


@pytest.fixture(scope="module")
def rebuilt_there(tmp_path_factory) -> dict[int, Path | str | pytest.skip.Exception]:
    """Every stage's data rebuilt with the source of the commit its card names (the skip where that source
    cannot be read)."""
    jobs: dict[int, tuple[str, Path, Path | None]] = {}
    skipped: dict[int, Path | str | pytest.skip.Exception] = {}
    for index, stage in enumerate(_stages()):
        folder = tmp_path_factory.mktemp(f"there{index}")
        try:
            source = _source_at(stage["data"]["commit"], folder / "source")
        except pytest.skip.Exception as exc:
            skipped[index] = exc
            continue
        jobs[index] = (stage["data"]["recipe"], folder / stage["data"]["file"], source)
    return {**skipped, **_rebuild_all(jobs)}


@pytest.mark.parametrize("index", range(len(_stages())))
def test_every_stage_of_the_shipped_adapter_rebuilds_and_keeps_the_rule(index, rebuilt_here, kb, evaluation):
    from barsym.distill.rule import problems

    stage = _stages()[index]
    data = _built(rebuilt_here, index)
    kinds: Counter = Counter()
    broken: list[str] = []
    with open(data, encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            kinds[row["kind"]] += 1
            broken += problems(row, evaluation, kb)
    assert broken == [], f"{len(broken)} examples break the rule, e.g. {broken[:3]}"
    assert dict(kinds) == stage["data"]["kinds"]


@pytest.mark.parametrize("index", range(len(_stages())))
def test_every_stage_s_data_rebuilds_byte_for_byte_at_the_card_s_commit(index, rebuilt_there):
    stage = _stages()[index]
    result = rebuilt_there[index]
    if isinstance(result, pytest.skip.Exception):
        raise result
    data = _built(rebuilt_there, index)
    assert hashlib.sha256(data.read_bytes()).hexdigest() == stage["data"]["sha256"]
