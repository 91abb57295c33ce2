"""The full rollout: every step judged, failed steps change nothing, later steps still judged."""

from __future__ import annotations

from barsym.bar_io import parse_plan
from barsym.model import Step, StepType
from barsym.sim import Code, Simulator, State, rollout


def _plan(*lines: str):
    return parse_plan("\n".join(lines), "test.jsonl")


def test_rollout_goes_on_past_a_failure_from_the_real_state(kb):
    plan = _plan(
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}',
        '{"type": "craft", "obj_name": "planks", "obj_num": 4}',
        '{"type": "craft", "obj_name": "wooden_pickaxe", "obj_num": 1}',  # no sticks, no table
        '{"type": "mine", "obj_name": "diamond", "obj_num": 1, "tool": "iron_pickaxe"}',  # wrong layer too
        '{"type": "craft", "obj_name": "stick", "obj_num": 4}',
    )
    played = rollout(Simulator(kb), plan.steps)
    assert [o.ok for o in played.outcomes] == [True, True, False, False, True]
    failed = played.outcomes[2]
    assert failed.failure.code is Code.MISSING_INGREDIENT and failed.after == failed.before
    assert played.outcomes[3].failure.code in (Code.WRONG_LAYER, Code.MISSING_TOOL)
    assert played.final.count("stick") == 4 and played.final.count("planks") == 2  # step 5 ran from step 4's state
    assert played.first_failure is failed and len(played.failures) == 2
    assert played.states()[0] == State() and len(played.states()) == 6


def test_validator_reports_every_failing_step_and_knock_on_failures(kb, validator):
    plan = _plan(
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}',
        '{"type": "craft", "obj_name": "planks", "obj_num": 8}',  # 1 log makes 4: fails
        '{"type": "craft", "obj_name": "stick", "obj_num": 4}',  # no planks: knock-on of step 2
        '{"type": "mine", "obj_name": "cobblestone", "obj_num": 1, "tool": "wooden_pickaxe"}',  # independent
    )
    result = validator.validate(plan)
    assert not result.valid and result.failed_step == 2 and result.failed_steps == [2, 3, 4]
    by_step = {e.step: e for e in result.errors}
    assert by_step[3].caused_by == 2
    assert by_step[4].caused_by is None and by_step[4].code in ("missing_tool", "wrong_layer")
    assert result.to_dict()["steps_run"] == 1


def test_one_dig_down_is_enough_the_second_is_redundant(kb, validator):
    plan = _plan(
        '{"type": "mine", "obj_name": "logs", "obj_num": 3}',
        '{"type": "craft", "obj_name": "planks", "obj_num": 9}',
        '{"type": "craft", "obj_name": "stick", "obj_num": 2}',
        '{"type": "craft", "obj_name": "crafting_table", "obj_num": 1}',
        '{"type": "craft", "obj_name": "wooden_pickaxe", "obj_num": 1}',
        '{"type": "special", "obj_name": "dig down", "obj_num": null, "tool": "wooden_pickaxe"}',
        '{"type": "special", "obj_name": "dig down", "obj_num": null, "tool": "wooden_pickaxe"}',
        '{"type": "mine", "obj_name": "cobblestone", "obj_num": 1, "tool": "wooden_pickaxe"}',
    )
    result = validator.validate(plan)
    redundant = [w.step for w in result.warnings if w.code == "redundant_step"]
    assert result.valid and redundant == [7]  # the first dig lets the cobblestone be mined


def test_climb_up_is_played_and_judged(kb, validator):
    sim = Simulator(kb)
    moved = sim.transition(Step(type=StepType.CLIMB_UP), State.start({}, 2))
    assert moved.state.layer == 1
    assert sim.transition(Step(type=StepType.CLIMB_UP), State()).notes  # already on the surface
    plan = _plan(
        '{"type": "special", "obj_name": "climb up", "obj_num": null}',
        '{"type": "mine", "obj_name": "logs", "obj_num": 1}',
    )
    result = validator.validate(plan, start=State.start({}, 1))
    assert result.valid and not result.warnings
    result = validator.validate(plan, start=State.start({}, 0))
    assert [w.code for w in result.warnings] == ["redundant_step"]
