"""``tools/plan_faults.py``: why a plan written without facts fails -- an input made too few times, one never made, other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tool_modules import tool

from barsym import api
from barsym.bar_io import step_to_record
from barsym.kb import load_kb
from barsym.sim import DeterministicWorld

REPO = Path(__file__).resolve().parents[1]


def _iron_pickaxe() -> list:
    return list(api.plan("iron_pickaxe", planner="symbolic").plan)


def test_too_few_never_made_and_other_are_told_apart():
    first = tool("plan_faults").first_fault
    world = DeterministicWorld(load_kb())
    steps = _iron_pickaxe()
    sticks = next(i for i, s in enumerate(steps) if s.item == "stick")
    fewer = steps[:sticks] + [steps[sticks].model_copy(update={"count": 2})] + steps[sticks + 1 :]
    assert first(world, fewer) == ("too few", "stick")  # the sticks are made, two are not enough
    ore = next(i for i, s in enumerate(steps) if s.item == "iron_ore")
    assert first(world, steps[:ore] + steps[ore + 1 :]) == ("never made", "iron_ore")
    table = next(i for i, s in enumerate(steps) if s.item == "crafting_table")
    kind, _ = first(world, steps[:table] + steps[table + 1 :])
    assert kind == "other"  # no station: not an input short
    assert first(world, steps) is None


def test_the_tool_prints_each_failed_plan_and_the_counts(tmp_path):
    steps = _iron_pickaxe()
    ore = next(i for i, s in enumerate(steps) if s.item == "iron_ore")
    rows = [
        {"kind": "task", "key": "iron/short", "goal": {"item": "iron_pickaxe", "count": 1},
         "plan": [step_to_record(s) for s in steps[:ore] + steps[ore + 1 :]]},
        {"kind": "task", "key": "iron/ok", "goal": {"item": "iron_pickaxe", "count": 1},
         "plan": [step_to_record(s) for s in steps]},
    ]  # fmt: skip
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in [{"kind": "run", "version": 1}, *rows]))
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "plan_faults.py"), str(run)], capture_output=True, text=True, check=True
    )
    assert "iron/short: never made (iron_ore)" in done.stdout and "iron/ok" not in done.stdout
    assert "1 of 2 do not run: never made 1" in done.stdout


def test_a_file_that_is_not_a_run_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "plans.jsonl"
    bad.write_text('{"kind": "task", "key": "a"}\n')
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "plan_faults.py"), str(bad)], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("plan_faults: ")
