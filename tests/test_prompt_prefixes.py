"""The fixed few-shot prefixes, pinned as golden text files (tests/golden/prompts/).

The model's prefix cache (``llm.llamacpp.prefix_state``, and llama.cpp's KV cache) keys
on the exact text of the system message and the example turns, so a change
of a single character makes every saved prefix state useless and changes what
the model is shown. A failure here prints the difference line by line; if the
change was meant, rewrite the files with ``BARSYM_UPDATE_GOLDEN=1 pytest
tests/test_prompt_prefixes.py`` and review them in the diff of the commit.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

from barsym.eval.dataset import load_dataset, resolve_dataset
from barsym.llm import LLMOptions, ScriptedLLM
from barsym.planner import make_planner
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.planners.forward.cot import CotPlanner
from barsym.reasoning.planners.forward.deps import DepsPlanner
from barsym.reasoning.spec import PlannerSpec

GOLDEN = Path(__file__).parent / "golden" / "prompts"
ROLES = ["system"] + ["user", "assistant"] * 4


def rendered(messages) -> str:
    """The messages as a person reads them: a header line per message, then its text."""
    return "".join(f"### {m['role']}\n{m['content']}\n" for m in messages)


def check_golden(name: str, messages) -> None:
    path = GOLDEN / f"{name}.txt"
    text = rendered(messages)
    if os.environ.get("BARSYM_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), text.splitlines(True), f"{path.name} (golden)", f"{path.name} (now)"
            )
        )
        pytest.fail(f"the {name} prompt prefix changed (BARSYM_UPDATE_GOLDEN=1 rewrites the file):\n{diff}")


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "no-facts"])
def test_the_deps_prefix_is_unchanged(kb, facts):
    graph = graph_for(kb)
    options = {"graph": graph, "log": False, "facts": facts, "deps_rounds": 5, "feedback_world": "deterministic"}
    planner = DepsPlanner(kb, PlannerSpec.of("deps", options), ScriptedLLM([], LLMOptions(n_ctx=4096)))
    # without facts no worked example: round 0's reasoning (cot_needs) would spell out recipes of BAR's goal trees
    assert [m["role"] for m in planner.prefix] == (ROLES if facts else ["system"])
    check_golden(f"deps-{'facts' if facts else 'no-facts'}", planner.prefix)


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "no-facts"])
def test_the_cot_prefix_is_unchanged(kb, facts):
    graph = graph_for(kb)
    planner = CotPlanner(kb, PlannerSpec.of("cot", {"graph": graph, "log": False, "facts": facts}), ScriptedLLM([]))
    # without facts no worked example: any plan's reasoning (cot_needs) spells out recipes of BAR's goal trees
    assert [m["role"] for m in planner.prefix] == (["system", "user", "assistant"] if facts else ["system"])
    check_golden(f"cot-{'facts' if facts else 'no-facts'}", planner.prefix)


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "no-facts"])
def test_the_bar_prefix_is_unchanged(kb, facts):
    planner = make_planner("bar", kb, backend=ScriptedLLM([]), log=False, facts=facts)
    prefix = planner.decomposer.caller.prefix
    # with facts (graph mode) the 8 goals the graph leaves to the model; without, no worked answer at all
    assert len(prefix) == (17 if facts else 1) and prefix[0]["role"] == "system"
    check_golden(f"bar-{'facts' if facts else 'no-facts'}", prefix)


@pytest.mark.parametrize("facts", [True, False], ids=["facts", "no-facts"])
@pytest.mark.parametrize("name", ["reverse-chain", "self-refine", "tot", "plan-and-solve"])
def test_the_baseline_prefixes_are_unchanged(kb, name, facts):
    from barsym.planner.registry import entry
    from barsym.reasoning.spec import PlannerSpec

    # the forward planners offer no facts mode (issue 54): the class's is reached past the registry's check
    options = {"backend": ScriptedLLM([]), "log": False, "facts": facts}
    planner = entry(name).factory(kb, PlannerSpec.of(name, options))
    assert planner.prefix[0]["role"] == "system" and len(planner.prefix) % 2 == 1
    check_golden(f"{name}-{'facts' if facts else 'no-facts'}", planner.prefix)


def goal_tree_items(kb) -> set[str]:
    """Every item a step of the symbolic plan of one of BAR's 53 or DEPS' 70 tasks makes or uses."""
    from barsym.distill.goals import HELD_OUT_DATASETS
    from barsym.eval.dataset import load_dataset, resolve_dataset

    symbolic = symbolic_planner(kb, graph=graph_for(kb))
    items: set[str] = set()
    for name in HELD_OUT_DATASETS:
        path, dialect = resolve_dataset(name)
        for task in load_dataset(path, kb, dialect):
            for step in symbolic.plan(task.goal).plan.steps:
                items |= {name for name in (step.item, step.tool) if name}
    return items


RECIPE_LINE = re.compile(r"\b(?:craft|smelt) \d+ ([a-z_]+): ")


def test_no_facts_prompts_spell_out_no_recipe_of_a_benchmark_item(kb):
    """Without facts a prompt holds no worked answer: no 'craft N X: inputs' line of an item in BAR's or DEPS'
    goal trees, in any planner's fixed prefix (its few-shot turns included) or in its first question for any
    of BAR's goals (so a model that answers has it from what it knows, not from the prompt)."""
    tree = goal_tree_items(kb)
    assert {"stick", "crafting_table", "iron_pickaxe", "furnace", "planks"} <= tree
    prompts = {"bar": make_planner("bar", kb, backend=ScriptedLLM([]), log=False, facts=False).decomposer}
    texts = {"bar": [m["content"] for m in prompts["bar"].caller.prefix]}
    path, dialect = resolve_dataset("bar")
    for task in load_dataset(path, kb, dialect):
        texts["bar"] += [m["content"] for m in prompts["bar"].prompts.first(task.goal)]
    graph = graph_for(kb)
    cot = CotPlanner(kb, PlannerSpec.of("cot", {"graph": graph, "log": False, "facts": False}), ScriptedLLM([]))
    texts["cot"] = [m["content"] for m in cot.prefix]
    for name in ("deps", "reverse-chain", "self-refine", "tot", "plan-and-solve"):
        texts[name] = [m["content"] for m in make_planner(name, kb, backend=ScriptedLLM([]), log=False).prefix]
    for name, contents in texts.items():
        leaked = {m.group(1) for text in contents for m in RECIPE_LINE.finditer(text)} & tree
        assert not leaked, f"{name}'s no-facts prompt spells out recipes of {sorted(leaked)}"
