"""The one loop every forward planner runs on: a plan's counters, deadline, model calls, reading and result.

``cot``, ``deps`` and the four added baselines (:mod:`.baseline_loop`) each used to
carry their own copy of the machinery around the model, and a long keyword
constructor to feed it. It is here once, and a planner states only what
differs: its prompts (:meth:`ForwardPlanner.system`, :meth:`ForwardPlanner.turns`),
its rounds and what it asks in them, when it stops, and its trace.

- a planner is made as every planner is, from the knowledge base, its
  :class:`~barsym.reasoning.spec.PlannerSpec` and the backend its factory chose;
- :meth:`ForwardPlanner.begin` starts one plan's :class:`Task`: the counters
  (:class:`~barsym.planner.stats.LLMStats`), the call log's run, the deadline;
- :meth:`ForwardPlanner.tokens` is the reply-token cap the deadline leaves,
  :meth:`ForwardPlanner.call` the one way to the model (through the
  :class:`~.model_calls.ModelGateway`: counted, a failure logged with its
  verdict and None returned rather than raised);
- :meth:`ForwardPlanner.read_plan` reads a reply as a plan (repeated lines
  folded) and logs it with the verdict;
- :meth:`ForwardPlanner.finish` scores the plan with the validator and writes
  how it went into the plan's stats.

How a planner retries and in what order it checks its limits stays its own
(a baseline asks a failed call once more, DEPS the round, ``cot`` not at all),
as they were before the loops were joined.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ....kb import KnowledgeBase
from ....llm import LLMBackend, LLMError
from ....model import Goal, Step
from ....planner.decomposer import ErrorKind, PlanningError
from ....planner.stats import LLMStats, PlanStats
from ....sim import State
from ...calls.call_log import Verdict
from ...calls.model_calls import Asked, ModelGateway
from ...calls.progress import Phase, ProgressEvent
from ...grammars.forward_plans import (
    ContextBudget,
    ForwardPlanResult,
    ReadPlan,
    Vocabulary,
    fold_repeats,
    forward_result,
    parse_plan_text,
)
from ...loop_limits import DEFAULT_DEADLINE, Deadline
from ...prompts.few_shot import few_shot_prefix
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec

__all__ = ["ForwardPlanner", "Task"]


@dataclass
class Task:
    """One plan being made: its goal and start, its counters, its deadline, the calls asked so far."""

    goal: Goal
    start: State
    stats: LLMStats
    deadline: Deadline
    started: float  # time.perf_counter() at the start: the plan's seconds
    attempt: int = 0  # the call log's attempt number of the latest call

    @property
    def label(self) -> str:
        return f"{self.goal.count} {self.goal.item}"


class ForwardPlanner:
    """A planner whose model writes the whole plan; a subclass says what it asks (its ``plan``) and in what words."""

    plan_fallback = False  # nothing checks or replaces the model's plans
    name = ""
    #: seconds a plan may take unless ``--deadline`` says (:mod:`.loop_limits`)
    default_deadline: float = DEFAULT_DEADLINE
    #: a stand-in's prompts are held to the context the model would be loaded with (``n_ctx``); False: to the
    #: stand-in's own, unbounded one (DEPS, as it always was)
    stand_in_context = True

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend: LLMBackend, *, n_ctx: int | None = None):
        """The planner ``spec`` describes (its model's settings, context and ``--deadline``), asking ``backend``
        (the factory's, loaded with ``n_ctx``: :func:`.backends.backend_for`)."""
        from ....llm.stand_in import StandInLLM
        from ....planner.registry import graph_for, symbolic_planner
        from ...calls.backends import N_CTX, server_context

        llm, context = spec.llm, spec.context
        self.kb, self.graph = kb, context.graph or graph_for(kb)
        self.symbolic = symbolic_planner(kb, graph=self.graph)
        self.temperature, self.progress, self.command = llm.temperature, context.progress, context.command
        # seconds one plan may take; the clock is a test's to drive (loop_limits)
        self.deadline, self.clock = spec.forward.deadline or self.default_deadline, None
        self.facts = PlanFacts(self.symbolic) if llm.facts else None
        self.vocab = Vocabulary(kb, self.graph)
        prefix = few_shot_prefix(self.system(kb), self.turns(self.symbolic, self.facts))
        self.gateway = ModelGateway(backend, prefix, seed=llm.seed, log=context.call_log(), progress=context.progress)
        self.prefix = self.gateway.prefix
        self.counter = getattr(backend, "tokenize_count", None)
        # a server's context is its own, unknown here (:func:`.backends.server_context`)
        if not (isinstance(backend, StandInLLM) and self.stand_in_context):
            n_ctx = server_context(backend, n_ctx or N_CTX)
        self.n_ctx = n_ctx or backend.options.n_ctx  # the context the prompts must fit (:meth:`fits`)
        self.measured = LLMStats()  # earlier plans' reply tokens and model time (:meth:`rate`)

    # ---- what a subclass says ------------------------------------------------------------------------------------
    def system(self, kb: KnowledgeBase) -> str:
        raise NotImplementedError

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        """The worked examples, as (user, assistant) turns after the system prompt."""
        raise NotImplementedError

    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        raise NotImplementedError

    def rate(self, task: Task) -> LLMStats:
        """The counters whose tokens per second cap a reply by the time left: this plan's so far (``cot``, which
        asks once per plan, reads the earlier plans')."""
        return task.stats

    # ---- one plan ------------------------------------------------------------------------------------------------
    def begin(self, goal: Goal, start: State | None) -> Task:
        """New counters for a plan of ``goal``, the call log's run opened, the deadline started."""
        started = time.perf_counter()
        stats = LLMStats(goals=1, llm_goals=1)
        self.gateway.start_plan(stats)
        deadline = Deadline(self.deadline, *([self.clock] if self.clock else []))
        task = Task(goal, start or State(), stats, deadline, started)
        self.gateway.start_run(self.command, self.name, task.label)
        return task

    def say(self, task: Task, what: str, step: int = 0, of: int = 0) -> None:
        """What the plan is doing now, for the progress line: ``1 iron_pickaxe: writing the plan``."""
        if self.progress is not None:
            self.progress(ProgressEvent(Phase.GOAL, f"{task.label}: {what}", step, of, task.stats))

    def fits(self, messages: list[dict[str, str]], reply_tokens: int) -> bool:
        return ContextBudget(self.n_ctx, reply_tokens, self.counter).fits(messages)

    def tokens(self, task: Task, cap: int) -> int:
        """The reply tokens a call may ask for now (``cap``, fewer near the deadline); 0: no time for a call."""
        return task.deadline.tokens(cap, self.rate(task))

    def call(
        self, task: Task, messages: list[dict[str, str]], grammar: str, tokens: int, attempt: int | None = None
    ) -> Asked | None:
        """The reply of at most ``tokens`` tokens (cut off at the deadline), or None when the backend failed:
        counted and logged, :attr:`ModelGateway.down` says whether for good. ``attempt``: the call log's
        number for it (the next one unless given); the caller logs a reply once it knows what it made of it."""
        task.attempt = task.attempt + 1 if attempt is None else attempt
        self.gateway.max_tokens = tokens
        try:
            return self.gateway.call(messages, grammar, self.temperature, tokens, task.deadline.until())
        except LLMError as exc:
            self.gateway.failed(exc)
            self.gateway.record(
                task.label, task.attempt, messages, grammar, None, Verdict.BACKEND_ERROR, [str(exc)], self.temperature
            )
            return None

    def read_plan(
        self,
        task: Task,
        messages,
        grammar: str,
        asked: Asked | None,
        *,
        split=None,
        goal: Goal | None = None,
        body: Callable[[str], str] | None = None,
    ) -> tuple[ReadPlan, ReadPlan, int]:
        """The reply as written, as read (a step repeated at once folded into one) and how many were folded; the
        call logged (accepted when it has steps). With ``goal``, the plan ends at the step that makes it
        (:func:`.forward_plans.parse_plan_text`); ``body(reply)`` is the part that holds the plan (CoT's after its
        reasoning). No reply (no call made) reads as an empty plan."""
        text = asked.text if asked is not None else ""
        written = parse_plan_text(body(text) if body is not None else text, self.kb, split=split, goal=goal)
        read, folded = fold_repeats(written)
        if asked is not None:
            self.gateway.record_plan(task.label, task.attempt, messages, grammar, asked, read, self.temperature)
        return written, read, folded

    def log_text(self, task: Task, messages, grammar: str, asked: Asked) -> None:
        """Log a reply that is not a plan (feedback, a rating, sub-tasks, an explanation) as accepted."""
        self.gateway.record(task.label, task.attempt, messages, grammar, asked, Verdict.ACCEPTED, [], self.temperature)

    def no_plan(self, why: str | None) -> PlanningError:
        """The error for a plan the backend's failure left without a single step."""
        return PlanningError(
            ErrorKind.DECOMPOSITION, f"the {self.name} planner got no plan: the LLM backend failed ({why})"
        )

    def finish(
        self,
        task: Task,
        steps: tuple[Step, ...],
        trace,
        section,
        *,
        first_try: bool,
        after_feedback: bool = False,
        unreadable: int = 0,
        problem: str | None = None,
    ) -> ForwardPlanResult:
        """The plan, scored by the validator like any forward plan, with the loop's ``section`` in its stats
        (:mod:`.stats`): accepted first try, after feedback, or unanswered; ``problem`` added to the problems."""
        stats = task.stats
        stats.unreadable += unreadable
        stats.accepted_first_try = int(first_try)
        stats.accepted_after_feedback = int(after_feedback)
        stats.unanswered = int(not (first_try or after_feedback))
        if problem is not None:
            stats.problems.append(problem)
        out = PlanStats(
            llm=stats,
            llm_mode="vocab",
            llm_verified=False,
            seconds=round(time.perf_counter() - task.started, 6),
        ).with_section(section)
        return forward_result(self.kb, task.goal, steps, task.start, self.name, out, trace)

    def measure(self, task: Task) -> None:
        """Add the plan's reply tokens and model time to :attr:`measured` (the prefix's time is left out of the
        rate, :class:`~.loop_limits.Deadline`)."""
        self.measured.completion_tokens += task.stats.completion_tokens
        self.measured.llm_seconds += task.stats.llm_seconds
        self.measured.prefix_seconds += task.stats.prefix_seconds
