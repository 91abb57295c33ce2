"""What the four added baselines of BAR's table share on top of the forward loop: a trace, a retry, a result.

Reverse Chain, Self-Refine, Tree of Thoughts and Plan-and-Solve each ask the
model several different things (a plan, feedback on it, a rating, a list of
sub-tasks), each under its own grammar and with its own reply length. The
machinery around the model is the forward loop's (:mod:`.forward_loop`, as for
``cot`` and ``deps``); what the four share besides is here:

- every request is checked against the model's context first, and a call that
  fails is asked once more (:meth:`BaselinePlanner.ask`);
- a backend that fails ends the loop with :attr:`StopReason.BACKEND_DOWN`
  rather than an exception, unless no plan at all was written (then the task
  is a planning error, as for ``cot``);
- the result is a :class:`~.forward_plans.ForwardPlanResult` whose trace says
  how the loop stopped and whether it reached a plan it considers complete,
  so a method that runs out of budget says so in its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ....kb import KnowledgeBase
from ....llm import LLMBackend
from ....model import Goal, Step
from ....sim import State
from ...calls.model_calls import CUT_OFF
from ...grammars.forward_plans import ForwardPlanResult
from ...loop_limits import BASELINE_DEADLINE
from ...prompts.deps_prompts import task_message
from ...spec import PlannerSpec
from .forward_loop import ForwardPlanner, Task
from .stats import BaselineSummary

PLAN_TOKENS = 360  # 30 lines of ~10 tokens and "done", as DEPS' plans


class StopReason(str, Enum):
    FINISHED = "finished"  # the method reached the end it defines (done, "correct", a complete branch kept)
    ROUNDS_USED = "rounds_used"  # self-refine: every round refined and the feedback never said correct
    DEPTH_USED = "depth_used"  # tot: the tree reached its depth with no complete plan kept
    UNFINISHED = "unfinished"  # a one-reply method whose reply never reached ``done``
    CONTEXT_FULL = "context_full"  # the next prompt does not fit the model's context
    DEADLINE = "deadline"  # the plan's time (--deadline) ran out before the method reached its end
    BACKEND_DOWN = "backend_down"  # the model stopped answering


#: stop reasons after which the plan returned is the method's own finished plan
COMPLETE = (StopReason.FINISHED, StopReason.ROUNDS_USED)


@dataclass
class TraceEntry:
    """One thing the model was asked and what it said (the text as the planner read it)."""

    kind: str  # plan, chain, feedback, subtasks, steps, propose, value
    reply: str
    note: str = ""  # what the planner made of it (a rating, the candidates kept)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "reply": self.reply, "note": self.note}


@dataclass
class BaselineTrace:
    """The record of one baseline's loop: what it asked in order, how it stopped, whether the plan is complete."""

    method: str
    budget: str  # the method's budget in words ("3 refinement rounds", "depth 24, breadth 3, beam 2")
    entries: list[TraceEntry] = field(default_factory=list)
    spent: str | None = None  # how much of it ran ("1 of 3 refinement round(s) run"); None: the budget says it
    stopped: StopReason = StopReason.FINISHED
    rounds: int = 0
    problem: str | None = None
    unreadable: int = 0
    folded: int = 0
    past_goal: int = 0  # lines written after the step that makes the goal, not read (forward_plans)

    @property
    def complete(self) -> bool:
        return self.stopped in COMPLETE

    def add(self, kind: str, reply: str, note: str = "") -> None:
        self.entries.append(TraceEntry(kind, reply, note))

    def summary(self) -> BaselineSummary:
        return BaselineSummary(
            self.method, self.stopped.value, self.complete, self.rounds, self.unreadable, self.folded
        )

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "budget": self.budget,
            "spent": self.spent,
            "stopped": self.stopped.value,
            "complete": self.complete,
            "rounds": self.rounds,
            "problem": self.problem,
            "unreadable_lines": self.unreadable,
            "folded_repeats": self.folded,
            "past_goal": self.past_goal,
            "calls": [e.to_dict() for e in self.entries],
        }

    def lines(self) -> list[str]:
        state = "a complete plan" if self.complete else "no complete plan within its budget"
        out = [
            f"{self.method}: {state} ({self.spent or self.budget}); stopped: {self.stopped.value.replace('_', ' ')}"
            + (f" ({self.problem})" if self.problem else "")
        ]
        for i, entry in enumerate(self.entries, start=1):
            first = entry.reply.strip().splitlines()[0] if entry.reply.strip() else "(nothing)"
            more = f" (+{len(entry.reply.strip().splitlines()) - 1} lines)" if "\n" in entry.reply.strip() else ""
            note = f"  [{entry.note}]" if entry.note else ""
            out.append(f"  {i:>2}. {entry.kind}: {first}{more}{note}")
        return out


class BaselinePlanner(ForwardPlanner):
    """What the four baselines share on top of the forward loop: the plan grammar, the trace, asking with a
    context check and one retry, the result. A subclass says what it asks (:meth:`run`) and in what words."""

    default_deadline = BASELINE_DEADLINE

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend: LLMBackend, *, n_ctx: int | None = None):
        super().__init__(kb, spec, backend, n_ctx=n_ctx)
        self.plan_grammar = self.vocab.plan_grammar()

    # ---- what a subclass says ------------------------------------------------------------------------------------
    def budget(self) -> str:
        return "one reply"

    def spent(self, trace: BaselineTrace) -> str | None:
        """How much of the budget the loop used, in words, where the budget alone would mislead (self-refine's
        "3 refinement round(s)" when the feedback said correct in the first); None: the budget says it."""
        return None

    def run(self, task: Task, trace: BaselineTrace) -> tuple[Step, ...]:
        """The method's loop: the plan it returns; ``trace`` says how it stopped."""
        raise NotImplementedError

    # ---- what every method does the same way ---------------------------------------------------------------------
    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        task = self.begin(goal, start)
        trace = BaselineTrace(self.name, self.budget())
        steps = self.run(task, trace)
        trace.spent = self.spent(trace)
        if not steps and trace.stopped is StopReason.BACKEND_DOWN:  # no plan at all: a planning error
            raise self.no_plan(trace.problem)
        return self.finish(
            task,
            steps,
            trace,
            trace.summary(),
            first_try=trace.complete and bool(steps),
            unreadable=trace.unreadable,
            problem=trace.problem or None,
        )

    def ask(self, task: Task, messages, grammar: str, max_tokens: int, trace: BaselineTrace):
        """The reply (a failed call is asked once more), or None with ``trace`` stopped (context, backend,
        deadline: no call starts once the plan's time is up, and a reply is capped to the tokens that fit in it)."""
        if not self.fits(messages, max_tokens):
            trace.stopped = StopReason.CONTEXT_FULL
            return None
        max_tokens = self.tokens(task, max_tokens)
        if max_tokens == 0:
            trace.stopped, trace.problem = StopReason.DEADLINE, task.deadline.describe()
            return None
        for _ in range(2):
            if self.gateway.down:
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.gateway.down
                return None
            asked = self.call(task, messages, grammar, max_tokens)
            if asked is not None:
                return asked
        trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.gateway.down or "the backend failed twice"
        return None

    def ask_plan(
        self,
        task: Task,
        messages,
        trace: BaselineTrace,
        kind: str,
        grammar: str | None = None,
        split=None,
        goal: Goal | None = None,
    ):
        """A plan reply under the plan grammar, read (repeated lines folded) and logged; None as :meth:`ask`.

        With ``goal``, a plan written forward ends at the step that makes it (:func:`.forward_plans.parse_plan_text`)."""
        grammar = grammar or self.plan_grammar
        asked = self.ask(task, messages, grammar, PLAN_TOKENS, trace)
        if asked is None:
            return None
        _, read, folded = self.read_plan(task, messages, grammar, asked, split=split, goal=goal)
        trace.unreadable += len(read.unreadable)
        trace.folded += folded
        trace.past_goal += read.past_goal
        past = f", {read.past_goal} line(s) after the goal's step not read" if read.past_goal else ""
        trace.add(kind, asked.text, f"{len(read.steps)} steps" + ("" if read.ended else ", no done") + past)
        return read

    def task_messages(self, task: Task, extra: str = "") -> list[dict[str, str]]:
        text = task_message(task.goal, task.start, self.facts) + (f"\n{extra}" if extra else "")
        return [*self.prefix, {"role": "user", "content": text}]


def plain(text: str) -> str:
    """A free-text reply on one line, without the cut-off mark."""
    return " ".join(text.replace(CUT_OFF, "").split())
