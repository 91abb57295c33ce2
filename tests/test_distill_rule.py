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
from collections import Counter
from pathlib import Path

import pytest

from barsym.llm.llamacpp.adapter import CARD

REPO = Path(__file__).resolve().parents[1]
PARAPHRASES = REPO / "tests" / "data" / "paraphrases.json"


def _stages() -> list[dict]:
    card = json.loads(CARD.read_text(encoding="utf-8"))
    return [*card.get("stages", []), {k: card[k] for k in ("data", "command", "training")}]


def _rebuild(recipe: str, out: Path, source: Path | None = None) -> Path:
    """Run the card's ``barsym distill --data-only`` command, writing to ``out`` (with the barsym in
    ``source``/src when given, else this checkout's)."""
    import os

    argv = shlex.split(recipe)
    assert argv[:3] == ["barsym", "distill", "--data-only"], recipe
    argv[3] = str(out)
    env = dict(os.environ, PYTHONPATH=str(source / "src")) if source is not None else None
    done = subprocess.run(
        [sys.executable, "-m", "barsym", *argv[1:]], capture_output=True, text=True, env=env, cwd=out.parent
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return out


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


@pytest.mark.parametrize("index", range(len(_stages())))
def test_every_stage_of_the_shipped_adapter_rebuilds_and_keeps_the_rule(index, tmp_path, kb, evaluation):
    from barsym.distill.rule import problems

    stage = _stages()[index]
    data = _rebuild(stage["data"]["recipe"], tmp_path / stage["data"]["file"])
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
def test_every_stage_s_data_rebuilds_byte_for_byte_at_the_card_s_commit(index, tmp_path):
    stage = _stages()[index]
    source = _source_at(stage["data"]["commit"], tmp_path / "source")
    data = _rebuild(stage["data"]["recipe"], tmp_path / stage["data"]["file"], source)
    assert hashlib.sha256(data.read_bytes()).hexdigest() == stage["data"]["sha256"]
