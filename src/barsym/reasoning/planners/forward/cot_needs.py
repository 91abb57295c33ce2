"""Chain-of-thought without facts: the model first reasons backward, then writes the plan forward.

Why: without facts a small model asked for a whole plan at once writes a template (logs, planks, a
table, then the goal), because nothing in its prompt or its reply holds what the goal is made of.
What it does know is one step at a time: asked "Goal: 3 iron_ingot" it answers ``smelt 3 iron_ingot:
3 iron_ore, 2 planks, 1 furnace`` (the knowledge it was taught, :mod:`barsym.distill.knowledge`). So
the reply starts with that reasoning, in the same words: the plan's steps from the last to the first,
each with what it takes (``craft 1 iron_pickaxe: 3 iron_ingot, 2 stick, 1 crafting_table``), so each
line's needs are what the lines after it make; then ``plan:`` and the same steps first to last, one a
line. The model writes both parts in one call; nothing checks the reasoning, and only the plan part is
played. The reasoning takes the place of the inventory written after each step (:mod:`.cot`'s format
with facts): it is the bookkeeping, and a reply with both would be twice as long for a model that
writes ~40 tokens a second on one core.

This is BAR's idea (reason backward from the goal) inside the forward baseline's one reply, which is
what chain-of-thought asks of a model: think, then answer. With facts the prompt already holds the
recipes (:mod:`.plan_facts`) and the reply is the plan alone.

:func:`thought_lines` writes the reasoning for a plan that runs: what each step takes is read off the
simulator (what the step consumed, the fuel included) and the rule book (its station, tool and layer),
in the order the decomposer's replies name them (ingredients, fuel, station, tool, layer).
"""

from __future__ import annotations

from ....kb import KnowledgeBase, Rules
from ....model import Step, StepType
from ....sim import DeterministicWorld, State

#: the line between the reasoning and the plan
PLAN_MARK = "plan:"
#: what one reasoning line may list: ingredients, fuel, a station, a tool and a layer
MAX_NEEDS = 6


def system_prompt() -> str:
    return (
        "You plan Minecraft tasks. First reason backward from the goal: one line per step of the plan, the last "
        "step first, each with what it takes, as 'STEP: N ITEM, N ITEM, ...' (its ingredients, fuel, station, tool and layer). "
        "Then write 'plan:' and the same steps first to last, one per line. A step is 'mine N item', 'craft N item', 'smelt N item', "
        "'kill N item', with ' with TOOL' when it needs one, or 'dig down with PICKAXE'. Logs are on the surface; "
        "dig down for cobblestone and coal (layer 1), iron (layer 2), gold, redstone and diamond (layer 3). "
        "End with done."
    )


def needs_text(rules: Rules, step: Step, before: State, after: State) -> str:
    """What ``step`` took, as the decomposer's replies list it: what it consumed (ingredients, then fuel), its
    station, its tool and its layer; ``1 PICKAXE`` for a dig down."""
    if step.type is StepType.DIG_DOWN:
        return f"1 {step.tool}" if step.tool else ""
    used = {
        name: n - after.count(name)
        for name, n in before.counts.items()
        if after.count(name) < n and name != step.tool  # a tool worn to nothing is not an input
    }
    try:
        action = rules.action(step.type.value, step.item, step.count)
    except (KeyError, IndexError, ValueError):
        action = None
    order: list[str] = []
    for slot in action.needs if action is not None else ():
        order += [name for name in slot.accepts if name in used and name not in order]
    order += sorted(name for name in used if name not in order)
    parts = [f"{used[name]} {name}" for name in order]
    if action is not None and action.station:
        parts.append(f"1 {action.station}")
    if step.tool:
        parts.append(f"1 {step.tool}")
    if action is not None and action.layer:
        parts.append(f"layer {action.layer}")
    return ", ".join(parts[:MAX_NEEDS])


def thought_lines(kb: KnowledgeBase, steps, start: State | None = None) -> list[str] | None:
    """The reasoning for ``steps``: each step with what it takes, the last step first; None if the plan
    cannot run from ``start`` (a plan that does not run has no true account of its needs)."""
    rules = Rules(kb)
    world = DeterministicWorld(kb)
    state = world.reset(0, start or State())
    lines = []
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        if result.failure is not None:
            return None
        needs = needs_text(rules, step, state.state, result.state.state)
        lines.append(f"{step}: {needs}" if needs else str(step))
        state = result.state
    return lines[::-1]


def thought_grammar(plan_grammar: str, max_lines: int) -> str:
    """The reply's grammar: 1 to ``max_lines`` reasoning lines (a step, then ``: `` and its needs), the mark,
    then ``plan_grammar`` (a grammar whose ``root`` is the plan) as it is."""
    plan = plan_grammar.replace("root ::=", "plan ::=", 1)
    body = 'reason "\\n"'
    nested = body
    for _ in range(max_lines - 1):
        nested = f"{body} ({nested})?"
    needs = "need"
    for _ in range(MAX_NEEDS - 1):
        needs = f'need (", " {needs})?'
    return (
        "\n".join(
            [
                f'root ::= {nested} "{PLAN_MARK}\\n" plan',
                f'reason ::= step (": " {needs})?',
                'need ::= count " " item | "layer " [1-9]',
            ]
        )
        + "\n"
        + plan
    )


def split_reply(text: str) -> tuple[list[str], str]:
    """(the reasoning lines, the plan part) of a reply; no mark: no reasoning, the whole reply is the plan."""
    head, mark, tail = text.partition(PLAN_MARK)
    if not mark:
        return [], text
    return [line.strip() for line in head.splitlines() if line.strip()], tail
