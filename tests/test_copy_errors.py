"""``tools/copy_errors.py``: where a failed forward plan stops copying the facts it was given, and how."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tool_modules import tool

REPO = Path(__file__).resolve().parents[1]
KNOWN = ["mine 3 logs", "craft 12 planks", "craft 1 crafting_table", "craft 1 furnace", "smelt 3 iron_ingot"]


def test_each_kind_of_first_wrong_line_is_told_apart():
    first = tool("copy_errors").first_wrong_line
    assert first(KNOWN[:3] + ["smelt 3 iron_ingot"], KNOWN) == (4, "skipped", "smelt 3 iron_ingot")
    assert first(KNOWN[:3] + ["craft 12 planks"], KNOWN) == (4, "repeated", "craft 12 planks")
    assert first(KNOWN[:3] + ["craft 2 furnace"], KNOWN) == (4, "count", "craft 2 furnace")
    assert first(KNOWN[:3], KNOWN) == (4, "stopped", "(nothing)")
    assert first(KNOWN[:3] + ["craft 1 chest"], KNOWN) == (4, "other", "craft 1 chest")


def test_a_plan_without_its_furnace_is_reported_as_skipping_that_line_and_a_deadline_apart(tmp_path):
    from barsym import api
    from barsym.bar_io import step_to_record

    steps = list(api.plan("iron_ingot", planner="symbolic").plan)
    furnace = next(i for i, s in enumerate(steps) if s.item == "furnace")
    broken = steps[:furnace] + steps[furnace + 1 :]
    run = tmp_path / "run.jsonl"
    rows = [
        {
            "kind": "task",
            "key": "iron/iron_ingot",
            "goal": {"item": "iron_ingot", "count": 1},
            "plan": [step_to_record(s) for s in broken],
        },
        {
            "kind": "task",
            "key": "iron/late",
            "goal": {"item": "iron_ingot", "count": 1},
            "plan": [step_to_record(s) for s in steps[:1]],
            "seconds": 45.2,
            "stats": {"deps": {"stopped": "deadline", "rounds": 3}},
        },
        {
            "kind": "task",
            "key": "iron/ok",
            "goal": {"item": "iron_ingot", "count": 1},
            "plan": [step_to_record(s) for s in steps],
        },
    ]
    run.write_text("".join(json.dumps(r) + "\n" for r in [{"kind": "run", "version": 1}, *rows]))
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "copy_errors.py"), str(run)], capture_output=True, text=True, check=True
    )
    assert (
        f"iron/iron_ingot: line {furnace + 1} skipped: wrote 'smelt 1 iron_ingot', known 'craft 1 furnace'"
        in done.stdout
    )
    assert "iron/late: cut by the deadline after 45.2 s (plan length 1)" in done.stdout  # not read as a copy error
    assert "2 of 3 not executable; first wrong line: skipped 1, deadline 1" in done.stdout


def test_a_file_that_is_not_a_run_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "plans.jsonl"
    bad.write_text('{"kind": "task", "key": "a"}\n')
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "copy_errors.py"), str(bad)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr == f"copy_errors: {bad}: not a barsym run file (its first line is not a run header)\n"
