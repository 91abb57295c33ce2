"""Planning from a start state, the crafting rule profile, Plancraft's tasks, and newly obtainable items."""

from __future__ import annotations

import json

import pytest

from barsym.eval import evaluate, load_dataset
from barsym.kb import Rules
from barsym.model import Goal, Plan, Step, StepType
from barsym.planner import ErrorKind, PlanningError, make_planner
from barsym.report import plancraft
from barsym.sim import Code, Simulator, State
from barsym.validation import Validator
from cli_run import run
from testdata import PLANCRAFT_TRAIN as PLANCRAFT


@pytest.fixture(scope="module")
def symbolic(kb):
    return make_planner("symbolic", kb)


# ---- planning from a state -----------------------------------------------------------------
def test_held_tools_and_stations_are_not_made_again(kb, symbolic):
    start = State.start({"stone_pickaxe": 1, "crafting_table": 1})
    result = symbolic.plan(Goal(item="iron_pickaxe"), start)
    made = {s.item for s in result.plan.steps if s.type is StepType.CRAFT}
    assert "stone_pickaxe" not in made and "crafting_table" not in made and "wooden_pickaxe" not in made
    assert all(s.tool in (None, "stone_pickaxe") for s in result.plan.steps)  # every dig and mine uses it
    assert Validator(kb).validate(result.plan, goal=result.goal, start=start).verdict.value == "valid"


def test_held_materials_are_used_first_and_the_goal_itself_can_be_held(kb, symbolic):
    result = symbolic.plan(Goal(item="stick", count=4), State.start({"oak_planks": 2}))
    assert [str(s) for s in result.plan.steps] == ["craft 4 stick"]
    torches = symbolic.plan(Goal(item="torch", count=8), State.start({"stick": 1, "coal": 2}))
    assert [str(s) for s in torches.plan.steps] == [
        "mine 1 logs",
        "craft 2 planks",
        "craft 1 stick",
        "craft 8 torch",
    ]  # one of the two sticks was held
    held = symbolic.plan(Goal(item="diamond", count=2), State.start({"diamond": 3}))
    assert held.plan.steps == () and held.validation.valid


def test_a_start_underground_climbs_back_for_surface_items(kb, symbolic):
    start = State.start({"wooden_pickaxe": 1}, layer=2)
    result = symbolic.plan(Goal(item="oak_planks"), start)
    kinds = [s.type for s in result.plan.steps]
    assert kinds[:2] == [StepType.CLIMB_UP, StepType.CLIMB_UP] and result.validation.valid
    deep = symbolic.plan(Goal(item="iron_ingot"), State.start({"stone_pickaxe": 1, "furnace": 1, "coal": 1}, 2))
    assert [str(s) for s in deep.plan.steps] == ["mine 1 iron_ore with stone_pickaxe", "smelt 1 iron_ingot"]


def test_plan_cli_start_inventory_file_and_layer(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        "plan",
        "iron_pickaxe",
        "--planner",
        "symbolic",
        "--start",
        "stone_pickaxe=1",
        "--start",
        "crafting_table=1",
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 0 and not {"stone_pickaxe", "crafting_table"} & {s["obj_name"] for s in data["steps"]}
    inventory = tmp_path / "inv.json"
    inventory.write_text(json.dumps({"inventory": {"iron_ingot": 3, "stick": 2, "crafting_table": 1}, "layer": 2}))
    code, out, _ = run(capsys, "plan", "iron_pickaxe", "--planner", "symbolic", "--inventory", str(inventory))
    assert code == 0 and "1 steps" in out and "layer 2" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--start", "stone_pickaxe"], "expected ITEM=N"),
        (["--start", "stone_pikaxe=1"], "did you mean stone_pickaxe"),
        (["--layer", "9"], "the start layer must be one of 0 surface"),
        (["--layer", "two"], "--layer must be a whole number"),
        (["--rules", "hardcore"], "unknown rules 'hardcore'; choose one of: crafting, durable, survival"),
        (["--planner", "deps", "--rules", "crafting"], "use --planner bar, llm-only, bar-sc or symbolic"),
    ],
)
def test_bad_state_options_are_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "plan", "stick", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "expected JSON object"),
        ('{"oak_log": -1}', "must be a whole number from 0"),
        ('{"oak_log": "3"}', "must be a whole number from 0"),
        ("[" * 5000, "nested too deeply"),
        ('{"inventory": {}, "layer": 7}', "the start layer must be one of"),
    ],
)
def test_bad_inventory_files_are_one_line_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "inv.json"
    path.write_text(content)
    code, out, err = run(capsys, "plan", "stick", "--planner", "symbolic", "--inventory", str(path))
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


# ---- the crafting rules (Plancraft's) -----------------------------------------------------
def test_crafting_rules_forbid_gathering_and_need_no_stations_or_fuel(kb):
    rules = Rules(kb, "crafting")
    sim = Simulator(kb, rules)
    assert sim.transition(Step(type=StepType.MINE, item="oak_log", count=1), State()).code is Code.NOT_ALLOWED
    assert (
        sim.transition(Step(type=StepType.DIG_DOWN, tool="wooden_pickaxe"), State.start({"wooden_pickaxe": 1})).code
        is Code.NOT_ALLOWED
    )
    furnace = sim.transition(Step(type=StepType.CRAFT, item="furnace", count=1), State.start({"cobblestone": 8}))
    assert furnace.state.count("furnace") == 1  # the 3x3 grid is at hand
    ingot = sim.transition(Step(type=StepType.SMELT, item="iron_ingot", count=2), State.start({"iron_ore": 2}))
    assert ingot.state.counts == {"iron_ingot": 2}  # no furnace, no fuel
    generic = sim.transition(Step(type=StepType.CRAFT, item="planks", count=4), State.start({"oak_log": 1}))
    assert generic.code is Code.NOT_ALLOWED and "oak_planks" in generic.message


def test_crafting_rules_say_what_is_missing(kb):
    planner = make_planner("symbolic", kb, rules="crafting")
    with pytest.raises(PlanningError) as info:
        planner.plan(Goal(item="iron_pickaxe"), State.start({"iron_ingot": 1, "stick": 2}))
    assert info.value.kind is ErrorKind.IMPOSSIBLE and "missing 2 iron_ingot" in info.value.message
    result = planner.plan(Goal(item="iron_pickaxe"), State.start({"iron_ore": 3, "oak_log": 1}))
    assert [str(s) for s in result.plan.steps] == [
        "smelt 3 iron_ingot",
        "craft 2 oak_planks",
        "craft 2 stick",
        "craft 1 iron_pickaxe",
    ]


def test_validate_under_crafting_rules(capsys, tmp_path):
    plan = tmp_path / "p.jsonl"
    plan.write_text('{"type": "smelt", "obj_name": "iron_ingot", "obj_num": 1}\n')
    assert run(capsys, "validate", str(plan), "--rules", "crafting", "--start", "iron_ore=1")[0] == 0
    code, out, _ = run(capsys, "validate", str(plan), "--start", "iron_ore=1")
    assert code == 1 and "needs a furnace" in out


def test_plancraft_tasks_verdicts_execution_and_length(kb):
    tasks = load_dataset(PLANCRAFT, kb)
    assert len(tasks) == 1145 and all(t.rules == "crafting" and t.start is not None for t in tasks)
    rules = Rules(kb, "crafting")
    table = plancraft.rows(evaluate(tasks, make_planner("symbolic", kb, rules=rules), kb, rules=rules), rules)
    summary = plancraft.summary(table)
    assert summary["agreement_rate"] >= 0.995
    assert summary["executes_rate"] == 1.0  # every plan replays from its task's inventory
    assert summary["length_at_most_optimal_rate"] >= 0.99
    for row in table:
        if row.possible and not row.agrees:  # a label error must be proved by a plan that executes
            assert row.executes and "label error" in row.who_is_right()


def test_eval_cli_on_plancraft_json_layout(capsys, tmp_path):
    records = json.loads(PLANCRAFT.read_text())[:40]
    subset = tmp_path / "tasks.json"
    subset.write_text(json.dumps(records))
    out_json = tmp_path / "out.json"
    code, out, _ = run(capsys, "eval", "--dataset", str(subset), "--planner", "symbolic", "--json", str(out_json))
    data = json.loads(out_json.read_text())
    assert code == 0 and "verdict agreement with Plancraft's labels" in out
    assert set(data) >= {"tasks", "summary"} and len(data["tasks"]) == 40
    first = data["tasks"][records[0]["id"]]
    assert set(first) >= {"target", "possible", "label_possible", "steps", "reason"}


# ---- things that are obtainable, and the reasons for those that are not -------------------
@pytest.mark.parametrize(
    "item",
    [
        "oak_log",
        "birch_log",
        "water_bucket",
        "lava_bucket",
        "milk_bucket",
        "cake",
        "firework_rocket",
        "honey_bottle",
        "honeycomb",
        "cobweb",
        "honey_block",
    ],
)
def test_newly_obtainable_items_plan_valid(kb, symbolic, item):
    result = symbolic.plan(Goal(item=item))
    assert Validator(kb).validate(result.plan, goal=result.goal).verdict.value in ("valid", "valid with waste")


def test_loot_only_items_name_where_they_are_found(symbolic):
    for item, words in (("saddle", "chest loot"), ("name_tag", "fishing")):
        with pytest.raises(PlanningError) as info:
            symbolic.plan(Goal(item=item))
        assert info.value.kind is ErrorKind.UNREACHABLE and "only found as loot" in info.value.message
        assert words in info.value.message
    with pytest.raises(PlanningError) as info:
        symbolic.plan(Goal(item="sponge"))
    assert "needs wet_sponge (only found as loot" in info.value.message


def test_filling_a_bucket_consumes_it(kb, validator):
    plan = Plan(steps=(Step(type=StepType.MINE, item="water_bucket", count=2),))
    result = validator.validate(plan, start=State.start({"bucket": 1}))
    assert not result.valid and result.errors[0].code == "missing_ingredient" and result.errors[0].item == "bucket"
    result = validator.validate(plan, start=State.start({"bucket": 2}))
    assert result.valid and result.final_state.counts == {"water_bucket": 2}
