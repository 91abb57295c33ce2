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
from ...grammars.forward_plans import render_plan
from ...prompts.few_shot import PLAN_MARK, REASONING_FORMAT

#: the reasoning lines a reply may write (cot's and DEPS' round 0): BAR's longest plans have ~18 steps
REASONING_LINES = 20

#: what one reasoning line may list: ingredients, fuel, a station, a tool and a layer
MAX_NEEDS = 6
#: the counts a step's sum may add: one per line above that took what it makes
MAX_TERMS = 8


def system_prompt() -> str:
    return (
        f"You plan Minecraft tasks. {REASONING_FORMAT}. A step is 'mine N item', 'craft N item', 'smelt N item', "
        "'kill N item', with ' with TOOL' when it needs one, or 'dig down with PICKAXE'. Logs are on the surface; "
        "dig down for cobblestone and coal (layer 1), iron (layer 2), gold, redstone and diamond (layer 3). "
        "End with done."
    )


def _used(step: Step, before: State, after: State) -> dict[str, int]:
    """What ``step`` consumed, read off the inventories before and after it (a tool worn out is not an input)."""
    return {
        name: n - after.count(name) for name, n in before.counts.items() if after.count(name) < n and name != step.tool
    }


def taken_text(rules: Rules, step: Step, used: dict[str, int]) -> str:
    """What ``step`` took, as the decomposer's replies list it: what it consumed (``used``: ingredients, then
    fuel), its station, its tool and its layer; ``1 PICKAXE`` for a dig down."""
    if step.type is StepType.DIG_DOWN:
        return f"1 {step.tool}" if step.tool else ""
    action = rules.step_action(step)
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
    cannot run from ``start`` (a plan that does not run has no true account of its needs).

    A step that makes what lines above it consumed shows where its count comes from: ``craft 6 stick
    (2 + 2 + 2): 4 planks``, the counts those lines took, in their order, when they add up to the step's
    count (a small model writes the terms one lookup at a time and adds small numbers; asked for the total
    alone it wrote the wooden chain's counts whatever came after)."""
    rules = Rules(kb)
    world = DeterministicWorld(kb)
    state = world.reset(0, start or State())
    heads, needs, used = [], [], []
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        if result.failure is not None:
            return None
        heads.append(str(step))
        used.append(_used(step, state.state, result.state.state))
        needs.append(taken_text(rules, step, used[-1]))
        state = result.state
    lines = []
    for i in reversed(range(len(steps))):
        item = steps[i].item
        terms = [used[j][item] for j in reversed(range(i + 1, len(steps))) if item and item in used[j]]
        sums = (
            f" ({' + '.join(map(str, terms))})"
            if terms and len(terms) <= MAX_TERMS and sum(terms) == steps[i].count
            else ""
        )
        lines.append(f"{heads[i]}{sums}: {needs[i]}" if needs[i] else f"{heads[i]}{sums}")
    return lines


def reasoned_reply(kb: KnowledgeBase, steps, start: State | None = None) -> str | None:
    """The whole reply for ``steps``, as a model taught this format writes it: the reasoning, the mark, the plan
    (the training examples' reply); None if the plan cannot run from ``start``."""
    reasoning = thought_lines(kb, steps, start)
    return None if reasoning is None else "\n".join([*reasoning, PLAN_MARK, render_plan(steps)])


def thought_grammar(plan_grammar: str, max_lines: int = REASONING_LINES) -> str:
    """The reply's grammar: 1 to ``max_lines`` reasoning lines (a step, then ``: `` and its needs), the mark,
    then ``plan_grammar`` (a grammar whose ``root`` is the plan) as it is."""
    plan = plan_grammar.replace("root ::=", "plan ::=", 1)
    body = 'reason "\\n"'
    nested = body
    for _ in range(max_lines - 1):
        nested = f"{body} ({nested})?"
    terms = "count"
    for _ in range(MAX_TERMS - 1):
        terms = f'count (" + " {terms})?'
    needs = "need"
    for _ in range(MAX_NEEDS - 1):
        needs = f'need (", " {needs})?'
    return (
        "\n".join(
            [
                f'root ::= {nested} "{PLAN_MARK}\\n" plan',
                f'reason ::= step sums? (": " {needs})?',
                f'sums ::= " (" {terms} ")"',
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
