"""Tool durability: the validator warns, ``--rules durable`` makes it an error, the repairer and planners add copies.

The issue's example: digging to layer 2 and mining with one wooden pickaxe
(59 uses) is valid in the deterministic world, which ignores wear on purpose
(BAR's expert plans do too), and fails every stochastic run with tool_broke.
"""

from __future__ import annotations

from barsym.consistency import StateConsistency
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import make_planner
from barsym.sim import StochasticWorld, run
from barsym.validation import Validator, Verdict

GOAL = Goal(item="cobblestone", count=20)
STEPS = (
    Step(type=StepType.MINE, item="logs", count=3),
    Step(type=StepType.CRAFT, item="planks", count=12),
    Step(type=StepType.CRAFT, item="stick", count=2),
    Step(type=StepType.CRAFT, item="crafting_table", count=1),
    Step(type=StepType.CRAFT, item="wooden_pickaxe", count=1),
    Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe"),
    Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe"),
    Step(type=StepType.MINE, item="cobblestone", count=20, tool="wooden_pickaxe"),
)
PLAN = Plan(steps=STEPS)


def codes(findings):
    return [f.code for f in findings]


def test_the_validator_warns_when_a_tool_wears_out_and_keeps_its_verdict(kb):
    result = Validator(kb).validate(PLAN, goal=GOAL)
    worn = [w for w in result.warnings if w.code == "tool_wears_out"]
    assert result.verdict is Verdict.WASTEFUL and result.errors == []  # 3 spare planks: the waste, not the wear
    assert len(worn) == 1 and worn[0].step == 7 and worn[0].item == "wooden_pickaxe"
    assert worn[0].had == 59 and worn[0].needed > 59 and worn[0].count == 1
    assert "make 1 more before this step" in worn[0].message


def test_under_durable_rules_a_worn_tool_is_an_error(kb):
    result = Validator(kb, "durable").validate(PLAN, goal=GOAL)
    assert result.verdict is Verdict.INVALID and codes(result.errors) == ["tool_wears_out"]
    assert result.failed_step == 7


def test_the_repairer_respects_durability_only_when_asked(kb):
    plain = StateConsistency(kb).repair(PLAN, goal=GOAL)
    assert plain.plan == PLAN and "tool_wears_out" in codes(plain.after.warnings)
    durable = StateConsistency(kb, rules="durable").repair(PLAN, goal=GOAL)
    steps = [str(s) for s in durable.plan.steps]
    assert steps.count("craft 1 wooden_pickaxe") == 2
    assert steps.index("craft 1 wooden_pickaxe", 5) < steps.index("mine 20 cobblestone with wooden_pickaxe")
    assert durable.after.valid and "tool_wears_out" not in codes(durable.after.errors + durable.after.warnings)


def test_the_repaired_plan_survives_the_stochastic_world(kb):
    world = StochasticWorld(kb)
    before = run(PLAN, world, runs=10, seed=1, goal=GOAL)
    after = run(StateConsistency(kb, rules="durable").repair(PLAN, goal=GOAL).plan, world, runs=10, seed=1, goal=GOAL)
    assert before.successes == 0 and after.successes > 0


def test_the_planners_respect_durability_under_durable_rules(kb):
    goal = Goal(item="cobblestone", count=60)
    plain = make_planner("symbolic", kb).plan(goal)
    assert plain.validation.valid and "tool_wears_out" in codes(plain.validation.warnings)
    durable = make_planner("symbolic", kb, rules="durable").plan(goal)
    assert durable.validation.valid and not codes(durable.validation.errors)
    assert sum(1 for s in durable.plan.steps if s.item == "wooden_pickaxe") >= 2
