"""The LLM planners: ``bar`` (model + verifier + symbolic fallback) and ``llm-only``.

Both run BAR's loop (:class:`BackwardPlanner`) with an :class:`LLMDecomposer`;
this module adds what belongs to a whole plan rather than to one goal:

- **Counters.** The decomposer's per-plan LLM counters (calls, tokens, evaluated
  prompt tokens, acceptances, fallbacks) are ``PlanResult.stats.llm``, with
  the plan's wall time, mode and whether it fell back beside them, so ``barsym plan`` prints them and ``barsym eval``
  sums them.
- **A plan-level safety net for ``bar``.** Each answer is checked on its own, so
  answers that are each fine can still fail together (a cycle through a tool the
  model made its own way). If the finished plan cannot be ordered or validated,
  ``bar`` plans the task symbolically and labels every step
  ``symbolic-fallback``, so ``bar`` always returns an executable plan and the
  report says it had to. ``llm-only`` has no net: its plan comes back with
  the validator's verdict, executable or not.
- **One model per process.** Backends are cached by their settings (:mod:`.backends`,
  which every planner shares), so an evaluation over 53 tasks, or several planners in
  one test session, load the GGUF once. A server URL is probed once when the planner is built, so a
  server that is not there is a one-line error before any planning starts.
  The in-process model keeps its few-shot prefix state in the cache folder
  (``llm-state/``), so the next process loads it instead of evaluating it.
- **Progress and the call log.** With a progress callback, each plan first
  counts the goals the symbolic planner needs (about as many as this plan
  will have) so the line can say "goal 4 of about 18"; every model call goes
  to the SQLite call log (``barsym logs``) under a run named after the plan.
"""

from __future__ import annotations

import dataclasses
import functools
import time

from ....kb import KnowledgeBase
from ....model import Goal
from ....planner.backward import BackwardPlanner
from ....planner.decomposer import ErrorKind, PlanningError
from ....planner.registry import graph_for, symbolic_planner
from ....planner.result import PlanResult
from ....planner.symbolic import SymbolicDecomposer
from ....sim import State

# the shared backends moved to .backends (issue 36); their names stay importable from here
from ...calls.backends import N_CTX, STATE_DIR, backend_for, probe  # noqa: F401
from ...spec import PlannerSpec
from .bar_decomposer import FALLBACK, LLMDecomposer

#: PlanningError kinds that say something about the goal, not about the answers:
#: the symbolic planner would fail the same way, so there is nothing to fall back to.
GOAL_ERRORS = tuple(kind for kind in ErrorKind if kind.about_goal)
#: goals one plan may decompose before it stops (a caller's context may set fewer)
MAX_GOALS = 2000


class LLMPlanner:
    """BAR's loop with an LLM decomposer, per-plan counters and (for ``bar``) a plan-level net."""

    def __init__(
        self,
        kb: KnowledgeBase,
        decomposer: LLMDecomposer,
        *,
        name: str,
        plan_fallback: bool,
        validator=None,
        max_goals: int = MAX_GOALS,
        command: str = "",
    ):
        rules = decomposer.rules  # the profile the decomposer plays by: the loop and the fallbacks play by it too
        self.kb, self.decomposer, self.name = kb, decomposer, name
        self.command = command  # how the call log names the runs: "barsym plan diamond_pickaxe"
        self.graph = decomposer.graph
        self.plan_fallback = plan_fallback
        self.inner = BackwardPlanner(
            kb,
            decomposer,
            graph=self.graph,
            validator=validator,
            verify=decomposer.verify,
            max_goals=max_goals,
            name=name,
            keep_invalid=not decomposer.verify,
            rules=rules,
        )
        self._symbolic = (
            symbolic_planner(kb, graph=self.graph, validator=validator, rules=rules) if plan_fallback else None
        )
        self._estimator = None  # the symbolic planner that counts goals for the progress line

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        started = time.perf_counter()
        self.decomposer.start_plan(self._estimate(goal, start))
        self.decomposer.caller.start_run(self.command, self.name, f"{goal.count} {goal.item}")
        if not self.decomposer.caller.down:
            self.decomposer.caller.prime()  # before the first goal, so the progress line says what takes time
        try:
            result = self.inner.plan(goal, start)
            fell_back = None
        except PlanningError as exc:
            # under rules without gathering the per-goal fallback cannot see the start inventory, so its
            # "unreachable" is no verdict on the goal: the plan-level inventory search gives it
            verdict = exc.kind in GOAL_ERRORS and self.decomposer.rules.can_gather
            if verdict or self._symbolic is None:
                raise
            result, fell_back = self._symbolic.plan(goal, start), exc.message
            self._relabel(result, exc.message)
            self._count_fallback(result)
        result.stats = dataclasses.replace(
            result.stats,
            llm=self.decomposer.stats,
            plan_fallback=fell_back,
            llm_mode=self.decomposer.mode,
            llm_verified=self.decomposer.verify,
            seconds=round(time.perf_counter() - started, 6),
            backend_down=self.decomposer.down or None,
        )
        return result

    def _estimate(self, goal: Goal, start: State | None) -> int | None:
        """About how many goals the plan has: as many as the symbolic planner decomposes (only for progress)."""
        progress = self.decomposer.progress
        if progress is None or not getattr(progress, "enabled", True):  # a progress line that is not drawn
            return None
        try:
            if self._estimator is None:  # not _symbolic: for llm-only that would be a plan-level fallback
                self._estimator = self._symbolic or symbolic_planner(
                    self.kb, graph=self.graph, rules=self.decomposer.rules
                )
            return len(self._estimator.plan(goal, start).nodes)
        except PlanningError:
            return None

    def _count_fallback(self, result: PlanResult) -> None:
        """The counters of a plan-level fallback say what its step tags say: every goal answered symbolically.

        The model's answers were discarded with its plan, so no goal of the plan returned was accepted from it;
        calls, tokens and time stay what the model spent."""
        stats = self.decomposer.stats
        decided = sum(node.decomposition is not None for node in result.nodes)
        stats.accepted_first_try = stats.accepted_after_feedback = stats.context_answers = stats.graph_forced = 0
        stats.fallbacks, stats.plan_fallbacks = decided, 1

    def _relabel(self, result: PlanResult, reason: str) -> None:
        result.planner = self.name
        for node in result.nodes:
            if node.decomposition is not None:
                note = f"plan-level fallback ({reason})"
                node.decomposition = dataclasses.replace(node.decomposition, provenance=FALLBACK, note=note)


def llm_planner(kb: KnowledgeBase, spec: PlannerSpec, *, name: str = "bar", verify: bool = True) -> LLMPlanner:
    """BAR's loop with the model of ``spec`` decomposing; ``verify`` checks every answer and falls back.

    ``bar`` (:data:`bar_planner`): the model decomposes, the graph checks every answer, the symbolic decomposer
    covers failures; ``llm-only`` (:data:`llm_only_planner`): the same loop without verifier or fallback, so its
    plans may be wrong, and say so. The registry calls this directly (the two are partials of it, no wrapper)."""
    llm, context = spec.llm, spec.context
    backend = context.backend or backend_for(llm, progress=context.progress)
    decomposer = LLMDecomposer(
        kb,
        backend,
        mode=llm.llm_mode,
        max_retries=llm.max_retries,
        verify=verify,
        fallback=SymbolicDecomposer if verify else None,
        graph=context.graph or graph_for(kb, context.rules),
        temperature=llm.temperature,
        retry_temperature=llm.retry_temperature,
        seed=llm.seed,
        progress=context.progress,
        facts=llm.facts,
        log=context.call_log(),
        rules=context.rules,
    )
    return LLMPlanner(
        kb,
        decomposer,
        name=name,
        plan_fallback=verify,
        validator=context.validator,
        command=context.command,
        max_goals=MAX_GOALS if context.max_goals is None else context.max_goals,
    )


#: ``bar``: the model decomposes, the graph checks every answer, the symbolic decomposer covers failures
bar_planner = functools.partial(llm_planner, name="bar", verify=True)
#: ``llm-only``: the same loop without verifier or fallback; plans may be wrong, and say so
llm_only_planner = functools.partial(llm_planner, name="llm-only", verify=False)
