"""``reverse-chain``: a backward thought chain, from the goal to the first step, written in one reply.

Reverse Chain plans backwards: it picks what produces the goal first, then
what that needs, and so on down to what can be done at once. Here the model
writes that whole chain in a single reply under the plan grammar, one step a
line, the step that makes the goal first, then ``done``; the plan is the chain
read from its last line to its first. Unlike ``bar``, which also goes
backwards, nothing checks a step against the crafting graph before the next
one is asked for, and there is no decomposition tree: the chain is the model's
alone, scored by the validator as it stands.

The reply is complete when it reaches ``done``; a chain cut off at the length
limit is still played, and its trace says it never finished.
"""

from __future__ import annotations

from ....kb import KnowledgeBase
from ....model import Step
from ...prompts import baseline_prompts as prompts
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from .baseline_loop import BaselinePlanner, BaselineTrace, StopReason
from .forward_loop import Task


class ReverseChainPlanner(BaselinePlanner):
    name = "reverse-chain"

    def system(self, kb: KnowledgeBase) -> str:
        return prompts.reverse_system(kb)

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return prompts.reverse_turns(symbolic, facts)

    def run(self, task: Task, trace: BaselineTrace) -> tuple[Step, ...]:
        self.say(task, "writing the chain back from the goal", 1, 1)
        read = self.ask_plan(task, self.task_messages(task), trace, "chain")
        if read is None:
            return ()
        trace.rounds = 1
        if not read.ended:
            trace.stopped = StopReason.UNFINISHED
        return tuple(reversed(read.steps))


def reverse_chain_planner(kb: KnowledgeBase, spec: PlannerSpec) -> ReverseChainPlanner:
    """``reverse-chain``: the LLM options apply."""
    from ...calls.backends import backend_for

    return ReverseChainPlanner(kb, spec, spec.context.backend or backend_for(spec.llm, progress=spec.context.progress))
