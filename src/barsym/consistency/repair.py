"""State consistency (BAR module b): score, choose anchors, repair forward, splice, repeat.

One round: validate the plan (the full rollout); score every step (the
simulator's formula, the model's 1-10, or their minimum); choose anchor pairs
(step scoring or the sliding window) and merge them into windows; regenerate
every window forward from the state before its start anchor so that its
target can run (:mod:`.forward`), left to right, each from the state the
plan reaches after the windows already repaired; splice. Rounds repeat until
the plan is valid, a round changes nothing, or the round limit is hit.

A valid plan (waste allowed) is returned unchanged without scoring. Steps
outside the windows are never touched, so every step of the result is
``kept`` (the user's step, where it was) or ``repaired-llm`` /
``repaired-symbolic`` (new, moved, or with a new count).

The **symbolic repairer** is the forward walk with the symbolic chooser (the
symbolic planner plans what is missing from the current state); the **LLM
repairer** (:mod:`.llm_repairer`) lets the model choose each step and falls
back to the symbolic repairer for a window it does not finish.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from ..kb import KnowledgeBase, Rules, rules_for
from ..model import Goal, Plan, Step
from ..sim import State
from ..validate import ValidationResult, Validator
from .anchors import DEFAULT_T, AnchorMethod, AnchorPair, ScoreSource, merge, sliding_window, step_scoring
from .forward import KEPT, SymbolicChooser, Window, WindowRepair, walk
from .needs import NeedPlanner
from .scores import DEFAULT_K, StepScore, combine, simulator_scores

DEFAULT_ROUNDS = 3


class Provenance(str, Enum):
    KEPT = KEPT
    REPAIRED_LLM = "repaired-llm"
    REPAIRED_SYMBOLIC = "repaired-symbolic"


class RepairerKind(str, Enum):
    LLM = "llm"
    SYMBOLIC = "symbolic"


@dataclass(frozen=True)
class ConsistencyConfig:
    anchors: AnchorMethod = AnchorMethod.STEP_SCORING
    scores: ScoreSource = ScoreSource.SIMULATOR
    t: int = DEFAULT_T
    k: int = DEFAULT_K
    repairer: RepairerKind = RepairerKind.SYMBOLIC
    fallback: bool = True  # the LLM repairer's symbolic fallback
    rounds: int = DEFAULT_ROUNDS
    seed: int = 0

    def __post_init__(self) -> None:
        for name, kind in (("anchors", AnchorMethod), ("scores", ScoreSource), ("repairer", RepairerKind)):
            object.__setattr__(self, name, kind(getattr(self, name)))
        if not 1 <= self.t <= 10:
            raise ValueError(f"t must be from 1 to 10, got {self.t}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")

    @property
    def uses_llm(self) -> bool:
        return self.repairer is RepairerKind.LLM or (
            self.anchors is AnchorMethod.STEP_SCORING and self.scores is not ScoreSource.SIMULATOR)

    def describe(self) -> str:
        scores = f", {self.scores.value} scores, t={self.t}" if self.anchors is AnchorMethod.STEP_SCORING else ""
        repairer = self.repairer.value + (" + symbolic fallback" if self.repairer is RepairerKind.LLM
                                          and self.fallback else "")
        return f"{self.anchors.value}{scores}, k={self.k}, repairer {repairer}, {self.rounds} round(s)"


class Repairer(Protocol):
    name: str

    def repair(self, window: Window) -> WindowRepair:
        ...


class StepScorer(Protocol):
    """Gives each step of a plan a 1-10 score (None where there is no answer)."""

    def score(self, plan: Sequence[Step], goal: Goal) -> list[int | None]:
        ...


class SymbolicRepairer:
    """The forward walk with the symbolic chooser (see :mod:`.forward`)."""

    name = RepairerKind.SYMBOLIC.value

    def __init__(self, needs: NeedPlanner):
        self.needs = needs
        self.chooser = SymbolicChooser()

    def repair(self, window: Window) -> WindowRepair:
        return walk(window, self.needs, self.chooser)


@dataclass
class RoundRecord:
    number: int
    simulator: list[StepScore]
    llm: list[int | None] | None
    pairs: list[AnchorPair]
    windows: list[AnchorPair]
    repairs: list[WindowRepair] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "round": self.number,
            "anchors": [p.as_list() for p in self.pairs],
            "windows": [w.as_list() for w in self.windows],
            "repairs": [{"window": r.window.pair.as_list(), "repairer": r.repairer, "done": r.done,
                         "steps": [str(s) for s in r.steps], "dropped": [str(s) for s in r.dropped],
                         **({"note": r.note} if r.note else {})} for r in self.repairs],
        }


@dataclass
class RepairResult:
    original: Plan
    plan: Plan
    provenance: list[Provenance]
    before: ValidationResult
    after: ValidationResult
    rounds: list[RoundRecord]
    config: ConsistencyConfig
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def valid_before(self) -> bool:
        return self.before.valid

    @property
    def valid_after(self) -> bool:
        return self.after.valid

    @property
    def changed(self) -> bool:
        return self.plan.steps != self.original.steps


class StateConsistency:
    """BAR's module (b) for one knowledge base, rule profile and configuration."""

    def __init__(self, kb: KnowledgeBase, config: ConsistencyConfig | None = None, *, rules: Rules | str | None = None,
                 scorer: StepScorer | None = None, llm_repairer: Repairer | None = None):
        self.kb = kb
        self.config = config or ConsistencyConfig()
        self.rules = rules_for(kb, rules)
        self.validator = Validator(kb, self.rules)
        self.needs = NeedPlanner(kb, self.rules)
        self.symbolic = SymbolicRepairer(self.needs)
        self.scorer = scorer
        self.llm_repairer = llm_repairer
        if self.config.uses_llm and self.config.anchors is AnchorMethod.STEP_SCORING \
                and self.config.scores is not ScoreSource.SIMULATOR and scorer is None:
            raise ValueError(f"{self.config.scores.value} scores need an LLM step scorer")
        if self.config.repairer is RepairerKind.LLM and llm_repairer is None:
            raise ValueError("the llm repairer needs a model")

    # ---- scores and anchors ------------------------------------------------------------
    def scores(self, plan: Plan, goal: Goal, start: State | None = None,
               validation: ValidationResult | None = None) -> tuple[list[StepScore], list[int | None] | None]:
        """The simulator's scores and (when the configuration or ``want_llm`` asks) the model's."""
        validation = validation or self.validator.validate(plan, goal=goal, start=start)
        sim = simulator_scores(self.validator, validation, self.config.k)
        llm = None
        if self.scorer is not None and self.config.scores is not ScoreSource.SIMULATOR:
            llm = self.scorer.score(plan.steps, goal)
        return sim, llm

    def chosen(self, sim: list[StepScore], llm: list[int | None] | None) -> list[int]:
        """The scores that pick anchors under the configured source."""
        source = self.config.scores
        if source is ScoreSource.SIMULATOR or llm is None:
            return [s.score for s in sim]
        if source is ScoreSource.LLM:
            return [10 if v is None else v for v in llm]  # no answer: not an anchor
        return [combine(s.score, v) for s, v in zip(sim, llm)]

    def pairs(self, n: int, sim: list[StepScore], llm: list[int | None] | None, round_number: int) -> list[AnchorPair]:
        c = self.config
        if c.anchors is AnchorMethod.SLIDING_WINDOW:
            return sliding_window(n, c.k, c.seed, round_number)
        return step_scoring(self.chosen(sim, llm), c.t, c.k)

    # ---- the loop ----------------------------------------------------------------------------
    def repair(self, plan: Plan, goal: Goal | None = None, start: State | None = None) -> RepairResult:
        started = time.perf_counter()
        goal = goal or plan.default_goal()
        if goal is None:
            raise ValueError("the plan names no item, so it has no goal; give one")
        start = start or State()
        before = self.validator.validate(plan, goal=goal, start=start)
        steps, labels = list(plan.steps), [Provenance.KEPT] * len(plan.steps)
        validation, rounds = before, []
        for number in range(1, self.config.rounds + 1):
            if validation.valid:
                break
            current = Plan(steps=tuple(steps), source=plan.source)
            sim, llm = self.scores(current, goal, start, validation)
            pairs = self.pairs(len(steps), sim, llm, number)
            record = RoundRecord(number, sim, llm, pairs, merge(pairs))
            rounds.append(record)
            if not record.windows:
                break
            new_steps, new_labels = self._round(record, steps, labels, goal, start)
            changed = new_steps != steps
            steps, labels = new_steps, new_labels
            validation = self.validator.validate(Plan(steps=tuple(steps), source=plan.source), goal=goal, start=start)
            if not changed:
                break
        result_plan = Plan(steps=tuple(steps), source=plan.source)
        return RepairResult(plan, result_plan, labels, before, validation, rounds, self.config,
                            seconds=time.perf_counter() - started)

    def _round(self, record: RoundRecord, steps: list[Step], labels: list[Provenance], goal: Goal,
               start: State) -> tuple[list[Step], list[Provenance]]:
        steps, labels = list(steps), list(labels)
        shift = 0
        windows = record.windows
        for number, window in enumerate(windows):
            s, e = window.start + shift, window.end + shift
            following = windows[number + 1].start + shift if number + 1 < len(windows) else len(steps) + 1
            trace = self.validator.validate(Plan(steps=tuple(steps)), goal=None, start=start).trace
            job = Window(AnchorPair(s, e), trace[s - 1], tuple(steps[s - 1:e - 1]), tuple(steps[e - 1:following - 1]),
                         goal if following > len(steps) else None, goal, tuple(steps), tuple(steps[following - 1:]))
            repairer = self.llm_repairer if self.config.repairer is RepairerKind.LLM else self.symbolic
            done = repairer.repair(job)
            record.repairs.append(done)
            old = labels[s - 1:e - 1]
            new_labels = [old[source] if source is not None else Provenance(label)
                          for label, source in zip(done.provenance, done.kept_from)]
            steps[s - 1:e - 1] = list(done.steps)
            labels[s - 1:e - 1] = new_labels
            shift += len(done.steps) - (e - s)
        return steps, labels
