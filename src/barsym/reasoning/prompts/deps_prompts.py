"""What DEPS says to the model: the planner's instructions, one worked plan, one repaired failure.

DEPS (Wang et al. 2023) prompts the model with the task, asks for the whole
plan, and after a failed execution adds the descriptor's words, asks for an
explanation, then for a revised plan, all in one growing dialogue. Its
Minecraft prompts (appendix G) show a stone_sword plan that fails and is
repaired by putting in the missing crafting table; the repaired example here
does the same for stone bricks.

The examples are not typed by hand: the plans come from barsym's symbolic
planner and the failure's description from the execution world's own
descriptor (:func:`barsym.sim.execution.describe`), so they are correct and say
things the way the real loop will. Neither example goal (lantern, stone
bricks) is one of BAR's 53 or DEPS' 70 task targets. Only the one-sentence
explanation is written here.
"""

from __future__ import annotations

from ...kb import KnowledgeBase
from ...model import Goal, Plan, StepType
from ...sim import DeterministicWorld, State
from ...sim.execution import describe, play
from ..grammars.forward_plans import render_plan
from .few_shot import REASONING_FORMAT, layer_names
from .plan_facts import PlanFacts

PLAN_EXAMPLE = Goal(item="lantern", count=1)
REPAIR_EXAMPLE = Goal(item="stone_bricks", count=1)
#: the step the repair example leaves out, and what the model is shown saying about it
REMOVED = "crafting_table"
EXAMPLE_EXPLANATION = (
    "The plan never crafts a crafting_table, and crafting a wooden_pickaxe needs one; craft the crafting_table first."
)

ASK_EXPLAIN = "Explain in one sentence why the plan failed."
ASK_REPLAN = "Write the whole plan again, fixed, one step per line, then done."


def system_prompt(kb: KnowledgeBase) -> str:
    layers = layer_names(kb)
    return (
        "You plan Minecraft tasks. Write the whole plan to obtain the goal, one step per line, first step first, "
        "then the word done. A step is 'mine N item', 'craft N item', 'smelt N item', 'kill N item' (a mob's "
        "drop), with ' with TOOL' when it needs a tool, or 'dig down with PICKAXE', which goes one layer "
        f"deeper ({layers}). N is how many items the plan needs. Logs are found on the surface; "
        "cobblestone and coal from layer 1, iron ore from layer 2, gold, redstone and diamond on layer 3. "
        "When a plan fails you are told what happened; explain it, then write the plan again."
    )


def reasoning_system_prompt(kb: KnowledgeBase) -> str:
    """Without facts: round 0 reasons backward first (:mod:`..planners.forward.cot_needs`), a replan is the plan."""
    layers = layer_names(kb)
    return (
        f"You plan Minecraft tasks. {REASONING_FORMAT}, then the word done. "
        "A step is 'mine N item', 'craft N item', 'smelt N item', 'kill N item' (a mob's drop), with ' with TOOL' "
        f"when it needs a tool, or 'dig down with PICKAXE', which goes one layer deeper ({layers}). N is how many "
        "items the plan needs. Logs are found on the surface; cobblestone and coal from layer 1, iron ore from "
        "layer 2, gold, redstone and diamond on layer 3. When a plan fails you are told what happened; explain "
        "it, then write the whole plan again, one step per line, then done."
    )


def task_message(goal: Goal, start: State | None = None, facts: PlanFacts | None = None) -> str:
    """The task; with ``facts``, the knowledge base's facts for every item of it, in plan order."""
    held = ""
    if start is not None and (start.inventory or start.layer):
        held = f"\nYou start with: {start.describe()}."
    known = facts.text(goal, start) if facts is not None else ""
    return f"Goal: {goal.count} {goal.item}{held}" + (f"\n{known}" if known else "")


def failure_message(description: str) -> str:
    return f"The plan was executed. {description}.\n{ASK_EXPLAIN}"


def few_shot(kb: KnowledgeBase, symbolic, facts: PlanFacts | None = None) -> list[tuple[str, str]]:
    """The example turns after the system message, as (user, assistant): a plan, then a failed plan, its
    description, its repair (laid out by :func:`~.prompts.few_shot_prefix`)."""
    plan = symbolic.plan(PLAN_EXAMPLE).plan
    good = symbolic.plan(REPAIR_EXAMPLE).plan
    broken = Plan(steps=tuple(s for s in good.steps if not (s.type is StepType.CRAFT and s.item == REMOVED)))
    world = DeterministicWorld(kb)
    episode = play(world, broken, 0, REPAIR_EXAMPLE, State(), None)
    description = describe(episode, broken, tuple(kb.layers))
    return [
        (task_message(PLAN_EXAMPLE, None, facts), render_plan(plan.steps)),
        (task_message(REPAIR_EXAMPLE, None, facts), render_plan(broken.steps)),
        (failure_message(description), EXAMPLE_EXPLANATION),
        (ASK_REPLAN, render_plan(good.steps)),
    ]


#: One line of plain text ending with a full stop. The explanation is free text in DEPS; the grammar
#: only keeps it to one line of what a sentence is made of, so it cannot run on into a plan.
EXPLANATION_GRAMMAR = 'root ::= [A-Za-z0-9] [A-Za-z0-9 ,;:_()\'-]* "."\n'
