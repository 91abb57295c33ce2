"""``self-refine``: a plan, the model's own feedback on it, a refined plan, until the feedback says correct.

Self-Refine (Madaan et al. 2023) has one model play three parts in turn: it
writes an output, writes feedback on that output, and writes the output again
with the feedback taken in, keeping the earlier attempts and feedback in view;
it stops when the feedback says nothing is left to fix or after a fixed
number of rounds. Here, in one growing dialogue:

1. the task; the model writes the whole plan (the plan grammar, as ``cot`` and
   ``deps``);
2. the request to check it; the model answers ``correct`` or ``wrong:`` and one
   sentence on what to fix (a small grammar);
3. on ``wrong``, the request to refine; the model writes the whole plan again.

Steps 2 and 3 repeat up to ``refine_rounds`` times (``--refine-rounds``). No
world or simulator takes part -- that is DEPS' difference: DEPS' feedback is
what happened when the plan ran, Self-Refine's is the model's own opinion.
The plan returned is the last one written. When the dialogue outgrows the
model's context, the oldest rounds are left out of the prompt, the task and
the latest plan always kept; when even that does not fit the loop stops.
"""

from __future__ import annotations

from ....kb import KnowledgeBase
from ....model import Step
from ...grammars.forward_plans import render_plan
from ...prompts import baseline_prompts as prompts
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from .baseline_loop import (
    PLAN_TOKENS,
    BaselinePlanner,
    BaselineTrace,
    StopReason,
    plain,
)
from .forward_loop import Task

DEFAULT_ROUNDS = 3
MAX_ROUNDS = 10
FEEDBACK_TOKENS = 48
MAX_CONTEXT = 8192


class SelfRefinePlanner(BaselinePlanner):
    name = "self-refine"

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend, *, n_ctx: int | None = None):
        rounds = spec.baselines.refine_rounds
        rounds = DEFAULT_ROUNDS if rounds is None else rounds
        if not 0 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"--refine-rounds must be from 0 to {MAX_ROUNDS}, got {rounds}")
        self.rounds = rounds
        super().__init__(kb, spec, backend, n_ctx=n_ctx)

    def system(self, kb: KnowledgeBase) -> str:
        return prompts.refine_system(kb)

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return prompts.refine_turns(symbolic, facts)

    def budget(self) -> str:
        return f"{self.rounds} refinement round(s)"

    def spent(self, trace: BaselineTrace) -> str:
        return f"{trace.rounds} of {self.rounds} refinement round(s) run"

    def _fitted(self, dialogue: list[dict[str, str]], reply_tokens: int) -> list[dict[str, str]]:
        """The prompt: the prefix, the task, then as many of the latest rounds as fit.

        ``dialogue`` is the task message, then a plan, then four messages per round (feedback request,
        feedback, refine request, plan), then the request being asked; a round is left out oldest first,
        so what follows the task always starts with a plan. The latest plan and request are always kept
        (:meth:`ask` stops the loop when even they do not fit).
        """
        task, rest = dialogue[:1], dialogue[1:]
        while len(rest) >= 6 and not self.fits([*self.prefix, *task, *rest], reply_tokens):
            rest = rest[4:]
        return [*self.prefix, *task, *rest]

    def run(self, task: Task, trace: BaselineTrace) -> tuple[Step, ...]:
        self.say(task, "writing the plan", 1, self.rounds + 1)
        first = self.task_messages(task)
        read = self.ask_plan(task, first, trace, "plan", goal=task.goal)
        if read is None:
            return ()
        steps = read.steps
        dialogue = [first[-1], {"role": "assistant", "content": render_plan(steps)}]
        for number in range(1, self.rounds + 1):
            trace.rounds = number
            self.say(task, f"round {number}: feedback", number + 1, self.rounds + 1)
            dialogue.append({"role": "user", "content": prompts.ASK_FEEDBACK})
            messages = self._fitted(dialogue, FEEDBACK_TOKENS)
            asked = self.ask(task, messages, prompts.FEEDBACK_GRAMMAR, FEEDBACK_TOKENS, trace)
            if asked is None:
                return steps
            self.log_text(task, messages, prompts.FEEDBACK_GRAMMAR, asked)
            feedback = plain(asked.text)
            done = feedback.lower().startswith(prompts.CORRECT)
            trace.add("feedback", feedback, "stop" if done else "refine")
            if done:
                trace.stopped = StopReason.FINISHED
                return steps
            dialogue += [
                {"role": "assistant", "content": feedback},
                {"role": "user", "content": prompts.ASK_REFINE},
            ]
            self.say(task, f"round {number}: refining", number + 1, self.rounds + 1)
            read = self.ask_plan(task, self._fitted(dialogue, PLAN_TOKENS), trace, "refined plan", goal=task.goal)
            if read is None:
                return steps
            steps = read.steps
            dialogue.append({"role": "assistant", "content": render_plan(steps)})
        trace.stopped = StopReason.ROUNDS_USED if self.rounds else StopReason.FINISHED
        return steps


def context_for(rounds: int, facts: bool) -> int:
    """The context a dialogue of ``rounds`` rounds needs: the prefix and task (with facts ~1,400 tokens, ~600
    without), a plan, then per round the feedback and a plan (~420); rounded up to 512, from 2,048 to 8,192."""
    needed = (1400 if facts else 600) + (rounds + 1) * (PLAN_TOKENS + 60)
    return min(MAX_CONTEXT, max(2048, -(-needed // 512) * 512))


def self_refine_planner(kb: KnowledgeBase, spec: PlannerSpec) -> SelfRefinePlanner:
    """``self-refine``: option ``refine_rounds`` (0..10, default 3) and the LLM options."""
    from ...calls.backends import backend_for

    rounds = spec.baselines.refine_rounds
    n_ctx = context_for(DEFAULT_ROUNDS if rounds is None else rounds, spec.llm.facts)
    backend = spec.context.backend or backend_for(spec.llm, n_ctx=n_ctx, progress=spec.context.progress)
    return SelfRefinePlanner(kb, spec, backend, n_ctx=n_ctx)
