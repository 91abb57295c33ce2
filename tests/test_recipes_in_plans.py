"""Issue 56, item 4: the crafting-rules planner finds the plans that exist, and every step says its recipe.

The three cases the issue names (an oak fence from logs, a crossbow with sticks
added, an anvil beside the iron block it needs), what a pinned recipe does in
the simulator and in BAR's JSON Lines, and the recipe and consumption of each
step in ``plan --format json`` and the API. The properties over many starts are
in ``property_tests/test_crafting_complete.py``.
"""

from __future__ import annotations

import json

import pytest

import barsym
from barsym.bar_io import parse_plan, step_to_record
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import make_planner
from barsym.sim import Code, State
from barsym.validation import Validator
from cli_run import one_line, run

ISSUE_CASES = [
    ("oak_fence", {"oak_log": 64}),
    ("crossbow", {"oak_planks": 64, "iron_ingot": 5, "string": 5}),
    ("crossbow", {"oak_planks": 64, "iron_ingot": 5, "string": 5, "stick": 3}),
    ("anvil", {"iron_block": 3, "iron_ingot": 3, "iron_nugget": 9}),
]


@pytest.fixture(scope="module")
def crafting(kb):
    return make_planner("symbolic", kb, rules="crafting")


@pytest.mark.parametrize("item, held", ISSUE_CASES)
def test_the_issue_cases_plan_and_validate(kb, crafting, item, held):
    start = State.start(held)
    result = crafting.plan(Goal(item=item), start)
    assert Validator(kb, "crafting").validate(result.plan, goal=result.goal, start=start).valid


def test_the_anvil_keeps_its_iron_blocks_by_naming_the_nugget_recipe(kb, crafting):
    result = crafting.plan(Goal(item="anvil"), State.start({"iron_block": 3, "iron_ingot": 3, "iron_nugget": 9}))
    ingot = result.plan.steps[0]
    assert (ingot.item, ingot.recipe) == ("iron_ingot", kb.crafts["iron_ingot"].index(_nugget_recipe(kb)))
    uses = result.validation.uses()
    assert uses[0].consumed == {"iron_nugget": 9} and uses[-1].consumed == {"iron_block": 3, "iron_ingot": 4}
    # without the pin, the rule book's own choice breaks a block: the plan would not run
    loose = Plan(steps=tuple(s.model_copy(update={"recipe": None}) for s in result.plan.steps))
    start = State.start({"iron_block": 3, "iron_ingot": 3, "iron_nugget": 9})
    assert not Validator(kb, "crafting").validate(loose, goal=Goal(item="anvil"), start=start).valid


def _nugget_recipe(kb):
    return next(r for r in kb.crafts["iron_ingot"] if any("iron_nugget" in i.accepts for i in r.ingredients))


def test_a_pinned_recipe_is_played_as_named_and_a_missing_one_is_named(kb):
    sim = Validator(kb, "crafting").sim
    held = State.start({"iron_block": 1, "iron_nugget": 9})
    index = kb.crafts["iron_ingot"].index(_nugget_recipe(kb))
    played = sim.transition(Step(type=StepType.CRAFT, item="iron_ingot", count=1, recipe=index), held)
    assert played.consumed == {"iron_nugget": 9} and played.recipe == index
    default = sim.transition(Step(type=StepType.CRAFT, item="iron_ingot", count=1), held)
    assert default.consumed == {"iron_block": 1}  # the first recipe paid for, as before
    wrong = sim.transition(Step(type=StepType.CRAFT, item="iron_ingot", count=1, recipe=9), held)
    assert wrong.code is Code.NOT_OBTAINABLE and "names recipe 9" in wrong.message


def test_an_impossible_verdict_names_concrete_items(crafting):
    with pytest.raises(barsym.planner.PlanningError) as info:
        crafting.plan(Goal(item="oak_fence"), State())
    assert info.value.message.endswith("missing 2 oak_log")  # 6 planks: 4 for the fence, 2 for its sticks


def test_bar_jsonl_writes_a_recipe_only_where_one_is_pinned():
    plain = Step(type=StepType.CRAFT, item="stick", count=4)
    assert step_to_record(plain) == {"type": "craft", "obj_name": "stick", "obj_num": 4, "tool": None}
    pinned = Step(type=StepType.CRAFT, item="iron_ingot", count=1, recipe=1)
    record = step_to_record(pinned)
    assert record["recipe"] == 1
    assert parse_plan(json.dumps(record) + "\n").steps == (pinned,)
    assert "recipe" not in plain.model_dump(mode="json")


@pytest.mark.parametrize(
    "record, message",
    [
        ('{"type": "craft", "obj_name": "iron_ingot", "obj_num": 1, "recipe": -1}', "'recipe' must be a whole number"),
        ('{"type": "craft", "obj_name": "iron_ingot", "obj_num": 1, "recipe": "1"}', "'recipe' must be a whole number"),
        ('{"type": "mine", "obj_name": "logs", "obj_num": 1, "recipe": 0}', "only craft and smelt steps name a recipe"),
    ],
)
def test_bad_recipes_in_a_plan_file_are_one_line(capsys, tmp_path, record, message):
    path = tmp_path / "p.jsonl"
    path.write_text(record + "\n")
    code, _, err = run(capsys, "validate", str(path))
    assert code == 2 and message in err and one_line(err)


def test_plan_json_and_the_api_give_each_steps_recipe_and_consumption(capsys):
    code, out, _ = run(
        capsys,
        *("plan", "anvil", "--planner", "symbolic", "--rules", "crafting", "--format", "json"),
        *("--start", "iron_block=3", "--start", "iron_ingot=3", "--start", "iron_nugget=9"),
    )
    steps = json.loads(out)["steps"]
    assert code == 0 and steps[0]["recipe"]["per_batch"] == {"iron_nugget": 9}
    assert steps[0]["consumes"] == {"iron_nugget": 9} and steps[0]["makes"] == {"iron_ingot": 1}
    assert steps[1]["recipe"]["id"] == "craft:anvil#0"
    planned = barsym.plan("wooden_pickaxe", planner="symbolic")
    uses = planned.uses()
    assert len(uses) == len(planned.steps)
    assert uses[0].recipe is None and uses[0].made == {"logs": 3}  # gathering: no recipe
    planks = uses[1]
    assert planks.recipe == "craft:planks#0" and planks.per_batch == {"logs": 1} and planks.batches == 3
    assert planks.consumed == {"logs": 3}
    assert planned.to_dict()["uses"][4]["recipe"]["per_batch"] == {"planks": 3, "stick": 2}
