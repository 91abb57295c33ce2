"""``plan-and-solve``: the sub-tasks first (the PS+ instruction), then the steps that carry them out.

Plan-and-Solve replaces "let's think step by step" with two moves: first
understand the problem and devise a plan, then carry the plan out; its PS+
variant adds "pick out the relevant quantities" and "mind the calculation".
Here that is two calls in one dialogue:

1. the task, then the PS+ request: which items the task involves and how many,
   and the sub-tasks as ``get N item`` lines in the order they can be done,
   then ``done`` (a grammar over the game's items);
2. the request to carry the plan out: every step, one a line, then ``done``,
   under the same plan grammar as ``cot`` and ``deps``.

Nothing checks the sub-tasks or the steps; the steps are the plan. The plan
is complete when the steps' reply reaches ``done``.
"""

from __future__ import annotations

from ....kb import KnowledgeBase
from ....llm.grammar import gbnf_literal
from ....model import Step
from ...grammars.forward_plans import END
from ...prompts import baseline_prompts as prompts
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from .baseline_loop import BaselinePlanner, BaselineTrace, StopReason
from .forward_loop import Task

MAX_SUBTASKS = 12
SUBTASK_TOKENS = 8 * MAX_SUBTASKS + 4


def subtask_grammar(planner: BaselinePlanner) -> str:
    """1 to :data:`MAX_SUBTASKS` lines ``get N item``, then ``done``."""
    body = 'sub "\\n"'
    nested = body
    for _ in range(MAX_SUBTASKS - 1):
        nested = f"{body} ({nested})?"
    rules = [r for r in planner.vocab.step_rules() if r.startswith(("count ::=", "item ::="))]
    return "\n".join([f"root ::= {nested} {gbnf_literal(END)}", 'sub ::= "get " count " " item', *rules]) + "\n"


class PlanAndSolvePlanner(BaselinePlanner):
    name = "plan-and-solve"

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend, *, n_ctx: int | None = None):
        super().__init__(kb, spec, backend, n_ctx=n_ctx)
        self.subtask_grammar = subtask_grammar(self)

    def system(self, kb: KnowledgeBase) -> str:
        return prompts.solve_system(kb)

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return prompts.solve_turns(symbolic, facts)

    def budget(self) -> str:
        return "a sub-task list, then the steps"

    def run(self, task: Task, trace: BaselineTrace) -> tuple[Step, ...]:
        self.say(task, "devising the sub-tasks", 1, 2)
        messages = self.task_messages(task, prompts.ASK_SUBTASKS)
        asked = self.ask(task, messages, self.subtask_grammar, SUBTASK_TOKENS, trace)
        if asked is None:
            return ()
        self.log_text(task, messages, self.subtask_grammar, asked)
        subtasks = [line.strip() for line in asked.text.splitlines() if line.strip().startswith("get ")]
        trace.add("subtasks", asked.text, f"{len(subtasks)} sub-tasks")
        messages = [
            *messages,
            {"role": "assistant", "content": "\n".join([*subtasks, END])},
            {"role": "user", "content": prompts.ASK_SOLVE},
        ]
        self.say(task, "carrying out the sub-tasks", 2, 2)
        read = self.ask_plan(task, messages, trace, "steps", goal=task.goal)
        trace.rounds = 2 if read is not None else 1
        if read is None:
            return ()
        if not read.ended:
            trace.stopped = StopReason.UNFINISHED
        return read.steps


def plan_and_solve_planner(kb: KnowledgeBase, spec: PlannerSpec) -> PlanAndSolvePlanner:
    """``plan-and-solve``: the LLM options apply."""
    from ...calls.backends import backend_for

    return PlanAndSolvePlanner(kb, spec, spec.context.backend or backend_for(spec.llm, progress=spec.context.progress))
