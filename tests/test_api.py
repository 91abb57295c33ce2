"""The public API: the README's example, barsym.plan/validate/execute/repair, lazy import, the env, the strategies."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings

import barsym
from barsym.sim.execution import play
from barsym.sim.world import DeterministicWorld
from barsym.testing import faulty_plans, goals, inventories, plans, states, steps
from testdata import REPO


def readme_examples() -> list[str]:
    """The README's Python examples: the API's, then the environment's (which needs the [env] extra)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_examples_run(capsys):
    api, env = readme_examples()
    exec(compile(api, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1. mine 2 logs" and out[10] == "11. craft 1 iron_pickaxe"
    assert "valid" in out and out[-1] == "False True"
    assert re.fullmatch(r"\d+ of 50 stochastic runs succeed", out[-2])
    assert "barsym.env" not in api  # the first example runs on the README's first install (no [env] extra)
    exec(compile(env, "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == ["1.0 True 1"]


def test_import_barsym_loads_nothing_else():
    """Only the package and its lazy-name helper (which imports nothing of barsym's)."""
    code = "import sys, barsym; print(sorted(m for m in sys.modules if m.startswith('barsym')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['barsym', 'barsym.lazy_names']"


def test_plan_and_its_typed_result():
    planned = barsym.plan("wooden_pickaxe", planner="symbolic")
    assert isinstance(planned, barsym.Planned) and planned.verdict is barsym.Verdict.VALID
    assert planned.goal == barsym.Goal(item="wooden_pickaxe", count=1) and planned.steps[-1].item == "wooden_pickaxe"
    assert planned.records()[0] == {"type": "mine", "obj_name": "logs", "obj_num": 3, "tool": None}
    assert len(planned.provenance) == len(planned.steps) and planned.result.tree()["goal"]["item"] == "wooden_pickaxe"
    with pytest.raises(barsym.PlanningError) as caught:
        barsym.plan("beacon", planner="symbolic")
    assert "nether_star" in caught.value.message


def test_validate_takes_every_plan_form(tmp_path):
    planned = barsym.plan("stick", 4, planner="symbolic")
    text = "".join(__import__("json").dumps(r) + "\n" for r in planned.records())
    path = tmp_path / "stick.jsonl"
    path.write_text(text)
    for form in (planned.plan, planned.steps, planned.records(), text, str(path), path):
        assert barsym.validate(form, "stick", 4).verdict is barsym.Verdict.VALID
    broken = barsym.validate(planned.records()[1:], "stick", 4)
    assert broken.verdict is barsym.Verdict.INVALID and broken.failed_step == 1


def test_execute_and_repair():
    steps_ = barsym.plan("stone_pickaxe", planner="symbolic").steps
    deterministic = barsym.execute(steps_, world="deterministic", runs=3)
    assert deterministic.successes == 3 and deterministic.world == "deterministic"
    with pytest.raises(ValueError, match="world must be one of"):
        barsym.execute(steps_, world="nether")
    fixed = barsym.repair(list(steps_[1:]), "stone_pickaxe")
    assert not fixed.valid_before and fixed.valid_after and fixed.plan.steps[-1].item == "stone_pickaxe"


# -- barsym.env ----------------------------------------------------------------------------------


def test_random_agent_smoke():
    env = barsym.env.CraftingEnv("iron_pickaxe", world="stochastic", max_steps=60)
    env.action_space.seed(5)
    for episode in range(3):
        observation, info = env.reset(seed=episode)
        seen = info["observation"]
        assert seen.steps == 0 and seen.inventory == {} and seen.goal.item == "iron_pickaxe"
        assert observation["inventory"].sum() == 0 and observation in env.observation_space
        rewards, terminated, truncated = [], False, False
        while not (terminated or truncated):
            observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
            rewards.append(reward)
            assert reward in (0.0, 1.0) and set(info) >= {"failure", "success", "ticks", "observation"}
            assert observation in env.observation_space
            assert all(n > 0 for n in env.observation.inventory.values())
        assert env.done and (truncated or info["success"])
        assert len(rewards) <= 60 and sum(rewards) <= 1.0 and terminated == info["success"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_scripted_agent_following_a_valid_plan_reaches_the_goal():
    plan = barsym.plan("iron_pickaxe", planner="symbolic").plan
    env = barsym.env.CraftingEnv("iron_pickaxe", world="deterministic")
    env.reset(seed=0)
    for index, step in enumerate(plan.steps):
        observation, reward, terminated, truncated, info = env.step(step, later=plan.steps[index + 1 :])
        assert info["failure"] is None and not truncated
        assert terminated == (index == len(plan.steps) - 1)
    assert reward == 1.0 and env.observation.held == 1 == observation["held"][0] and info["success"]


def test_the_env_meets_the_episodes_execute_plays():
    plan = barsym.plan("iron_pickaxe", planner="symbolic").plan
    env = barsym.env.CraftingEnv("iron_pickaxe", world="stochastic")
    outcomes = set()
    for seed in range(12):
        env.reset(seed=seed)
        for index, step in enumerate(plan.steps):
            observation, reward, terminated, truncated, info = env.step(step, later=plan.steps[index + 1 :])
            if info["failure"] is not None or terminated or truncated:
                break
        episode = play(env.world, plan, seed, env.goal, env.start_state, env.budget)
        assert episode.success == (reward == 1.0) and episode.ticks == env.observation.ticks == observation["ticks"][0]
        outcomes.add(episode.success)
    assert True in outcomes  # the stochastic world lets the plan succeed (and the check is not vacuous)


def test_env_accepts_records_and_refuses_bad_worlds():
    env = barsym.env.CraftingEnv("stick", world="deterministic")
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step({"type": "craft", "obj_name": "stick", "obj_num": 4})
    assert reward == 0.0 and not (terminated or truncated) and info["failure"] is not None  # no planks yet
    with pytest.raises(ValueError, match="world must be one of"):
        barsym.env.CraftingEnv("stick", world="end")


# -- barsym.testing ------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(plans(start_strategy=states(max_layer=1)))
def test_drawn_plans_are_valid(plan):
    assert len(plan.steps) == 0 or plan.steps[-1].type.value in ("craft", "smelt", "mine", "kill")


@settings(max_examples=40, deadline=None)
@given(faulty_plans())
def test_faulty_plans_say_what_was_done(drawn):
    plan, what = drawn
    assert re.fullmatch(
        r"drop step \d+|swap steps \d+ and \d+|cut the count of step \d+|(insert .+ before|change) step \d+( to .+)?",
        what,
    )
    assert plan.source == what


@settings(max_examples=50, deadline=None)
@given(goals(), inventories(), steps())
def test_drawn_goals_inventories_and_steps_are_barsyms(goal, held, step):
    kb = barsym.knowledge_base()
    assert goal.item in kb.items and 1 <= goal.count <= 4
    assert all(name in kb.items and count >= 1 for name, count in held.items())
    world = DeterministicWorld(kb)
    world.step(world.reset(0, barsym.api._start(kb, held, 0)), step)  # any drawn step can be tried


def test_the_validation_module_does_not_shadow_the_function():
    """``barsym.validate`` is the API's function even after the validator's module is imported."""
    import barsym
    import barsym.validation  # noqa: F401

    assert callable(barsym.validate) and barsym.validate.__module__ == "barsym.api"


# ------------------------------------------------------------------ issue 34: arguments named, the notation accepted


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: barsym.plan("stick", layer="2", planner="symbolic"), TypeError, "layer must be a whole number"),
        (lambda: barsym.plan("stick", layer=99, planner="symbolic"), ValueError, "layer must be from 0 to"),
        (lambda: barsym.plan(None), TypeError, "needs the item"),
        (lambda: barsym.plan(7, planner="symbolic"), TypeError, "goal must be an item name or a Goal"),
        (lambda: barsym.plan("stick", 0, planner="symbolic"), ValueError, "count must be from 1 to"),
        (lambda: barsym.plan("stick", "4", planner="symbolic"), TypeError, "count must be a whole number"),
        (lambda: barsym.plan("stick", start={"planks": -1}, planner="symbolic"), ValueError, "start"),
        (lambda: barsym.validate([42], "stick"), TypeError, "step 1 must be a Step"),
        (lambda: barsym.validate(["fly to the moon"], "stick"), ValueError, "step 1: not a step"),
    ],
)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_validate_takes_barsyms_own_notation():
    result = barsym.validate(["mine 3 logs"], "logs", 3)
    assert result.valid
    same = barsym.validate([{"type": "mine", "obj_name": "logs", "obj_num": 3, "tool": None}], "logs", 3)
    assert result.verdict == same.verdict
    planned = barsym.plan("stick", 4, planner="symbolic")
    assert barsym.validate([str(step) for step in planned.steps], "stick", 4).valid


def test_goal_count_is_the_command_lines_name_for_count():
    """``barsym validate --goal-count N`` is ``goal_count=N`` here too (the API had only ``count=``); without a goal
    it counts the plan's last step's item, as the command line does."""
    plan = ["mine 2 logs", "craft 8 planks"]
    assert barsym.validate(plan, "planks", goal_count=8).valid
    assert not barsym.validate(plan, "planks", goal_count=9).valid
    assert barsym.validate(plan, "planks", 8, goal_count=8).valid  # both, agreeing
    with pytest.raises(TypeError, match="give count or goal_count"):
        barsym.validate(plan, "planks", 8, goal_count=9)
    assert barsym.validate(plan, goal_count=9).goal == barsym.Goal(item="planks", count=9)
    assert barsym.validate(plan).goal == barsym.Goal(item="planks", count=8)  # the last step's whole count
    assert barsym.execute(plan, goal_count=8, world="deterministic", runs=1).successes == 1
    assert barsym.repair(plan, "planks", goal_count=8).valid_after
    with pytest.raises(ValueError, match="count must be from 1"):
        barsym.validate(plan, goal_count=0)
