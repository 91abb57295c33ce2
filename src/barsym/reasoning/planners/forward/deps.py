"""DEPS as a planner: describe, explain, plan, with the dialogue in the prompt (Wang et al. 2023).

Round 0 is the plain planner: the model writes the whole plan forward under a
grammar over the game's vocabulary, and nothing checks it. The plan is then
**executed** in a world (stochastic by default, as DEPS runs in the game). If
the episode fails, the **descriptor** (the execution world's own
:func:`~barsym.sim.execution.describe`: which step, why, what the inventory
held, where, when) is added to the dialogue, the model **explains** the
failure in one sentence of free text, and **plans** again with everything so
far in its prompt. That repeats up to ``rounds`` times; success is the goal in
the inventory at the end of an episode.

Each replanned plan starts the task over from its start state (a fresh
episode seeded from the round), rather than continuing from where the failed
run stood: the plan then stays one BAR plan that the metrics, the validator
and ``--format bar`` read like any other, and a later round cannot succeed on
items an earlier failed run left behind.

DEPS' other half, the **selector**, chooses among sub-goals that can run at
the same time. With ``selector`` other than ``order`` (the plan as written),
each round's plan runs through :func:`~barsym.planner.selector.execute`: the
plan's needs are read off the plan itself (a model's plan comes without
them), and whenever several steps can run, ``random``, ``graph`` (the
crafting graph's cost) or ``horizon`` (the learned horizon model, the
paper's) picks one. The episode is seeded as before and described by the
same descriptor, so only the order differs.

The model's context bounds the dialogue, as in the paper. Before every call
the prompt is measured (the backend's tokenizer, else a safe estimate); when
it would not leave room for the reply, the oldest rounds are left out of it,
and when even the latest round does not fit the loop stops. Nothing here
raises for a long dialogue, an unreadable reply or a failing backend: each
ends the loop with a :class:`StopReason` in the trace.

The loop also stops early where replanning cannot help (:mod:`.loop_limits`):
a plan that writes one step again and again (the repeats are folded into the
first before it runs), a replanned plan equal to an earlier round's, and the
plan's deadline (45 s unless ``--deadline`` says otherwise; each call's reply is
capped to the time left). The trace says which, and with what.
"""

from __future__ import annotations

import time

from ....kb import KnowledgeBase
from ....llm import LLMBackend, LLMError
from ....model import Goal, Plan
from ....planner.decomposer import ErrorKind, PlanningError
from ....planner.selector import SELECTORS, execute, make_selector, plan_needs
from ....planner.stats import LLMStats, PlanStats
from ....sim import DeterministicWorld, State, StochasticWorld
from ....sim.execution import describe, play
from ....sim.stochastic import derive_seed
from ...calls.call_log import CallLog, Verdict
from ...calls.model_calls import CUT_OFF, ModelGateway
from ...calls.progress import Phase, Progress, ProgressEvent
from ...grammars.forward_plans import (
    ContextBudget,
    ForwardPlanResult,
    Vocabulary,
    fold_repeats,
    forward_result,
    parse_plan_text,
    render_plan,
)
from ...loop_limits import DEFAULT_DEADLINE, Deadline, repeated_run
from ...prompts import deps_prompts as prompts
from ...prompts.few_shot import few_shot_prefix
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from .deps_trace import DepsRound, DepsTrace, StopReason
from .stats import DepsSummary

DEFAULT_ROUNDS = 5
MAX_ROUNDS = 20  # each round costs ~2 calls; the 2048-token context holds about 3 rounds of dialogue anyway
PLAN_TOKENS = 360  # 30 lines of ~10 tokens and "done"
EXPLAIN_TOKENS = 32
MAX_CONTEXT = 8192
FEEDBACK_WORLDS = {"stochastic": StochasticWorld, "deterministic": DeterministicWorld}
__all__ = ["DepsPlanner", "DepsRound", "DepsTrace", "StopReason", "context_for", "deps_planner"]


class DepsPlanner:
    """``deps``: the model plans forward, the world executes, the descriptor and the model's explanation feed back."""

    plan_fallback = False  # nothing checks or replaces the model's plans

    def __init__(
        self,
        kb: KnowledgeBase,
        backend: LLMBackend,
        *,
        graph,
        rounds: int = DEFAULT_ROUNDS,
        world: str = "stochastic",
        seed: int = 0,
        world_seed: int = 0,
        temperature: float = 0.0,
        log: CallLog | None = None,
        progress: Progress | None = None,
        command: str = "",
        n_ctx: int | None = None,
        symbolic=None,
        name: str = "deps",
        selector: str = "order",
        facts: bool = True,
        deadline: float | None = DEFAULT_DEADLINE,
        clock=None,
    ):
        if not 0 <= rounds <= MAX_ROUNDS:
            raise ValueError(f"--rounds must be from 0 to {MAX_ROUNDS} for the deps planner, got {rounds}")
        if world not in FEEDBACK_WORLDS:
            raise ValueError(f"--feedback-world must be one of {', '.join(FEEDBACK_WORLDS)}, got {world!r}")
        if selector not in SELECTORS:
            raise ValueError(f"--selector must be one of {', '.join(SELECTORS)}, got {selector!r}")
        self.kb, self.backend, self.rounds, self.name, self.selector = kb, backend, rounds, name, selector
        self.graph, self.deadline, self.clock = graph, deadline, clock  # clock: a test's fake (loop_limits)
        self.world = FEEDBACK_WORLDS[world](kb)
        self.world_seed, self.temperature, self.progress, self.command = world_seed, temperature, progress, command
        self.grammar = Vocabulary(kb, graph).plan_grammar()
        self.facts = PlanFacts(symbolic) if facts else None
        self.prefix = few_shot_prefix(prompts.system_prompt(kb), prompts.few_shot(kb, symbolic, self.facts))
        self.planner_calls = ModelGateway(
            backend, self.prefix, seed=seed, max_tokens=PLAN_TOKENS, log=log, progress=progress
        )
        # the explanations' own length; logged through planner_calls, as their failures are (one log per plan)
        self.explainer = ModelGateway(backend, self.prefix, seed=seed, max_tokens=EXPLAIN_TOKENS, log=None)
        counter = getattr(backend, "tokenize_count", None)
        n_ctx = n_ctx or backend.options.n_ctx
        self.plan_budget = ContextBudget(n_ctx, PLAN_TOKENS, counter)
        self.explain_budget = ContextBudget(n_ctx, EXPLAIN_TOKENS, counter)

    # ---- the dialogue ------------------------------------------------------------------------
    def _fit(self, dialogue: list[dict[str, str]], budget: ContextBudget) -> tuple[list[dict[str, str]], int] | None:
        """The prompt for ``dialogue`` with the oldest whole rounds left out until it fits; None if nothing fits.

        ``dialogue`` is the task message, then four messages per finished round
        (plan, description, explanation, request), then the current round's.
        """
        task, rest = dialogue[:1], dialogue[1:]
        dropped = 0
        while True:
            messages = [*self.prefix, *task, *rest]
            if budget.fits(messages):
                return messages, dropped
            if len(rest) <= 4:  # only the round being worked on is left
                return None
            rest, dropped = rest[4:], dropped + 1

    def _ask(self, caller: ModelGateway, messages, grammar: str, label: str, attempt: int, deadline, cap: int):
        """One call, its reply capped by ``deadline``; the reply, or None when the backend failed
        (``caller.down`` says if for good)."""
        try:
            asked = caller.call(messages, grammar, self.temperature, cap, deadline.until())
        except LLMError as exc:
            caller.failed(exc)
            self.planner_calls.record(
                label, attempt, messages, grammar, None, Verdict.BACKEND_ERROR, [str(exc)], self.temperature
            )
            return None
        return asked

    # ---- the loop --------------------------------------------------------------------------------
    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        started = time.perf_counter()
        deadline = Deadline(self.deadline, *([self.clock] if self.clock else []))
        stats = LLMStats(goals=1, llm_goals=1)
        self.planner_calls.start_plan(stats)
        self.explainer.start_plan(stats)
        self.planner_calls.start_run(self.command, self.name, f"{goal.count} {goal.item}")
        self.planner_calls.prime()
        start = start or State()
        trace = DepsTrace(self.world.name, self.rounds, selector=self.selector)
        dialogue = [{"role": "user", "content": prompts.task_message(goal, start, self.facts)}]
        label = f"{goal.count} {goal.item}"
        number = 0
        while number <= self.rounds:
            down = self.planner_calls.down or self.explainer.down
            if down:  # earlier in this process: the backend is not asked again
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, down
                break
            if self.progress is not None:
                self.progress(
                    ProgressEvent(Phase.GOAL, f"{label}, round {number}: planning", number + 1, self.rounds + 1, stats)
                )
            fitted = self._fit(dialogue, self.plan_budget)
            if fitted is None:
                trace.stopped = StopReason.CONTEXT_FULL
                break
            messages, dropped = fitted
            tokens = deadline.tokens(PLAN_TOKENS, stats)
            if not tokens:
                trace.stopped, trace.problem = StopReason.DEADLINE, deadline.describe()
                break
            asked = self._ask(self.planner_calls, messages, self.grammar, label, number + 1, deadline, tokens)
            if asked is None:
                if self.planner_calls.down:
                    trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.planner_calls.down
                    break
                continue  # a single failure: the same round once more
            written = parse_plan_text(asked.text, self.kb, goal=goal)
            stats.unreadable += len(written.unreadable)
            self.planner_calls.record_plan(label, number + 1, messages, self.grammar, asked, written, self.temperature)
            read, folded = fold_repeats(written)
            this = self._execute(number, read.steps, goal, start, dropped, read.unreadable)
            this.folded, this.past_goal = folded, read.past_goal
            trace.rounds.append(this)
            stop = self._stop(trace, this, written.steps, number, deadline)
            if stop is not None:
                trace.stopped, trace.problem = stop
                break
            dialogue += [
                {"role": "assistant", "content": render_plan(read.steps)},
                {"role": "user", "content": prompts.failure_message(this.description)},
            ]
            this.explanation = self._explain(dialogue, label, number, deadline, stats)
            if this.explanation is None and self.explainer.down:
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.explainer.down
                break
            dialogue += [
                {"role": "assistant", "content": this.explanation or "I do not know."},
                {"role": "user", "content": prompts.ASK_REPLAN},
            ]
            number += 1
        return self._result(goal, start, trace, stats, started)

    def _stop(
        self, trace: DepsTrace, this: DepsRound, written, number: int, deadline: Deadline
    ) -> tuple[StopReason, str | None] | None:
        """Why the loop ends after round ``this`` (and the detail), or None to replan (:mod:`.loop_limits`)."""
        if this.success:
            return StopReason.SUCCEEDED, None
        if number == self.rounds:
            return StopReason.ROUNDS_USED, None
        run = repeated_run(written)
        if run is not None:
            return StopReason.REPEATED_STEP, f"round {number} wrote '{run[0]}' {run[1]} times in a row"
        same = next((r.number for r in trace.rounds[:-1] if r.steps == this.steps), None)
        if same is not None:
            return StopReason.NO_CHANGE, f"round {number} wrote the plan of round {same} again"
        if deadline.passed:
            return StopReason.DEADLINE, deadline.describe()
        return None

    def _execute(self, number: int, steps, goal: Goal, start: State, dropped: int, unreadable) -> DepsRound:
        """One episode of the round's plan: as written, or in the order the selector picks (same seed)."""
        plan = Plan(steps=tuple(steps))
        budget = self.world.default_budget(plan.steps, start)
        seed = derive_seed(self.world_seed, number)
        order = None
        if self.selector == "order":
            episode = play(self.world, plan, seed, goal, start, budget)
        else:
            chooser = make_selector(self.selector, self.world, self.graph, seed)
            outcome = execute(
                self.world, plan.steps, plan_needs(self.world, plan.steps, start), chooser, goal, seed, budget, start
            )
            episode, order = outcome.episode(), outcome.order
        text = None if episode.success else describe(episode, plan, tuple(self.kb.layers))
        return DepsRound(
            number, plan.steps, episode.success, episode.ticks, text, None, tuple(unreadable), dropped, order
        )

    def _explain(self, dialogue, label: str, number: int, deadline: Deadline, stats: LLMStats) -> str | None:
        fitted = self._fit(dialogue, self.explain_budget)
        tokens = deadline.tokens(EXPLAIN_TOKENS, stats)
        if fitted is None or not tokens:  # no room, or no time: the next round is asked without one
            return None
        messages, _ = fitted
        asked = self._ask(self.explainer, messages, prompts.EXPLANATION_GRAMMAR, label, number + 1, deadline, tokens)
        if asked is None:
            return None
        self.planner_calls.record(  # the one log: an explanation is a call as a plan is
            label, number + 1, messages, prompts.EXPLANATION_GRAMMAR, asked, Verdict.ACCEPTED, [], self.temperature
        )
        text = asked.text.replace(CUT_OFF, "").strip()
        return " ".join(text.split()) or None

    def _result(self, goal: Goal, start: State, trace: DepsTrace, stats: LLMStats, started: float) -> ForwardPlanResult:
        if not trace.rounds and trace.stopped is StopReason.BACKEND_DOWN:
            raise PlanningError(
                ErrorKind.DECOMPOSITION, f"the deps planner got no plan: the LLM backend failed ({trace.problem})"
            )
        won = trace.success_round
        stats.accepted_first_try = int(won == 0)
        stats.accepted_after_feedback = int(won is not None and won > 0)
        stats.unanswered = int(won is None)
        steps = trace.rounds[-1].steps if trace.rounds else ()
        out = PlanStats(
            llm=stats,
            llm_mode="vocab",
            llm_verified=False,
            seconds=round(time.perf_counter() - started, 6),
        ).with_section(DepsSummary.of(trace))
        return forward_result(self.kb, goal, steps, start, self.name, out, trace)


def context_for(rounds: int, facts: bool) -> int:
    """The context the dialogue of ``rounds`` replanning rounds needs: the few-shot prefix and the task (with
    facts up to ~1,200 tokens, ~500 without), then per round a plan, the description, the explanation and the
    request (~160 tokens besides the plan); rounded up to 512, at most the 8,192 SmolLM2 was trained on.
    The oldest rounds are still left out when a dialogue outgrows it (:meth:`DepsPlanner._fit`)."""
    needed = (1200 if facts else 500) + (rounds + 1) * (PLAN_TOKENS + 160)
    return min(MAX_CONTEXT, max(2048, -(-needed // 512) * 512))


def deps_planner(kb: KnowledgeBase, spec: PlannerSpec) -> DepsPlanner:
    """``deps``: its own options ``deps_rounds`` (0..20, default 5), ``feedback_world``, ``selector`` (``order``, the
    default, ``random``, ``graph`` or ``horizon``), ``deadline`` (seconds, default 45), the spec's ``world_seed``
    and the LLM options."""
    from ....planner.registry import graph_for, symbolic_planner
    from ...calls.backends import backend_for, server_context

    llm, context, own = spec.llm, spec.context, spec.deps
    rounds = DEFAULT_ROUNDS if own.deps_rounds is None else own.deps_rounds
    graph = context.graph or graph_for(kb)
    n_ctx = context_for(rounds, llm.facts)
    backend = context.backend or backend_for(llm, n_ctx=n_ctx, progress=context.progress)
    return DepsPlanner(
        kb,
        backend,
        n_ctx=server_context(backend, n_ctx),
        graph=graph,
        rounds=rounds,
        facts=llm.facts,
        world=own.feedback_world or "stochastic",
        seed=llm.seed,
        world_seed=spec.world_seed,
        temperature=llm.temperature,
        log=context.call_log(),
        progress=context.progress,
        command=context.command,
        symbolic=symbolic_planner(kb, graph=graph),
        selector=own.selector or "order",
        deadline=spec.forward.deadline or DEFAULT_DEADLINE,
    )
