"""The symbolic BAR planner: expert-like plans, joint counts, coverage of the whole KB."""

from __future__ import annotations

import json

import pytest

from barsym.bar_io import format_plan, read_plan
from barsym.eval import evaluate, load_dataset
from barsym.model import Goal, Step, StepType
from barsym.planner import (
    DEFAULT_PLANNER,
    BackwardPlanner,
    Decomposition,
    PlanningError,
    SymbolicDecomposer,
    fuse,
    make_planner,
    planner_names,
    register,
)
from barsym.planner.registry import NO_MODEL
from barsym.validation import Verdict
from testdata import BAR_DIR, DEPS_FILE

#: tasks whose expert plan differs from barsym's although both are valid without waste,
#: with the reason (the validator prefers neither): see the report of issue 3.
CHOICES = {
    "iron_sword": "the expert budgets 12 planks and burns 3 spare sticks as fuel; barsym budgets fuel as planks",
}


@pytest.fixture(scope="module")
def planner(kb):
    return make_planner("symbolic", kb)


def lines(plan):
    return [str(s) for s in plan.steps]


def test_diamond_pickaxe_matches_the_expert_plan_exactly(planner):
    result = planner.plan(Goal(item="diamond_pickaxe"))
    assert lines(result.plan) == [
        "mine 4 logs",
        "craft 13 planks",
        "craft 8 stick",
        "craft 1 crafting_table",
        "craft 1 wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "mine 11 cobblestone with wooden_pickaxe",
        "craft 1 stone_pickaxe",
        "dig down with stone_pickaxe",
        "mine 3 iron_ore with stone_pickaxe",
        "craft 1 furnace",
        "smelt 3 iron_ingot",
        "craft 1 iron_pickaxe",
        "dig down with iron_pickaxe",
        "mine 3 diamond with iron_pickaxe",
        "craft 1 diamond_pickaxe",
    ]
    assert result.validation.verdict is Verdict.VALID
    expert = read_plan(BAR_DIR / "diamond" / "diamond_pickaxe.jsonl")
    assert format_plan(result.plan) == format_plan(expert)


def test_station_used_then_consumed_is_made_once(planner):
    steps = lines(planner.plan(Goal(item="blast_furnace")).plan)
    assert steps.count("craft 1 furnace") == 1
    assert steps[-5:] == [
        "craft 1 furnace",
        "smelt 3 stone",
        "smelt 5 iron_ingot",
        "smelt 3 smooth_stone",
        "craft 1 blast_furnace",
    ]
    assert "mine 14 cobblestone with wooden_pickaxe" in steps


def test_counts_are_joint_not_per_consumer(planner):
    steps = lines(planner.plan(Goal(item="diamond_pickaxe")).plan)
    # 8 sticks = 2 crafts of 2 planks; fuel for 3 ingots = 2 planks; 4 + 3 + 4 + 2 = 13
    assert "craft 8 stick" in steps and "craft 13 planks" in steps
    compass = lines(planner.plan(Goal(item="compass")).plan)
    assert "smelt 7 iron_ingot" in compass and "craft 16 planks" in compass  # fuel ceil(7 / 1.5) = 5


def test_every_bar_task_is_planned_valid_and_matches_or_is_explained(kb):
    tasks = load_dataset(BAR_DIR, kb)
    assert len(tasks) == 53
    evaluation = evaluate(tasks, make_planner("symbolic", kb), kb)
    groups = evaluation.groups()
    for name in ("iron", "gold", "diamond", "redstone"):
        assert groups[name].accuracy >= 95 and groups[name].f1 >= 95, name
    assert groups["gold"].accuracy == groups["diamond"].accuracy == 100
    for outcome in evaluation.outcomes:
        assert outcome.result is not None and outcome.result.validation.verdict is Verdict.VALID
        if outcome.differs:
            expert_worse = outcome.expert.verdict is not Verdict.VALID
            assert expert_worse or outcome.task.name in CHOICES, outcome.task.key


def test_every_craftable_or_smeltable_item_plans_or_says_why(kb, validator, planner):
    counts = {"planned": 0, "unreachable": 0, "no_return": 0}
    for item in sorted(set(kb.crafts) | set(kb.smelts)):
        try:
            result = planner.plan(Goal(item=item))
        except PlanningError as exc:
            assert exc.kind in ("unreachable", "no_return"), exc.message
            assert "cannot be obtained" in exc.message
            counts[exc.kind] += 1
            continue
        assert validator.validate(result.plan, goal=result.goal).verdict is Verdict.VALID, item
        counts["planned"] += 1
    # nothing needs BAR's no-climb rule any more: the planner climbs back up when a goal needs it
    assert counts["planned"] >= 505 and counts["no_return"] == 0, counts


def test_every_deps_task_plans_valid(kb, validator, planner):
    tasks = json.loads(DEPS_FILE.read_text())
    assert len(tasks) == 70
    kills = 0
    for task in tasks:
        goal = Goal(item=kb.resolve(task["object"], dialect="deps"))
        result = planner.plan(goal)
        assert validator.validate(result.plan, goal=goal).verdict is Verdict.VALID, task["task"]
        kills += any(s.type is StepType.KILL for s in result.plan.steps)
    assert kills >= 8  # leather, wool, raw meat come from mobs


def test_unreachable_and_no_return_reasons(planner):
    with pytest.raises(PlanningError) as nether:
        planner.plan(Goal(item="beacon"))
    assert nether.value.kind == "unreachable"
    assert nether.value.message == "beacon cannot be obtained from overworld resources: needs nether_star"
    # vines grow on the surface and need shears, made of iron from below: a player climbs back up for them
    mossy = planner.plan(Goal(item="mossy_cobblestone"))
    kinds = [s.type for s in mossy.plan.steps]
    assert StepType.CLIMB_UP in kinds and mossy.validation.valid
    climb = kinds.index(StepType.CLIMB_UP)
    assert mossy.provenance(climb) == ["layer"] and mossy.plan.steps[-2].item in ("vine", "cobblestone")


def test_no_return_reason_where_climbing_is_not_allowed(kb):
    from dataclasses import replace

    from barsym.planner import make_planner

    strict = replace(kb, profiles={**kb.profiles, "bar": replace(kb.profiles["survival"], name="bar", climb=False)})
    planner = make_planner("symbolic", strict, rules="bar")
    with pytest.raises(PlanningError) as vine:
        planner.plan(Goal(item="mossy_cobblestone"))
    assert vine.value.kind == "no_return" and "vine" in vine.value.message and "shears" in vine.value.message


def test_tree_records_every_step_and_its_provenance(planner):
    result = planner.plan(Goal(item="hopper"))
    planned = [n for n in result.nodes if n.decomposition is not None]
    covered = [n for n in result.nodes if n.covered]
    assert all(n.decomposition.provenance == "symbolic" for n in planned)
    assert {n.step_index for n in planned} == set(range(len(result.plan)))
    assert any("crafting_table" in n.covered for n in covered)
    tree = result.tree()
    assert tree["goal"] == {"item": "hopper", "count": 1} and tree["step"] == "craft 1 hopper"
    assert len(result.raw_steps) == len(planned)
    assert fuse(result.plan.steps) == list(result.plan.steps)


def test_dig_tool_follows_the_tier_each_layer_needs(planner):
    digs = [s.tool for s in planner.plan(Goal(item="gold_ingot")).plan.steps if s.type is StepType.DIG_DOWN]
    assert digs == ["wooden_pickaxe", "stone_pickaxe", "iron_pickaxe"]
    slime = [s.tool for s in planner.plan(Goal(item="slime_block")).plan.steps if s.type is StepType.DIG_DOWN]
    assert slime == ["wooden_pickaxe"] * 3  # no ore to mine down there: no better pickaxe needed


@pytest.mark.parametrize("item", ["glass", "glass_bottle", "tnt"])
def test_sand_is_mined_not_red_sand(planner, item):
    """Either sand will do; families.json prefers the common one over badlands red sand."""
    mined = {s.item for s in planner.plan(Goal(item=item)).plan.steps if s.type is StepType.MINE}
    assert "sand" in mined and "red_sand" not in mined


def test_large_counts(planner):
    result = planner.plan(Goal(item="torch", count=64))
    assert result.validation.verdict is Verdict.VALID and lines(result.plan)[-1] == "craft 64 torch"
    with pytest.raises(PlanningError) as big:
        planner.plan(Goal(item="iron_block", count=20000))
    assert big.value.kind == "too_large"


class Relabel:
    """A decomposer the planner has never seen: symbolic answers under another name."""

    name = "relabel"

    def __init__(self, kb):
        self.inner = SymbolicDecomposer(kb)
        self.graph = self.inner.graph

    def decompose(self, goal, context):
        d = self.inner.decompose(goal, context)
        return Decomposition(d.step, d.subgoals, "memory", d.yields, d.fuel_credit)


def test_planner_does_not_know_who_decomposed(kb, planner):
    other = BackwardPlanner(kb, Relabel(kb), verify=True)
    result = other.plan(Goal(item="iron_pickaxe"))
    assert lines(result.plan) == lines(planner.plan(Goal(item="iron_pickaxe")).plan)
    assert result.provenance(0) == ["memory"] and result.decomposer == "relabel"


class Forgetful(Relabel):
    def decompose(self, goal, context):
        d = self.inner.decompose(goal, context)
        if d.step.item == "iron_pickaxe":
            return Decomposition(d.step, d.subgoals[:1], "llm")
        return d


def test_verifying_planner_rejects_a_bad_decomposition(kb):
    with pytest.raises(PlanningError) as bad:
        BackwardPlanner(kb, Forgetful(kb), verify=True).plan(Goal(item="iron_pickaxe"))
    assert bad.value.kind == "decomposition" and "missing ingredient" in bad.value.message


def test_registry(kb):
    assert planner_names()[:3] == ["bar", "llm-only", "symbolic"] and DEFAULT_PLANNER == "bar"
    with pytest.raises(KeyError):
        make_planner("nope", kb)
    register("test-relabel", lambda kb, spec: BackwardPlanner(kb, Relabel(kb), name="test-relabel"), NO_MODEL)
    assert make_planner("test-relabel", kb).plan(Goal(item="stick")).planner == "test-relabel"


def test_fuse_merges_same_action_and_keeps_dig_downs():
    mine = Step(type=StepType.MINE, item="logs", count=2)
    dig = Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe")
    fused = fuse([mine, dig, mine, dig, Step(type=StepType.MINE, item="logs", count=3, tool="wooden_axe")])
    assert [str(s) for s in fused] == [
        "mine 4 logs",
        "dig down with wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "mine 3 logs with wooden_axe",
    ]


def test_without_sharing_a_consumed_station_is_made_twice(kb, planner):
    root = Goal(item="blast_furnace")
    strict = planner._attempt(root, share=False)  # the fallback the planner uses when sharing cannot work
    steps = lines(strict.plan)
    assert "craft 2 furnace" in steps and "mine 22 cobblestone with wooden_pickaxe" in steps  # 3 + 2 x 8 + 3
    assert strict.validation.valid


def test_spare_batch_units_serve_later_goals(planner):
    result = planner.plan(Goal(item="diamond_pickaxe"))
    sticks = [n for n in result.nodes if n.decomposition and n.decomposition.step.item == "stick"]
    assert [n.decomposition.made for n in sticks] == [4, 0, 4, 0]  # two crafts of 4 serve four goals of 2
    assert sum(n.decomposition.step.count for n in sticks) == 8
