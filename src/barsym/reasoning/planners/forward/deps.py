"""DEPS as a planner: describe, explain, plan, with the dialogue in the prompt (Wang et al. 2023).

Round 0 is the plain planner: the model writes the whole plan forward under a
grammar over the game's vocabulary, and nothing checks it. Without facts (the
default) round 0 reasons backward first, each step with what it takes, then
writes the plan, as ``cot`` does (:mod:`.cot_needs`); only the plan goes into
the dialogue, and a replan is the plan alone (the failure's description says
what was missing). That prompt has no worked example: any plan's reasoning
spells out recipes of BAR's goal trees. The plan is then
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

from ....kb import KnowledgeBase
from ....llm import LLMBackend
from ....model import Goal, Plan
from ....planner.selector import execute, make_selector, plan_needs
from ....sim import DeterministicWorld, State, StochasticWorld
from ....sim.execution import describe, play
from ....sim.stochastic import derive_seed
from ...calls.model_calls import CUT_OFF
from ...grammars.forward_plans import ContextBudget, ForwardPlanResult, render_plan
from ...loop_limits import Deadline, repeated_run
from ...prompts import deps_prompts as prompts
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from . import cot_needs
from .deps_trace import DepsRound, DepsTrace, StopReason
from .forward_loop import ForwardPlanner, Task
from .stats import DepsSummary

DEFAULT_ROUNDS = 5
MAX_ROUNDS = 20  # each round costs ~2 calls; the 2048-token context holds about 3 rounds of dialogue anyway
PLAN_TOKENS = 360  # 30 lines of ~10 tokens and "done"
#: round 0 without facts: the reasoning (~20 tokens a line, 20 lines at most) before the plan
REASONING_TOKENS = 400
EXPLAIN_TOKENS = 32
MAX_CONTEXT = 8192
FEEDBACK_WORLDS = {"stochastic": StochasticWorld, "deterministic": DeterministicWorld}
__all__ = ["DepsPlanner", "DepsRound", "DepsTrace", "StopReason", "context_for", "deps_planner"]


class DepsPlanner(ForwardPlanner):
    """``deps``: the model plans forward, the world executes, the descriptor and the model's explanation feed back."""

    name = "deps"
    stand_in_context = False  # a stand-in's dialogue is held to its own (unbounded) context, as it always was

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend: LLMBackend, *, n_ctx: int | None = None):
        """Its own options (``spec.deps``): rounds, the feedback world, the selector; and the spec's world seed."""
        own = spec.deps
        rounds = DEFAULT_ROUNDS if own.deps_rounds is None else own.deps_rounds
        super().__init__(kb, spec, backend, n_ctx=n_ctx)
        # the spec's option models have checked the values (DepsOptions: 0..MAX_ROUNDS rounds, a known world, selector)
        self.rounds, self.selector, self.world_seed = rounds, own.selector or "order", spec.world_seed
        self.world = FEEDBACK_WORLDS[own.feedback_world or "stochastic"](kb)
        self.grammar = self.vocab.plan_grammar()
        self.reasons = self.facts is None  # no facts: round 0 reasons backward first (:mod:`.cot_needs`)
        self.first_grammar = cot_needs.thought_grammar(self.grammar) if self.reasons else self.grammar
        self.plan_budget = ContextBudget(self.n_ctx, PLAN_TOKENS, self.counter)
        self.first_budget = ContextBudget(self.n_ctx, PLAN_TOKENS + REASONING_TOKENS * self.reasons, self.counter)
        self.explain_budget = ContextBudget(self.n_ctx, EXPLAIN_TOKENS, self.counter)

    def system(self, kb: KnowledgeBase) -> str:
        return prompts.system_prompt(kb) if self.facts is not None else prompts.reasoning_system_prompt(kb)

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return prompts.few_shot(self.kb, symbolic, facts) if facts is not None else []

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

    # ---- the loop --------------------------------------------------------------------------------
    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        task = self.begin(goal, start)
        self.gateway.prime()
        trace = DepsTrace(self.world.name, self.rounds, selector=self.selector)
        dialogue = [{"role": "user", "content": prompts.task_message(goal, task.start, self.facts)}]
        number = 0
        while number <= self.rounds:
            if self.gateway.down:  # earlier in this process: the backend is not asked again
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.gateway.down
                break
            self.say(task, f"round {number}: planning", number + 1, self.rounds + 1)
            first = number == 0
            grammar = self.first_grammar if first else self.grammar
            fitted = self._fit(dialogue, self.first_budget if first else self.plan_budget)
            if fitted is None:
                trace.stopped = StopReason.CONTEXT_FULL
                break
            messages, dropped = fitted
            tokens = self.tokens(task, PLAN_TOKENS + REASONING_TOKENS * (first and self.reasons))
            if not tokens:
                trace.stopped, trace.problem = StopReason.DEADLINE, task.deadline.describe()
                break
            asked = self.call(task, messages, grammar, tokens, number + 1)
            if asked is None:
                if self.gateway.down:
                    trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.gateway.down
                    break
                continue  # a single failure: the same round once more
            body = (lambda text: cot_needs.split_reply(text)[1]) if first and self.reasons else None
            written, read, folded = self.read_plan(task, messages, grammar, asked, goal=goal, body=body)
            if body is not None:
                trace.reasoning = tuple(cot_needs.split_reply(asked.text)[0])
            this = self._execute(number, read.steps, goal, task.start, dropped, read.unreadable)
            this.folded, this.past_goal = folded, read.past_goal
            trace.rounds.append(this)
            stop = self._stop(trace, this, written.steps, number, task.deadline)
            if stop is not None:
                trace.stopped, trace.problem = stop
                break
            dialogue += [
                {"role": "assistant", "content": render_plan(read.steps)},
                {"role": "user", "content": prompts.failure_message(this.description)},
            ]
            this.explanation = self._explain(task, dialogue, number)
            if this.explanation is None and self.gateway.down:
                trace.stopped, trace.problem = StopReason.BACKEND_DOWN, self.gateway.down
                break
            dialogue += [
                {"role": "assistant", "content": this.explanation or "I do not know."},
                {"role": "user", "content": prompts.ASK_REPLAN},
            ]
            number += 1
        if not trace.rounds and trace.stopped is StopReason.BACKEND_DOWN:
            raise self.no_plan(trace.problem)
        won = trace.success_round
        return self.finish(
            task,
            trace.rounds[-1].steps if trace.rounds else (),
            trace,
            DepsSummary.of(trace),
            first_try=won == 0,
            after_feedback=won is not None and won > 0,
            unreadable=sum(len(r.unreadable) for r in trace.rounds),
        )

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

    def _explain(self, task: Task, dialogue, number: int) -> str | None:
        fitted = self._fit(dialogue, self.explain_budget)
        tokens = self.tokens(task, EXPLAIN_TOKENS)
        if fitted is None or not tokens:  # no room, or no time: the next round is asked without one
            return None
        messages, _ = fitted
        asked = self.call(task, messages, prompts.EXPLANATION_GRAMMAR, tokens, number + 1)
        if asked is None:
            return None
        self.log_text(task, messages, prompts.EXPLANATION_GRAMMAR, asked)  # an explanation is a call as a plan is
        text = asked.text.replace(CUT_OFF, "").strip()
        return " ".join(text.split()) or None


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
    from ...calls.backends import backend_for

    rounds = spec.deps.deps_rounds
    n_ctx = context_for(DEFAULT_ROUNDS if rounds is None else rounds, spec.llm.facts)
    backend = spec.context.backend or backend_for(spec.llm, n_ctx=n_ctx, progress=spec.context.progress)
    return DepsPlanner(kb, spec, backend, n_ctx=n_ctx)
