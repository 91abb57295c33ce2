"""barsym.env.CraftingEnv against gymnasium's own checker, its registration, and its action forms."""

from __future__ import annotations

import warnings

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the env needs the [env] extra: pip install 'barsym[env]'")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import barsym.env  # noqa: E402  (registers barsym/Crafting-v0)
from barsym.model import Step, StepType  # noqa: E402


@pytest.mark.parametrize("world", ["stochastic", "deterministic"])
def test_check_env_passes_without_a_warning(world):
    env = gymnasium.make(barsym.env.ENV_ID, goal="stone_pickaxe", world=world, render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    env.close()


def test_registered_and_made_with_options():
    assert barsym.env.ENV_ID in gymnasium.registry
    env = gymnasium.make("barsym/Crafting-v0", goal="iron_pickaxe", start={"stone_pickaxe": 1}, max_steps=5)
    observation, info = env.reset(seed=3)
    assert info["observation"].inventory == {"stone_pickaxe": 1} and observation in env.observation_space
    assert env.unwrapped.goal.item == "iron_pickaxe"


def test_a_seed_gives_the_same_episode_and_no_seed_follows_the_generator():
    env = barsym.env.CraftingEnv("iron_pickaxe", world="stochastic", max_steps=40)

    def episode(seed):
        env.reset(seed=seed)
        env.action_space.seed(11)
        ticks = []
        while not env.done:
            ticks.append(env.step(env.action_space.sample())[4]["ticks"])
        return ticks

    assert episode(7) == episode(7)
    env.reset(seed=9)
    first = [env.reset()[1]["observation"].ticks for _ in range(2)]
    env.reset(seed=9)
    assert [env.reset()[1]["observation"].ticks for _ in range(2)] == first


def test_every_action_form_and_clear_refusals():
    env = barsym.env.CraftingEnv("stick", world="deterministic")
    env.reset(seed=0)
    logs = Step(type=StepType.MINE, item="logs", count=1)
    index = env.actions.index(logs)
    assert (
        env.as_step(index)
        == env.as_step("mine 1 logs")
        == env.as_step({"type": "mine", "obj_name": "logs", "obj_num": 1})
        == logs
    )
    _, _, _, _, info = env.step("mine 2 logs")
    assert info["failure"] is None and env.observation.inventory == {"logs": 2}
    with pytest.raises(ValueError, match="a string action is a step such as 'mine 4 logs'"):
        env.step("go fishing")
    with pytest.raises(ValueError, match="out of range"):
        env.step(len(env.actions))
    with pytest.raises(ValueError, match="an action is an index into env.actions"):
        env.step(1.5)
    with pytest.raises(ValueError, match="takes no options"):
        env.reset(options={"goal": "diamond"})


def test_ansi_render_describes_the_episode():
    env = barsym.env.CraftingEnv("stick", world="deterministic", render_mode="ansi")
    env.reset(seed=0)
    env.step("mine 1 logs")
    assert env.render().startswith("step 1: 1 logs; layer 0 (surface)")
    assert barsym.env.CraftingEnv("stick", world="deterministic").render() is None
    with pytest.raises(ValueError, match="render_mode"):
        barsym.env.CraftingEnv("stick", render_mode="human")


@pytest.mark.parametrize(
    "options, error, words",
    [
        ({"layer": 9}, ValueError, "layer must be from 0 to"),
        ({"layer": -1}, ValueError, "layer must be from 0 to"),
        ({"layer": "2"}, TypeError, "layer must be a whole number"),
        ({"max_steps": -5}, ValueError, "max_steps must be at least 1"),
        ({"max_steps": 0}, ValueError, "max_steps must be at least 1"),
        ({"budget": -1}, ValueError, "budget must be at least 1"),
        ({"budget": 2.5}, TypeError, "budget must be a whole number"),
    ],
)
def test_arguments_out_of_range_are_refused_by_the_constructor(options, error, words):
    with pytest.raises(error, match=words):
        barsym.env.CraftingEnv("stick", **options)  # not an IndexError at reset() or step()


def test_the_deepest_layer_is_accepted():
    env = barsym.env.CraftingEnv("stick", layer=env_deepest())
    observation, _ = env.reset(seed=0)
    assert observation["layer"] == env_deepest()


def env_deepest() -> int:
    from barsym.api import knowledge_base

    return knowledge_base().deepest_layer
