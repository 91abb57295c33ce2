"""What the four added baselines say to the model: a system message, worked examples, the requests.

Each method is written here from its paper's description, in barsym's own
words and step notation, so the model meets one notation everywhere:

- **Reverse Chain** (backward chaining from the goal): the whole chain in one
  reply, the step that makes the goal first, back to the first step;
- **Self-Refine** (Madaan et al. 2023): a plan, the model's own feedback on it
  (``correct``, or ``wrong:`` and what to fix), a refined plan;
- **Tree of Thoughts** (Yao et al. 2023), breadth-first: a *propose* request
  (the plan so far, then a few possible next steps) and a *value* request
  (``sure`` / ``likely`` / ``impossible`` for a plan so far);
- **Plan-and-Solve** with the PS+ instruction (Wang et al. 2023): understand
  the task, pick out the items and counts it involves, devise the sub-tasks,
  then carry them out step by step.

As for DEPS and chain-of-thought (:mod:`.deps_prompts`, :mod:`.cot`), the
examples are not typed by hand: the plans are the symbolic planner's for stone
bricks (not one of BAR's 53 targets), so they are correct by construction;
only the short sentences of feedback are written here. With facts the task
message carries the knowledge base's facts in plan order (:mod:`.plan_facts`),
the examples' too. The prefixes are pinned in tests/golden/prompts/.
"""

from __future__ import annotations

from ...kb import KnowledgeBase
from ...model import Goal, Plan, Step, StepType
from ..grammars.forward_plans import END, render_plan
from .deps_prompts import EXAMPLE_EXPLANATION, REMOVED
from .deps_prompts import task_message as task_message
from .few_shot import layer_names
from .plan_facts import PlanFacts

EXAMPLE = Goal(item="stone_bricks", count=1)

#: one sentence on one line, as DEPS' explanation grammar (:data:`.deps_prompts.EXPLANATION_GRAMMAR`)
SENTENCE = '[A-Za-z0-9] [A-Za-z0-9 ,;:_()\'-]* "."'


def steps_text(kb: KnowledgeBase) -> str:
    """The notation and the world, said the same way in every baseline's system message."""
    return (
        "A step is 'mine N item', 'craft N item', 'smelt N item', 'kill N item' (a mob's drop), with ' with TOOL' "
        f"when it needs a tool, or 'dig down with PICKAXE', which goes one layer deeper ({layer_names(kb)}). "
        "N is how many items the plan needs. Logs are found on the surface; cobblestone and coal from layer 1, "
        "iron ore from layer 2, gold, redstone and diamond on layer 3."
    )


def _example_plan(symbolic) -> Plan:
    return symbolic.plan(EXAMPLE).plan


def numbered(steps) -> str:
    return "\n".join(str(s) for s in steps) if steps else "(no steps yet)"


# ---- Reverse Chain ---------------------------------------------------------------------------------------------


def reverse_system(kb: KnowledgeBase) -> str:
    return (
        "You plan Minecraft tasks by reasoning backwards from the goal. Write the step that makes the goal first, "
        "then the step that makes what that step needs, and so on back to the very first step, one step per "
        f"line, then the word {END}. The plan is carried out from your last line to your first. " + steps_text(kb)
    )


def reverse_turns(symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
    plan = _example_plan(symbolic)
    return [(task_message(EXAMPLE, None, facts), render_plan(tuple(reversed(plan.steps))))]


# ---- Self-Refine -----------------------------------------------------------------------------------------------

ASK_FEEDBACK = (
    "Check the plan: can every step be done with what the steps before it made, and does it make the goal? "
    "Answer correct, or wrong: and what to fix."
)
ASK_REFINE = f"Write the whole plan again with that fixed, one step per line, then {END}."
CORRECT = "correct"
WRONG = "wrong: "
FEEDBACK_GRAMMAR = f'root ::= "{CORRECT}" | "{WRONG}" {SENTENCE}\n'


def refine_system(kb: KnowledgeBase) -> str:
    return (
        "You plan Minecraft tasks, check your own plans and improve them. Asked for a plan, write the whole plan, "
        f"one step per line, first step first, then the word {END}. Asked to check it, answer correct when every "
        "step can be done with what the steps before it made and the plan makes the goal, else 'wrong: ' and one "
        "sentence on what to fix. Asked to refine it, write the whole plan again. " + steps_text(kb)
    )


def refine_turns(symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
    """A plan missing its crafting table, the feedback that says so, the refined plan, and ``correct``."""
    good = _example_plan(symbolic)
    broken = tuple(s for s in good.steps if not (s.type is StepType.CRAFT and s.item == REMOVED))
    return [
        (task_message(EXAMPLE, None, facts), render_plan(broken)),
        (ASK_FEEDBACK, WRONG + EXAMPLE_EXPLANATION),
        (ASK_REFINE, render_plan(good.steps)),
        (ASK_FEEDBACK, CORRECT),
    ]


# ---- Tree of Thoughts ------------------------------------------------------------------------------------------

RATINGS = {"sure": 20.0, "likely": 1.0, "impossible": 0.001}  # ToT's weights for its three words
VALUE_GRAMMAR = "root ::= " + " | ".join(f'"{word}"' for word in RATINGS) + "\n"


def tot_system(kb: KnowledgeBase) -> str:
    return (
        "You plan Minecraft tasks one step at a time, looking at several possible next steps. Asked to propose, "
        f"write the plan so far, then a few different possible next steps, one per line; {END} is a next step "
        "when the plan so far already makes the goal. Asked to evaluate a plan so far, answer sure if it can be "
        "finished to make the goal, likely if it may be, impossible if one of its steps cannot be done with what "
        "the steps before it made. " + steps_text(kb)
    )


def propose_message(task: str, steps, breadth: int) -> str:
    return (
        f"{task}\nThe plan so far:\n{numbered(steps)}\n"
        f"Propose: write the plan so far, then up to {breadth} different possible next steps, one per line."
    )


def value_message(task: str, steps, finished: bool) -> str:
    if finished:
        return f"{task}\nThe plan, finished:\n{numbered(steps)}\nEvaluate: does it make the goal?"
    return f"{task}\nThe plan so far:\n{numbered(steps)}\nEvaluate: can it be finished to make the goal?"


def tot_turns(symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
    """A proposal after three steps (the next two of the plan), then a sound and an impossible plan so far."""
    plan = _example_plan(symbolic).steps
    task = task_message(EXAMPLE, None, facts)
    early_goal = Step(type=StepType.CRAFT, item=plan[-1].item, count=plan[-1].count)
    proposed = "\n".join(str(s) for s in plan[:5])
    return [
        (propose_message(task, plan[:3], 2), proposed),
        (value_message(task, plan[:4], False), "sure"),
        (value_message(task, (*plan[:2], early_goal), False), "impossible"),
    ]


# ---- Plan-and-Solve (PS+) ---------------------------------------------------------------------------------------

ASK_SUBTASKS = (
    "First understand the task: pick out the items it involves and how many of each, then devise a plan "
    f"of sub-tasks, one 'get N item' per line in the order they can be done, then {END}."
)
ASK_SOLVE = (
    "Now carry out the plan step by step, minding every count, tool and crafting station: write every step, "
    f"one per line, first step first, then {END}."
)


def solve_system(kb: KnowledgeBase) -> str:
    return (
        "You plan Minecraft tasks in two parts: first the sub-tasks, then the steps that carry them out. "
        + steps_text(kb)
    )


def subtasks_of(steps) -> list[str]:
    """The example's sub-tasks: what its crafts and smelts make, in plan order (the items worth a sub-task)."""
    return [f"get {s.count} {s.item}" for s in steps if s.type in (StepType.CRAFT, StepType.SMELT)]


def solve_turns(symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
    plan = _example_plan(symbolic).steps
    return [
        (f"{task_message(EXAMPLE, None, facts)}\n{ASK_SUBTASKS}", "\n".join([*subtasks_of(plan), END])),
        (ASK_SOLVE, render_plan(plan)),
    ]
