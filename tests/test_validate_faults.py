"""Inject each fault class into executable expert plans; the validator must name it at the right step.

Expected steps are derived from the plan itself (not hard-coded), so every
executable expert plan that admits a fault is a test case.
"""

from __future__ import annotations

import math

import pytest

from barsym.bar_io import read_plan
from barsym.model import Plan, Step, StepType
from testdata import EXPERT_FILES

PLANS = {p.stem: read_plan(p) for p in EXPERT_FILES}
NAMES = sorted(PLANS)


@pytest.fixture(scope="module")
def executable(validator):
    return {name: plan for name, plan in PLANS.items() if validator.validate(plan).valid}


def _with(plan: Plan, steps) -> Plan:
    return Plan(steps=tuple(steps), source=plan.source)


def _first_failure(validator, plan):
    result = validator.validate(plan)
    assert not result.valid, "the injected fault went unnoticed"
    error = result.errors[0]  # the rollout goes on: later steps may fail too, the first is the fault
    assert error.step == result.failed_step or error.step is None
    return error


def test_almost_all_expert_plans_are_executable(executable):
    assert len(executable) == 52  # note_block asks 21 planks from 5 logs


@pytest.mark.parametrize("name", NAMES)
def test_drop_each_dig_down(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    digs = [i for i, s in enumerate(plan.steps) if s.type is StepType.DIG_DOWN]
    for index in digs:
        mutated = _with(plan, plan.steps[:index] + plan.steps[index + 1 :])
        error = _first_failure(validator, mutated)
        assert error.code == "wrong_layer"
        assert error.step == index + 1  # the mine step that followed now fails
        assert mutated.steps[error.step - 1].type is StepType.MINE


@pytest.mark.parametrize("name", NAMES)
def test_lower_the_tool_tier(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    cases = 0
    for index, step in enumerate(plan.steps):
        if step.type is StepType.MINE and step.tool in ("stone_pickaxe", "iron_pickaxe"):
            lower = "wooden_pickaxe" if step.tool == "stone_pickaxe" else "stone_pickaxe"
            mutated = _with(
                plan, plan.steps[:index] + (step.model_copy(update={"tool": lower}),) + plan.steps[index + 1 :]
            )
            error = _first_failure(validator, mutated)
            assert (error.code, error.step, error.item) == ("tool_tier_too_low", index + 1, lower)
            cases += 1
    if cases == 0:
        pytest.skip("no stone or iron tier mining in this plan")


@pytest.mark.parametrize("name", NAMES)
def test_drop_the_crafting_table(validator, executable, name, kb):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    index = next(i for i, s in enumerate(plan.steps) if s.item == "crafting_table")
    mutated = _with(plan, plan.steps[:index] + plan.steps[index + 1 :])
    expected = next(
        i
        for i, s in enumerate(mutated.steps)
        if s.type is StepType.CRAFT and all(r.needs_table for r in kb.crafts[kb.resolve(s.item)])
    )
    error = _first_failure(validator, mutated)
    assert (error.code, error.step, error.item) == ("missing_station", expected + 1, "crafting_table")


@pytest.mark.parametrize("name", NAMES)
def test_cut_the_log_count(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    logs = next(i for i, s in enumerate(plan.steps) if s.item == "logs")
    planks = next(i for i, s in enumerate(plan.steps) if s.item == "planks")
    cut = plan.steps[logs].count - 1
    if cut == 0 or 4 * cut >= plan.steps[planks].count:
        pytest.skip("one log fewer still makes the planks this plan asks for")
    mutated = _with(
        plan, plan.steps[:logs] + (plan.steps[logs].model_copy(update={"count": cut}),) + plan.steps[logs + 1 :]
    )
    error = _first_failure(validator, mutated)
    assert (error.code, error.step, error.needed, error.had) == (
        "missing_ingredient",
        planks + 1,
        math.ceil(plan.steps[planks].count / 4),
        cut,
    )


@pytest.mark.parametrize("name", NAMES)
def test_cut_the_ore_count(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    smelts = [
        i for i, s in enumerate(plan.steps) if s.type is StepType.SMELT and s.item in ("iron_ingot", "gold_ingot")
    ]
    if not smelts:
        pytest.skip("no ore smelting")
    smelt = smelts[0]
    ore = plan.steps[smelt].item.replace("_ingot", "_ore")
    mine = next(i for i, s in enumerate(plan.steps) if s.item == ore)
    mutated = (
        _with(
            plan,
            plan.steps[:mine]
            + (plan.steps[mine].model_copy(update={"count": plan.steps[mine].count - 1}),)
            + plan.steps[mine + 1 :],
        )
        if plan.steps[mine].count > 1
        else _with(plan, plan.steps[:mine] + plan.steps[mine + 1 :])
    )
    error = _first_failure(validator, mutated)
    expected = smelt + 1 if plan.steps[mine].count > 1 else smelt
    assert (error.code, error.step, error.item) == ("missing_ingredient", expected, ore)


@pytest.mark.parametrize("name", NAMES)
def test_mine_logs_underground(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    dig = next(i for i, s in enumerate(plan.steps) if s.type is StepType.DIG_DOWN)
    extra = Step(type=StepType.MINE, item="logs", count=1)
    mutated = _with(plan, plan.steps[: dig + 1] + (extra,) + plan.steps[dig + 1 :])
    error = _first_failure(validator, mutated)
    assert (error.code, error.step, error.item) == ("wrong_layer", dig + 2, "logs")


def test_smelt_without_fuel(validator, executable, kb):
    """Take the fuel planks out of every smelting plan (and the logs they came from)."""
    tested = 0
    for name, plan in executable.items():
        smelts = [i for i, s in enumerate(plan.steps) if s.type is StepType.SMELT]
        if not smelts:
            continue
        fuel_planks = sum(math.ceil(plan.steps[i].count / 1.5) for i in smelts)
        planks = next(i for i, s in enumerate(plan.steps) if s.item == "planks")
        logs = next(i for i, s in enumerate(plan.steps) if s.item == "logs")
        charcoal = sum(plan.steps[i].count for i in smelts if plan.steps[i].item == "charcoal")
        new_planks = plan.steps[planks].count - fuel_planks
        new_logs = math.ceil(new_planks / 4) + charcoal
        steps = list(plan.steps)
        steps[planks] = steps[planks].model_copy(update={"count": new_planks})
        steps[logs] = steps[logs].model_copy(update={"count": new_logs})
        result = validator.validate(_with(plan, steps))
        if result.valid:
            # batch rounding left spare planks or sticks: check the fuel really was there
            for i in smelts:
                before = result.trace[i]
                burn = sum(
                    kb.fuel_value(item) * n
                    for item, n in before.counts.items()
                    if item not in kb.stations and item not in kb.tools
                )
                assert burn >= plan.steps[i].count, name
            continue
        error = result.errors[0]
        assert error.code == "insufficient_fuel" and error.step - 1 in smelts, name
        tested += 1
    assert tested >= 20


@pytest.mark.parametrize("name", NAMES)
def test_misspell_an_item(validator, executable, name):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("expert plan itself invalid")
    index = next(i for i, s in enumerate(plan.steps) if s.item == "stick")
    mutated = _with(
        plan, plan.steps[:index] + (plan.steps[index].model_copy(update={"item": "stik"}),) + plan.steps[index + 1 :]
    )
    error = _first_failure(validator, mutated)
    assert (error.code, error.step) == ("unknown_item", index + 1)
    assert "stick" in error.suggestions and "did you mean" in error.message


def test_goal_not_reached(validator):
    plan = PLANS["diamond_pickaxe"]
    truncated = _with(plan, plan.steps[:-1])
    result = validator.validate(truncated, goal=plan.default_goal())
    assert not result.valid and result.errors[0].code == "goal_not_reached" and result.errors[0].step is None


def test_waste_and_redundant_steps_are_warnings(validator):
    plan = PLANS["diamond_pickaxe"]
    extra_dig = Step(type=StepType.DIG_DOWN, tool="iron_pickaxe")
    more_diamond = plan.steps[-2].model_copy(update={"count": 5})
    extra_leather = Step(type=StepType.KILL, item="leather", count=2)
    steps = (extra_leather,) + plan.steps[:-2] + (more_diamond, plan.steps[-1], extra_dig)
    result = validator.validate(_with(plan, steps))
    assert result.verdict.value == "valid with waste"
    codes = {(w.step, w.code, w.item, w.count) for w in result.warnings}
    assert (1, "redundant_step", "leather", 2) in codes
    codes = {(w.code, w.item, w.count) for w in result.warnings}
    assert ("waste", "diamond", 2) in codes
    assert any(w.code == "redundant_step" and w.step == len(steps) for w in result.warnings)
