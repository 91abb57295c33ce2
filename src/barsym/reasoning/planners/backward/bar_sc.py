"""Planners with state consistency: ``bar-sc``, and ``--consistency`` on any planner.

``bar-sc`` is BAR as the paper runs it: the model's backward decomposition
without a per-goal verifier (``llm-only``), then module (b) repairs the plan
forward between anchors. Any other planner can take the same module
(``make_planner("bar", kb, consistency=True)``, ``barsym plan --consistency``);
a plan that is already valid, as ``bar``'s always are, comes back unchanged.

The wrapped planner's :class:`~barsym.planner.PlanResult` is returned with the
repaired plan and its validation; each step's provenance is the inner
planner's for a kept step (``llm``, ``graph``, ... and ``kept``) and
``repaired-llm`` / ``repaired-symbolic`` for a new one. The counters of the
repair (rounds, windows, repaired steps, scoring and repair calls) go under
``stats.section(RepairStats)`` (``stats["consistency"]`` in the JSON).
"""

from __future__ import annotations

import dataclasses
import time

from ....consistency.config import AnchorMethod, ConsistencyConfig, NeedSource, RepairerKind, ScoreSource
from ....consistency.needs import NeedPlanner
from ....consistency.repair import StateConsistency, SymbolicRepairer
from ....consistency.results import Provenance, RepairResult
from ....kb import KnowledgeBase, Rules, rules_for
from ....model import Goal
from ....planner.backward import PlanResult
from ....planner.stats import LLMStats
from ....sim import State
from ...spec import PlannerSpec

#: bar-sc's defaults: step scoring from both sources (the model's scores alone pick almost no
#: anchors with the 135M model; see README), the LLM repairer with the symbolic fallback
BAR_SC_DEFAULTS = {"anchors": AnchorMethod.STEP_SCORING, "scores": ScoreSource.BOTH, "repairer": RepairerKind.LLM}


@dataclasses.dataclass
class RepairedPlanResult(PlanResult):
    """A planner's result with its plan repaired; provenance and purpose follow the kept steps."""

    repair: RepairResult | None = None
    inner: PlanResult | None = None
    kept_at: dict[int, int] = dataclasses.field(default_factory=dict)  # new position -> position in the inner plan

    def provenance(self, position: int) -> list[str]:
        label = self.repair.provenance[position]
        if label is Provenance.KEPT and position in self.kept_at:
            return self.inner.provenance(self.kept_at[position]) + [Provenance.KEPT.value]
        return [label.value]

    def serves(self, position: int) -> list[str]:
        if position in self.kept_at:
            return self.inner.serves(self.kept_at[position])
        if position == len(self.plan) - 1:
            return ["goal"]
        outcomes = self.validation.rollout.outcomes if self.validation.rollout else ()
        made = outcomes[position].transition.item if position < len(outcomes) and outcomes[position].ok else None
        for later in outcomes[position + 1 :]:  # the first later step that consumes or uses what this one made
            move = later.transition
            if move is None:
                continue
            if made is None and not later.step.type.moves:  # a layer move: for the next step gathering there
                return [later.step.item] if later.step.item else []
            if made is not None and (made in move.consumed or made in move.used):
                return [later.step.item or str(later.step)]
        return []


class ModelNeeds:
    """The model plans what a repair window is missing (``--repair-needs model``).

    Why: with the symbolic planner under the forward walk, every new step of a repair is the rule book's, and a
    reader with no model repairs as well as the model does (with the ``largest`` stand-in, whose plans are one
    junk step, bar-sc rebuilt whole plans from the graph's forced steps). Here each need the simulator finds
    (``3 iron_ingot`` from the state the window is at) is put to the model's own backward decomposition, as
    ``llm-only`` runs it: no verifier, no fallback; the need planner offers its plan only if it runs. ``stats``
    adds up the model's counters over every need planned, for the repair's own (``needs_llm_calls``).
    """

    def __init__(self, planner):
        self.planner = planner
        self.stats = LLMStats()

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        result = self.planner.plan(goal, start)
        used = result.stats.llm
        if used is not None:
            for name in LLMStats.summed():
                setattr(self.stats, name, getattr(self.stats, name) + getattr(used, name))
            self.stats.llm_seconds += used.llm_seconds
            self.stats.reused_seconds += used.reused_seconds
        return result


def need_planner(kb: KnowledgeBase, spec: PlannerSpec):
    """The model's decomposition for ``--repair-needs model``: llm-only's (no verifier, no fallback) with
    ``spec``'s model settings, named ``repair-needs`` in the call log."""
    from .llm_planners import llm_planner

    return llm_planner(kb, spec, name="repair-needs", verify=False)


def default_need_planner(kb: KnowledgeBase, backend, rules: Rules):
    """:func:`need_planner` where no planner's settings are at hand (``barsym repair``, ``api.repair``):
    vocabulary mode and no facts, so that every need is the model's answer (in graph mode the graph would
    answer a goal with one way alone)."""
    spec = PlannerSpec.of("llm-only", {"backend": backend, "rules": rules, "llm_mode": "vocab", "facts": False})
    return need_planner(kb, spec)


def model_consistency(
    kb: KnowledgeBase,
    config: ConsistencyConfig | None = None,
    *,
    rules: Rules | str | None = None,
    backend=None,
    scorer=None,
    temperature: float = 0.0,
    need_planner=None,
) -> StateConsistency:
    """State consistency whose configuration may use the model (``backend``): its scores, its repairer, its
    plans for what a window is missing (``need_planner``, with ``--repair-needs model``: a model planner).

    The model's step scorer and forward repairer live here, above the module,
    and are handed to :class:`StateConsistency`; a configuration that uses
    none of them needs no ``backend``.
    """
    config = config or ConsistencyConfig()
    rules = rules_for(kb, rules)
    model_needs = config.needs is NeedSource.MODEL
    if model_needs and need_planner is None and backend is not None:
        need_planner = default_need_planner(kb, backend, rules)
    if model_needs and need_planner is None:
        raise ValueError(f"this configuration ({config.describe()}) needs a language model")
    needs = NeedPlanner(kb, rules, planner=ModelNeeds(need_planner) if model_needs else None)
    wants_scores = config.anchors is AnchorMethod.STEP_SCORING and config.scores is not ScoreSource.SIMULATOR
    if (wants_scores and scorer is None or config.repairer is RepairerKind.LLM) and backend is None:
        raise ValueError(f"this configuration ({config.describe()}) needs a language model")
    if wants_scores and scorer is None:
        from ...scoring.step_scorer import LLMStepScorer

        scorer = LLMStepScorer(
            backend, seed=config.seed, temperature=temperature, method=config.score_method, rules=rules
        )
    repairer = None
    if config.repairer is RepairerKind.LLM:
        from ...scoring.forward_repairer import LLMRepairer

        repairer = LLMRepairer(
            needs,
            backend,
            # the fallback is the graph's repair: with the model's needs, planned by the graph too
            fallback=SymbolicRepairer(NeedPlanner(kb, rules) if model_needs else needs) if config.fallback else None,
            seed=config.seed,
            temperature=temperature,
        )
    return StateConsistency(
        kb, config, rules=rules, scorer=scorer if wants_scores else None, llm_repairer=repairer, needs=needs
    )


class ConsistencyPlanner:
    def __init__(self, inner, consistency: StateConsistency, name: str):
        self.inner, self.consistency, self.name = inner, consistency, name
        self.plan_fallback = getattr(inner, "plan_fallback", True)

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        started = time.perf_counter()
        result = self.inner.plan(goal, start)
        repaired = self.consistency.repair(result.plan, goal=result.goal, start=start)
        kept_at: dict[int, int] = {}
        j = 0
        old = result.plan.steps
        for i, (step, label) in enumerate(zip(repaired.plan.steps, repaired.provenance)):
            if label is not Provenance.KEPT:
                continue
            while j < len(old) and old[j] != step:
                j += 1
            if j < len(old):
                kept_at[i] = j
                j += 1
        stats = dataclasses.replace(result.stats, seconds=round(time.perf_counter() - started, 6)).with_section(
            dataclasses.replace(repaired.stats, step_scores=_step_scores(repaired))
        )
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(PlanResult)}
        fields.update(
            plan=repaired.plan,
            validation=repaired.after,
            planner=self.name,
            stats=stats,
            sources=[[] for _ in repaired.plan.steps],
            needs=[],
        )
        return RepairedPlanResult(**fields, repair=repaired, inner=result, kept_at=kept_at)


def with_consistency(planner, kb: KnowledgeBase, spec: PlannerSpec, name: str | None = None, defaults=None):
    """``planner`` followed by state consistency (the configuration from ``spec``).

    An LLM planner's model also scores and repairs (``bar-sc``'s defaults); a
    planner without one gets simulator scores and the symbolic repairer
    unless the spec asks for the model.
    """
    model = getattr(getattr(planner, "decomposer", None), "backend", None)
    if defaults is None and model is not None:
        defaults = BAR_SC_DEFAULTS
    config = spec.repair(defaults)
    if model is not None and spec.context.backend is None:
        spec = spec.with_context(backend=model)
    from ...calls.backends import backend_for  # the model side, only when a planner is made

    backend = (
        (spec.context.backend or backend_for(spec.llm, progress=spec.context.progress)) if config.uses_llm else None
    )
    needs = need_planner(kb, spec.with_context(backend=backend)) if config.needs is NeedSource.MODEL else None
    consistency = model_consistency(
        kb,
        config,
        rules=spec.rules,
        backend=backend,
        temperature=spec.llm.temperature or 0.0,
        need_planner=needs,
    )
    return ConsistencyPlanner(planner, consistency, name or f"{planner.name}+sc")


def bar_sc_planner(kb: KnowledgeBase, spec: PlannerSpec) -> ConsistencyPlanner:
    """``bar-sc``: ``llm-only``'s backward decomposition, then state consistency (BAR module b)."""
    from ...calls.backends import backend_for
    from .llm_planners import llm_only_planner

    spec = spec.with_context(backend=spec.context.backend or backend_for(spec.llm, progress=spec.context.progress))
    inner = llm_only_planner(kb, spec)
    return with_consistency(inner, kb, spec, name="bar-sc", defaults=BAR_SC_DEFAULTS)


def _step_scores(repaired) -> dict | None:
    """The first round's step scores from both scorers, where the model scored too (for barsym report).

    Kept with the plan's record so that how often the two agree can be shown for a
    whole evaluation without scoring anything again.
    """
    if not repaired.rounds or repaired.rounds[0].llm is None:
        return None
    first = repaired.rounds[0]
    return {"simulator": [s.score for s in first.simulator], "llm": list(first.llm)}
