"""What the four added baselines of BAR's table share: one line to the model, a trace, a result.

Reverse Chain, Self-Refine, Tree of Thoughts and Plan-and-Solve each ask the
model several different things (a plan, feedback on it, a rating, a list of
sub-tasks), each under its own grammar and with its own reply length, but the
rest is the same for all of them and the same as for ``cot`` and ``deps``:

- every call goes through one :class:`~.model_calls.ModelGateway`, so tokens,
  seconds, reused greedy replies and backend health land in the plan's
  :class:`~barsym.planner.stats.LLMStats` and every real call in the call log
  (``barsym logs``), with the verdict of what the planner made of it;
- a backend that fails ends the loop with :attr:`StopReason.BACKEND_DOWN`
  rather than an exception, unless no plan at all was written (then the task
  is a planning error, as for ``cot``);
- the result is a :class:`~.forward_plans.ForwardPlanResult` whose trace says
  how the loop stopped and whether it reached a plan it considers complete,
  so a method that runs out of budget says so in its result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum

from ....kb import KnowledgeBase
from ....llm import LLMBackend, LLMError
from ....model import Goal, Step
from ....planner.decomposer import ErrorKind, PlanningError
from ....planner.stats import LLMStats, PlanStats
from ....sim import State
from ...calls.call_log import CallLog, Verdict
from ...calls.model_calls import CUT_OFF, ModelGateway
from ...calls.progress import Phase, Progress, ProgressEvent
from ...grammars.forward_plans import (
    ContextBudget,
    ForwardPlanResult,
    ReadPlan,
    Vocabulary,
    fold_repeats,
    forward_result,
    parse_plan_text,
)
from ...loop_limits import BASELINE_DEADLINE, Deadline
from ...prompts.deps_prompts import task_message
from ...prompts.few_shot import few_shot_prefix
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
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


class BaselineCalls:
    """One :class:`ModelGateway` for every call of a baseline's plan, each call with its own grammar and length."""

    def __init__(
        self,
        backend: LLMBackend,
        prefix,
        *,
        seed: int,
        temperature: float,
        log: CallLog | None,
        progress: Progress | None,
        command: str,
        name: str,
    ):
        self.caller = ModelGateway(backend, prefix, seed=seed, log=log, progress=progress)
        self.temperature, self.progress, self.command, self.name = temperature, progress, command, name
        self.prefix = self.caller.prefix
        self.label = ""
        self.attempt = 0

    def start(self, goal: Goal) -> LLMStats:
        """New counters for a plan of ``goal``; the call log's run is opened and the prefix made ready."""
        stats = LLMStats(goals=1, llm_goals=1)
        self.caller.start_plan(stats)
        self.label, self.attempt = f"{goal.count} {goal.item}", 0
        self.caller.start_run(self.command, self.name, self.label)
        return stats

    @property
    def down(self) -> str | None:
        return self.caller.down

    def say(self, what: str, step: int = 0, of: int = 0) -> None:
        if self.progress is not None:
            self.progress(ProgressEvent(Phase.GOAL, f"{self.label}: {what}", step, of, self.caller.stats))

    def ask(self, messages: list[dict[str, str]], grammar: str, max_tokens: int, until: float | None = None):
        """The :class:`~.model_calls.Asked` reply, or None when the backend failed (:attr:`down` says whether for
        good). The caller logs it once it knows what it made of it (:meth:`log_plan`, :meth:`log_text`). A reply
        still being written at ``until`` (:func:`time.monotonic`) ends there."""
        self.attempt += 1
        self.caller.max_tokens = max_tokens
        try:
            asked = self.caller.call(messages, grammar, self.temperature, until=until)
        except LLMError as exc:
            self.caller.failed(exc)
            self.caller.record(
                self.label, self.attempt, messages, grammar, None, Verdict.BACKEND_ERROR, [str(exc)], self.temperature
            )
            return None
        return asked

    def log_plan(self, messages, grammar: str, asked, read: ReadPlan) -> None:
        self.caller.record_plan(self.label, self.attempt, messages, grammar, asked, read, self.temperature)

    def log_text(self, messages, grammar: str, asked) -> None:
        self.caller.record(self.label, self.attempt, messages, grammar, asked, Verdict.ACCEPTED, [], self.temperature)


class BaselinePlanner:
    """What the four baselines' planners share: the grammar over the game's vocabulary, the facts, the prefix, the
    calls, the context check and the result. A subclass says what it asks (:meth:`run`) and in what words."""

    plan_fallback = False  # nothing checks or replaces the model's plans
    method = ""

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend: LLMBackend, *, n_ctx: int | None = None):
        """The planner ``spec`` describes (its model's settings, context and ``--deadline``), asking ``backend``
        (the factory's, loaded with ``n_ctx``: :func:`.backends.backend_for`)."""
        from ....llm.stand_in import StandInLLM
        from ....planner.registry import graph_for, symbolic_planner
        from ...calls.backends import N_CTX, server_context

        llm, context = spec.llm, spec.context
        graph = context.graph or graph_for(kb)
        symbolic = symbolic_planner(kb, graph=graph)
        self.kb, self.name = kb, self.method
        # seconds one plan may take; the clock is a test's to drive
        self.deadline, self.clock = spec.forward.deadline or BASELINE_DEADLINE, None
        self._deadline = Deadline(None)
        self.facts = PlanFacts(symbolic) if llm.facts else None
        self.vocab = Vocabulary(kb, graph)
        self.plan_grammar = self.vocab.plan_grammar()
        prefix = few_shot_prefix(self.system(kb), self.turns(symbolic, self.facts))
        self.calls = BaselineCalls(
            backend,
            prefix,
            seed=llm.seed,
            temperature=llm.temperature,
            log=context.call_log(),
            progress=context.progress,
            command=context.command,
            name=self.name,
        )
        self.prefix = self.calls.prefix
        self.counter = getattr(backend, "tokenize_count", None)
        # a stand-in has no context of its own: its prompts are held to the one the model would be loaded with,
        # and a server's context is its own, unknown here (:func:`.backends.server_context`)
        n_ctx = n_ctx if isinstance(backend, StandInLLM) else server_context(backend, n_ctx or N_CTX)
        self.n_ctx = n_ctx or backend.options.n_ctx  # the context the prompts must fit (:meth:`fits`)

    # ---- what a subclass says ------------------------------------------------------------------------------------
    def system(self, kb: KnowledgeBase) -> str:
        raise NotImplementedError

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        raise NotImplementedError

    def budget(self) -> str:
        return "one reply"

    def spent(self, trace: BaselineTrace) -> str | None:
        """How much of the budget the loop used, in words, where the budget alone would mislead (self-refine's
        "3 refinement round(s)" when the feedback said correct in the first); None: the budget says it."""
        return None

    def run(self, goal: Goal, start: State, trace: BaselineTrace) -> tuple[Step, ...]:
        """The method's loop: the plan it returns; ``trace`` says how it stopped."""
        raise NotImplementedError

    # ---- what every method does the same way ---------------------------------------------------------------------
    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        started = time.perf_counter()
        stats = self.calls.start(goal)
        trace = BaselineTrace(self.method, self.budget())
        self._deadline = Deadline(self.deadline, *([self.clock] if self.clock else []))
        steps = self.run(goal, start or State(), trace)
        trace.spent = self.spent(trace)
        return baseline_result(self.kb, goal, start, self.name, steps, trace, stats, started)

    def fits(self, messages: list[dict[str, str]], reply_tokens: int) -> bool:
        return ContextBudget(self.n_ctx, reply_tokens, self.counter).fits(messages)

    def ask(self, messages, grammar: str, max_tokens: int, trace: BaselineTrace):
        """The reply (a failed call is asked once more), or None with ``trace`` stopped (context, backend,
        deadline: no call starts once the plan's time is up, and a reply is capped to the tokens that fit in it)."""
        if not self.fits(messages, max_tokens):
            trace.stopped = StopReason.CONTEXT_FULL
            return None
        max_tokens = self._deadline.tokens(max_tokens, self.calls.caller.stats)
        if max_tokens == 0:
            trace.stopped, trace.problem = StopReason.DEADLINE, self._deadline.describe()
            return None
        for _ in range(2):
            if self.calls.down:
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.calls.down
                return None
            asked = self.calls.ask(messages, grammar, max_tokens, self._deadline.until())
            if asked is not None:
                return asked
        trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.calls.down or "the backend failed twice"
        return None

    def ask_plan(
        self,
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
        asked = self.ask(messages, grammar, PLAN_TOKENS, trace)
        if asked is None:
            return None
        read, folded = fold_repeats(parse_plan_text(asked.text, self.kb, split=split, goal=goal))
        self.calls.log_plan(messages, grammar, asked, read)
        trace.unreadable += len(read.unreadable)
        trace.folded += folded
        trace.past_goal += read.past_goal
        past = f", {read.past_goal} line(s) after the goal's step not read" if read.past_goal else ""
        trace.add(kind, asked.text, f"{len(read.steps)} steps" + ("" if read.ended else ", no done") + past)
        return read

    def task_messages(self, goal: Goal, start: State, extra: str = "") -> list[dict[str, str]]:
        text = task_message(goal, start, self.facts) + (f"\n{extra}" if extra else "")
        return [*self.prefix, {"role": "user", "content": text}]


def plain(text: str) -> str:
    """A free-text reply on one line, without the cut-off mark."""
    return " ".join(text.replace(CUT_OFF, "").split())


def baseline_result(
    kb: KnowledgeBase,
    goal: Goal,
    start: State | None,
    name: str,
    steps: tuple[Step, ...],
    trace: BaselineTrace,
    stats: LLMStats,
    started: float,
) -> ForwardPlanResult:
    """The plan, scored by the validator like any forward plan; a planning error when no plan was written at all
    because the backend failed."""
    if not steps and trace.stopped is StopReason.BACKEND_DOWN:
        raise PlanningError(
            ErrorKind.DECOMPOSITION, f"the {name} planner got no plan: the LLM backend failed ({trace.problem})"
        )
    stats.unreadable += trace.unreadable
    stats.accepted_first_try = int(trace.complete and bool(steps))
    stats.unanswered = int(not trace.complete or not steps)
    if trace.problem:
        stats.problems.append(trace.problem)
    out = PlanStats(
        llm=stats,
        llm_mode="vocab",
        llm_verified=False,
        seconds=round(time.perf_counter() - started, 6),
    ).with_section(trace.summary())
    return forward_result(kb, goal, steps, start, name, out, trace)
