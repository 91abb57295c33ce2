"""Hypothesis properties of planning, validation and repair in several Minecraft versions (``--mc-version``).

The same properties the 1.16.5 suites check, over a release before the flattening (1.12.2, items renamed
from ids and metadata), 1.14.4 (1.16.5's data fitted to an older release), 1.16.5 itself, and 1.19.2
(its own tags and smelting, raw metals and deepslate):

- every reachable item's symbolic plan is valid, ends with the goal, names only the version's items, and
  becomes bot actions whose every item id is the version's own (minecraft-data's, before 1.13 with metadata);
- an item of 1.16.5 that the version lacks is refused by the validator in one error naming the version;
- the symbolic repairer turns symbolic plans with steps dropped, swapped or recounted into valid plans for
  their goal.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from barsym.consistency import StateConsistency
from barsym.kb import load_kb
from barsym.kb.versions import data_paths, pre_flattening
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import PlanningError, make_planner
from barsym.sim.bot_actions import bot_actions
from barsym.testing.strategies import faulty_plans
from barsym.validation import Validator, Verdict

VERSIONS = ("1.12.2", "1.14.4", "1.16.5", "1.19.2")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class World:
    """One version's knowledge base, planner, validator and repairer, built once."""

    def __init__(self, version: str):
        self.kb = load_kb(version)
        self.planner = make_planner("symbolic", self.kb)
        self.validator = Validator(self.kb)
        self.repairer = StateConsistency(self.kb)
        graph = self.planner.graph
        self.reachable = sorted(
            i
            for i in set(self.kb.crafts) | set(self.kb.smelts) | set(self.kb.sources)
            if graph.reachability(i).reachable
        )
        folder, paths = data_paths(version) or (None, {})
        assert folder is not None
        self.game_items = {i["name"] for i in json.loads((folder / paths["items"] / "items.json").read_text())}


WORLDS = {v: World(v) for v in VERSIONS}


@st.composite
def goals(draw):
    world = WORLDS[draw(st.sampled_from(VERSIONS))]
    return world, Goal(item=draw(st.sampled_from(world.reachable)), count=draw(st.integers(1, 24)))


def planned(world: World, goal: Goal):
    try:
        return world.planner.plan(goal)
    except PlanningError as exc:
        assert exc.kind == "no_return", exc.message  # reachable items fail only on climbing back up
        assume(False)


def item_ids(node) -> set[str]:
    """Every item id of a bot-actions document (block and mob ids are the npm test's: tests/test_npm_ids.py)."""
    found: set[str] = set()
    if isinstance(node, dict):
        if "ids" in node and "name" in node:
            found.update(node["ids"])
        for key, value in node.items():
            if key != "blocks":
                found |= item_ids(value)
    elif isinstance(node, list):
        for value in node:
            found |= item_ids(value)
    return found


@SETTINGS
@given(goals())
def test_every_version_plans_reachable_goals_validly_in_its_own_items_and_ids(case):
    world, goal = case
    result = planned(world, goal)
    check = world.validator.validate(result.plan, goal=goal)
    assert check.verdict is Verdict.VALID
    assert check.final_state.count_any(world.kb.acceptable(goal.item)) >= goal.count
    assert {s.item for s in result.plan.steps if s.item} <= world.kb.items
    actions = bot_actions(world.kb, result.plan.steps)
    assert actions["valid"] and actions["minecraft"] == world.kb.version
    assert item_ids(actions) <= world.game_items  # before 1.13 the old names (planks, log2), else the new
    assert ("metadata" in json.dumps(actions)) == pre_flattening(world.kb.version)


@SETTINGS
@given(st.sampled_from([v for v in VERSIONS if WORLDS[v].kb.absent]), st.data())
def test_an_item_the_version_lacks_is_one_error_naming_the_version(version, data):
    world = WORLDS[version]
    item = data.draw(st.sampled_from(sorted(world.kb.absent)))
    check = world.validator.validate(Plan(steps=(Step(type=StepType.CRAFT, item=item, count=1),)))
    assert check.verdict is Verdict.INVALID and len(check.errors) == 1
    assert f"{item!r} is not an item in Minecraft {version}" in check.errors[0].message


@st.composite
def broken(draw):
    """A symbolic plan of the version with one or two faults put in (barsym.testing's: drop, swap, cut a count)."""
    world, goal = draw(goals())
    plan = planned(world, goal).plan
    for _ in range(draw(st.integers(1, 2))):
        plan, _what = draw(faulty_plans(st.just(plan)))
    return world, goal, plan


@SETTINGS
@given(broken())
def test_the_symbolic_repairer_makes_broken_plans_valid_in_every_version(case):
    world, goal, plan = case
    result = world.repairer.repair(plan, goal=goal)
    assert result.valid_after, ([str(s) for s in plan.steps], [str(s) for s in result.plan.steps])
    assert world.validator.validate(result.plan, goal=goal).valid


@pytest.mark.xfail(
    strict=True,
    raises=PlanningError,  # the planner validates its plan and refuses it
    reason="known bug, found by Hypothesis 2026-12-08: in 1.19.2 the furnace's #stone_crafting_materials slot is "
    "paid in its tag's order (blackstone, cobbled_deepslate, cobblestone), so crafting it takes the "
    "cobbled_deepslate the later `smelt 1 deepslate` needs; a craft's tag slot does not yet hold back what "
    "later steps consume (a smelt's fuel does: barsym.sim.future_demand)",
)
def test_deepslate_is_planned_validly_in_1_19_2():
    world = WORLDS["1.19.2"]
    result = world.planner.plan(Goal(item="deepslate", count=1))
    assert world.validator.validate(result.plan, goal=Goal(item="deepslate", count=1)).verdict is Verdict.VALID
