"""Reading the model's reply to one goal as a decomposition: the step and subgoals it names, the counts the
context credits, the spare units an earlier batch supplies, and the loops it would make.

Split from :mod:`.bar_decomposer` (the conversation with the model: prompts, retries, counters, fallback)
along that seam: everything here is about one reply and the plan so far, and asks no model.
"""

from __future__ import annotations

import dataclasses

from ....kb import KnowledgeBase, Rules
from ....model import MAX_COUNT, Goal, StepType
from ....planner.conventions import fitting_craft
from ....planner.decomposer import Decomposition, PlanContext, goal_layer
from ...calls.model_calls import CUT_OFF
from ...grammars.reply_grammar import GrammarBuilder, ReplyError, parse_reply

#: where an accepted answer came from (a decomposition's provenance)
LLM = "llm"


class ReplyReader:
    """One knowledge base's, rule profile's and grammar builder's reading of replies."""

    def __init__(self, kb: KnowledgeBase, rules: Rules, grammars: GrammarBuilder):
        self.kb, self.rules, self.grammars = kb, rules, grammars

    def build(self, goal: Goal, asked: Goal, text: str, context: PlanContext) -> Decomposition:
        """The reply as a decomposition of ``asked`` (the model's own counts, context credits applied)."""
        reply = parse_reply(text.replace(CUT_OFF, ""), self.kb)
        step = reply.step
        layer = goal_layer(goal)
        if layer is not None and step.type is not StepType.DIG_DOWN:
            raise ReplyError(f"the goal is to reach layer {layer}: that takes a dig down step, not {step.type.value}")
        if layer is None and step.type is StepType.DIG_DOWN:
            raise ReplyError(f"a dig down does not make {goal.item}")
        yields, credit = None, 0.0
        if step.type is StepType.CRAFT:
            craft = fitting_craft(self.rules, self.kb.resolve(step.item), step.count or 0, reply.subgoals)
            if craft is not None:
                yields = craft.makes
        elif step.type is StepType.SMELT:
            credit = min(context.fuel_left(self.kb.resolve(step.item)), float(step.count))
        return Decomposition(step, reply.subgoals, LLM, yields=yields, fuel_credit=credit)

    def widen(self, goal: Goal, asked: Goal, decomposition: Decomposition) -> Decomposition:
        """Answer for ``asked`` -> answer for ``goal``: spare units the context supplied join the step."""
        extra = goal.count - asked.count
        step = decomposition.step
        if not extra or step.type is StepType.DIG_DOWN:
            return decomposition
        made = decomposition.made
        step = step.model_copy(update={"count": min(MAX_COUNT, (step.count or 0) + extra)})
        note = (decomposition.note + "; " if decomposition.note else "") + f"{extra} spare from an earlier batch used"
        # the step changed after the check: the loop verifies the widened answer (verified=False)
        return dataclasses.replace(decomposition, step=step, yields=made, note=note, verified=False)

    def loops(self, asked: Goal, decomposition: Decomposition, context: PlanContext) -> list[str]:
        target = asked.item
        above = {self.name(g) for g in context.path}
        problems = []
        held = context.held_counts()
        for sub in decomposition.subgoals:
            name = self.name(sub)
            if held is not None and held(name) >= sub.count:
                continue  # held at the start: not made here, so it cannot loop (an iron pickaxe digging to stone)
            needs = self.grammars.requires(name)
            if name in above:
                problems.append(f"{name} is already being obtained further up this plan; asking for it again loops")
            elif name != target and target in needs:
                problems.append(f"{name} is itself made with {target.replace(':', ' ')}, so it cannot help obtain it")
            elif needs & above:
                first = sorted(needs & above)[0].replace(":", " ")
                problems.append(f"{name} is made with {first}, which this goal is part of obtaining; that loops")
        return problems

    def name(self, goal: Goal) -> str:
        if goal_layer(goal) is not None:
            return goal.item
        return self.kb.resolve(goal.item) if self.kb.is_known(goal.item) else goal.item
