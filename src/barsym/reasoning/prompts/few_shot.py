"""What the LLM decomposer says to the model: BAR's question, examples, feedback.

BAR asks the model one thing per goal: the single step that makes it and the
sub-goals that step needs. The prompt is laid out for the KV cache: a fixed
system message and fixed few-shot turns come first and are identical in every
call of the process, and the goal is the last user message. llama.cpp then
reuses the prefix and evaluates only the ~10 tokens of the new goal (measured:
~8 instead of ~400 per call).

The few-shot answers are not written by hand: they are produced by the
SymbolicDecomposer on fixed goals, so they are always correct and follow the
same conventions (generic ``logs``/``planks``, fuel as planks, the lowest tool
tier, one ``layer N`` subgoal per underground resource) as the verifier and the
expert plans. The goals are chosen to show every kind of step and some batch
arithmetic, and none of them is one of BAR's 53 task targets, so the examples
never contain a task's answer verbatim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ...kb import KnowledgeBase
from ...model import Goal
from ...planner.decomposer import PlanContext, PlanningError, goal_layer, layer_goal
from ...planner.symbolic import SymbolicDecomposer
from ..grammars.reply_grammar import render_goal, render_reply

#: Goals whose symbolic answers become the few-shot turns, in prompt order.
#: Crafts come last: a small model leans towards the most recent example, and
#: most goals in a plan are crafts.
FEW_SHOT_GOALS: tuple[Goal, ...] = (
    layer_goal(1),
    Goal(item="iron_ore", count=5),
    Goal(item="logs", count=3),
    layer_goal(2),
    Goal(item="coal", count=2),
    Goal(item="stone", count=4),
    Goal(item="gold_ore", count=2),
    layer_goal(3),
    Goal(item="crafting_table", count=1),
    Goal(item="planks", count=9),
    Goal(item="lever", count=1),
    Goal(item="chest", count=1),
    Goal(item="stick", count=6),
    Goal(item="wooden_pickaxe", count=1),
)

#: The few-shot goals of graph mode with facts: the goals the graph leaves to the model there.
#: A dig down (the plan's pickaxe for the layer) is admitted by one line, and so is an item with one
#: way of being mined (iron_ore, logs, gold_ore) unless a held tool adds another; the decomposer
#: writes such a line without a call, so those examples seldom match a question, while every goal's
#: message attends to them: leaving them out shortens the prefix from 806 tokens to 488.
#: ``coal`` stays: mined, or crafted from a coal_block, it is a choice the model makes.
GRAPH_FACTS_GOALS: tuple[Goal, ...] = tuple(
    g for g in FEW_SHOT_GOALS if g.item not in ("layer:1", "layer:2", "layer:3", "iron_ore", "logs", "gold_ore")
)

Message = dict[str, str]


#: the line between a no-facts forward reply's backward reasoning and its plan (cot, DEPS' round 0)
PLAN_MARK = "plan:"
#: how that reasoning is written: one sentence that cot's and DEPS' no-facts system prompts share
REASONING_FORMAT = (
    "First reason backward from the goal: one line per step of the plan, the last step first, each with what it "
    "takes, as 'STEP: N ITEM, N ITEM, ...' (its ingredients, fuel, station, tool and layer); a step that makes what "
    f"lines above took shows the counts they took, 'STEP (N + N): ...'. Then write '{PLAN_MARK}' and the same steps "
    "first to last, one per line"
)


def few_shot_prefix(system: str, turns: Iterable[tuple[str, str]]) -> tuple[Message, ...]:
    """The fixed start of every conversation: the system message, then each example as (question, answer).

    The one layout BAR's decomposer, DEPS and chain-of-thought share, so the
    prefix the KV cache and the saved prefix states key on is built one way.
    """
    messages = [{"role": "system", "content": system}]
    for asked, answered in turns:
        messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
    return tuple(messages)


#: Dig downs depend on the highest tier the whole plan needs; the examples are
#: answered as part of a plan that needs every tier, so each layer is dug with
#: its own pickaxe (wooden -> layer 1, stone -> 2, iron -> 3) as in BAR.
EXAMPLE_ROOT = Goal(item="diamond_pickaxe", count=1)


def layer_names(kb: KnowledgeBase) -> str:
    """The underground layers as every system prompt names them: ``layer 1 = stone, ...``."""
    return ", ".join(f"layer {n} = {kb.layers[n]}" for n in range(1, len(kb.layers)))


def system_prompt(kb: KnowledgeBase) -> str:
    layers = layer_names(kb)
    return (
        "You plan Minecraft tasks backwards, one goal at a time. Reply with ONE step that makes the goal, "
        "then a colon and the sub-goals that step needs: every ingredient with its count, the tool, "
        "a crafting_table or furnace when needed, fuel when smelting, and 'layer N' when the step happens "
        f"underground ({layers}; a dig down starts from the layer above). "
        "A craft makes whole batches. Reply on one line, nothing else."
    )


def crafting_system_prompt() -> str:
    """The system prompt under a rule profile without gathering (Plancraft's): no tools, layers, furnace or fuel."""
    return (
        "You plan Minecraft crafting tasks backwards, one goal at a time. Every raw item is in the inventory. "
        "Reply with ONE step that crafts or smelts the goal, then a colon and every ingredient it needs with its "
        "count. A craft makes whole batches. Reply on one line, nothing else."
    )


def goal_message(goal: Goal, facts: str = "") -> str:
    """The question for one goal; ``facts`` (what the knowledge base knows about it) on a second line."""
    return f"Goal: {render_goal(goal)}" + (f"\n{facts}" if facts else "")


def feedback_message(goal: Goal, problems: Sequence[str]) -> str:
    """The verifier's objections in words, then the same question again."""
    listed = "; ".join(problems[:4])
    return f"That is wrong: {listed}. Answer again. Goal: {render_goal(goal)}"


def unreadable_message(goal: Goal, reason: str) -> str:
    return f"I cannot use that: {reason}. Reply on one line like 'craft N item: N ingredient, 1 crafting_table'. Goal: {render_goal(goal)}"


#: What the knowledge base knows about a goal in its plan so far, as one line ("" for nothing).
Facts = Callable[[Goal, PlanContext], str]


class PromptBook:
    """The fixed prefix (system + few-shot turns) and the per-goal conversations.

    The prefix is built once per decomposer and reused verbatim, which is what
    makes the model's KV-cache reuse work. With ``facts``, every goal message
    (the examples' too, so the model sees how facts become an answer) carries
    what the knowledge base knows about that goal.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        symbolic: SymbolicDecomposer,
        goals: Sequence[Goal] = FEW_SHOT_GOALS,
        root: Goal = EXAMPLE_ROOT,
        facts: Facts | None = None,
    ):
        self.kb = kb
        self.facts = facts
        rules = symbolic.rules
        survival = rules.can_gather and rules.generic_names
        turns = []
        for goal in goals:
            if not survival and not self._fits(goal, rules):
                continue  # an example the profile forbids (a dig, a mined item, a family name) would mislead
            context = PlanContext(kb, root)
            try:
                answer = symbolic.decompose(goal, context)  # before the facts: they are of the context it leaves
            except PlanningError:
                if survival:
                    raise
                continue
            turns.append((self.goal_message(goal, context), render_reply(answer)))
        system = system_prompt(kb) if survival else crafting_system_prompt()
        self.prefix: tuple[Message, ...] = few_shot_prefix(system, turns)
        self.examples = len(turns)

    @staticmethod
    def _fits(goal: Goal, rules) -> bool:
        """Whether the profile lets a plan make ``goal`` by crafting or smelting, as written."""
        if goal.item.startswith("layer:") or (goal.item in rules.kb.generic and not rules.generic_names):
            return False
        return any(kind in ("craft", "smelt") for kind in rules.producers(rules.kb.resolve(goal.item)))

    def goal_message(self, goal: Goal, context: PlanContext) -> str:
        """The goal's question: for an item, with facts, their line alone (its first way names the
        item and the count); otherwise ``Goal: N item`` or ``Goal: layer N``, with the facts below."""
        facts = self.facts(goal, context) if self.facts else ""
        return facts if facts and goal_layer(goal) is None else goal_message(goal, facts)

    def first(self, goal: Goal, context: PlanContext | None = None) -> list[dict[str, str]]:
        """The conversation for a goal's first attempt (``context``: the plan so far, for the facts)."""
        context = context or PlanContext(self.kb, goal)
        return [dict(m) for m in self.prefix] + [{"role": "user", "content": self.goal_message(goal, context)}]

    @staticmethod
    def follow_up(messages: list[dict[str, str]], reply: str, objection: str) -> list[dict[str, str]]:
        """The same conversation, extended by the model's reply and our objection."""
        return messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": objection}]
