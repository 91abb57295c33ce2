"""State consistency (BAR module b): score, choose anchors, repair forward, splice, repeat.

One round: validate the plan (the full rollout); score every step (the
simulator's formula, the model's 1-10, or their minimum); choose anchor pairs
(step scoring or the sliding window) and merge them into windows; regenerate
every window forward from the state before its start anchor so that its
target can run (:mod:`.forward`), left to right, each from the state the
plan reaches after the windows already repaired; splice. Rounds repeat until
the plan is valid, a round changes nothing, or the round limit is hit.

A valid plan (waste allowed) is returned unchanged without scoring. With the
symbolic repairer, a plan that one step deleted, changed or inserted makes
valid is repaired by that one step before any round (:mod:`.smallest`): the
smallest repair, where a window could have grown far past the mistake. Steps
outside the windows are never touched, so every step of the result is
``kept`` (the user's step, where it was) or ``repaired-llm`` /
``repaired-symbolic`` (new, moved, or with a new count).

The **symbolic repairer** is the forward walk with the symbolic chooser (the
symbolic planner plans what is missing from the current state); the **LLM
repairer** (:mod:`barsym.reasoning.scoring.forward_repairer`) lets the model choose each step and falls
back to the symbolic repairer for a window it does not finish.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from ..kb import KnowledgeBase, Rules, UnknownItemError, rules_for
from ..model import Goal, Plan, Step
from ..planner.registry import graph_for
from ..sim import State, rollout
from ..validation import ValidationResult, Validator
from .anchors import AnchorPair, merge, sliding_window, step_scoring
from .config import AnchorMethod, ConsistencyConfig, NeedSource, RepairerKind, ScoreSource
from .durability import top_up_tools
from .forward import SymbolicChooser, Window, WindowRepair, walk
from .needs import NeedPlanner
from .results import Provenance, RepairResult, RoundRecord
from .scores import StepScore, combine, simulator_scores
from .smallest import smallest_edit
from .stats import RepairStats

#: the model's counters a repair reports the change of (:meth:`StateConsistency._stats`)
USE_KEYS = ("llm_calls", "reused_replies", "graph_forced", "evaluated_prompt_tokens", "reused_seconds")


class CannotRepair(ValueError):
    """The plan's goal cannot be had at all (nothing in the overworld makes it), so no repair can reach it."""


class _Regrow(Exception):
    """A window grew back over an earlier one: the round starts over with these windows (merged)."""

    def __init__(self, windows: list[AnchorPair]):
        super().__init__("regrow")
        self.windows = windows


class Repairer(Protocol):
    name: str

    def repair(self, window: Window) -> WindowRepair: ...


class StepScorer(Protocol):
    """Gives each step of a plan a 1-10 score (None where there is no answer)."""

    def score(self, plan: Sequence[Step], goal: Goal) -> list[int | None]: ...


class SymbolicRepairer:
    """The forward walk with the symbolic chooser (see :mod:`.forward`)."""

    name = RepairerKind.SYMBOLIC.value

    def __init__(self, needs: NeedPlanner):
        self.needs = needs
        self.chooser = SymbolicChooser()

    def repair(self, window: Window) -> WindowRepair:
        return walk(window, self.needs, self.chooser)


class StateConsistency:
    """BAR's module (b) for one knowledge base, rule profile and configuration."""

    def __init__(
        self,
        kb: KnowledgeBase,
        config: ConsistencyConfig | None = None,
        *,
        rules: Rules | str | None = None,
        scorer: StepScorer | None = None,
        llm_repairer: Repairer | None = None,
        needs: NeedPlanner | None = None,
    ):
        """``scorer`` (the model's step scores) and ``llm_repairer`` come from above.

        This module knows nothing of language models: the configurations that
        use one are built by :func:`barsym.reasoning.model_consistency`, which
        makes the model's scorer and repairer and hands them in, so the
        symbolic configurations never import :mod:`barsym.llm`.
        """
        self.kb = kb
        self.config = c = config or ConsistencyConfig()
        self.rules = rules_for(kb, rules)
        self.validator = Validator(kb, self.rules)
        self.needs = needs or NeedPlanner(kb, self.rules)
        self.symbolic = SymbolicRepairer(self.needs)
        wants_scores = c.anchors is AnchorMethod.STEP_SCORING and c.scores is not ScoreSource.SIMULATOR
        if wants_scores and scorer is None or c.repairer is RepairerKind.LLM and llm_repairer is None:
            raise ValueError(
                f"this configuration ({c.describe()}) needs a language model "
                f"(build it with barsym.reasoning.model_consistency)"
            )
        self.scorer = scorer
        self.llm_repairer = llm_repairer if c.repairer is RepairerKind.LLM else None

    # ---- scores and anchors ------------------------------------------------------------
    def scores(
        self, plan: Plan, goal: Goal, start: State | None = None, validation: ValidationResult | None = None
    ) -> tuple[list[StepScore], list[int | None] | None]:
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
        self._check_goal(goal, start)
        used_before = self.llm_use()
        before = self.validator.validate(plan, goal=goal, start=start)
        steps, labels = list(plan.steps), [Provenance.KEPT] * len(plan.steps)
        validation, rounds = before, []
        edit = self._smallest(plan, goal, start, before)
        if edit is not None:  # one step deleted, changed or inserted makes it valid: no rounds
            steps, labels, validation = edit[0].apply(steps), edit[0].labels(labels), edit[1]
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
        if self.rules.profile.durability and not validation.valid:  # --rules durable: copies of worn tools
            steps, labels, validation = top_up_tools(
                self.needs, self.validator, steps, labels, Provenance.REPAIRED_SYMBOLIC, goal, start, plan.source
            )
        result_plan = Plan(steps=tuple(steps), source=plan.source)
        result = RepairResult(
            plan,
            goal,
            result_plan,
            labels,
            before,
            validation,
            rounds,
            self.config,
            seconds=time.perf_counter() - started,
            initial=rounds[0].simulator if rounds else simulator_scores(self.validator, before, self.config.k),
            edit=edit[0].describe(plan.steps) if edit is not None else None,
        )
        result.stats = self._stats(result, used_before)
        return result

    def _smallest(self, plan: Plan, goal: Goal, start: State, before: ValidationResult):
        """The smallest repair (:mod:`.smallest`), under the default configuration (the simulator's scores, step
        scoring, the symbolic repairer): a configuration that asks for the model's scores or repair, or for
        sliding windows, and a worn tool under the durable rules (topped up below), get BAR's rounds as before."""
        c = self.config
        default = (c.anchors, c.scores, c.repairer, c.needs) == (
            AnchorMethod.STEP_SCORING,
            ScoreSource.SIMULATOR,
            RepairerKind.SYMBOLIC,
            NeedSource.GRAPH,
        )
        if before.valid or not default or self.rules.profile.durability:
            return None
        return smallest_edit(self.needs, plan.steps, goal, start, before)

    def _check_goal(self, goal: Goal, start: State) -> None:
        try:
            item = self.kb.resolve(goal.item)
        except UnknownItemError as exc:
            raise CannotRepair(f"the goal {exc}") from None
        if not self.rules.can_gather or start.count_any(self.kb.acceptable(item)) >= goal.count:
            return  # under rules without gathering, what can be made depends on the start inventory alone
        reach = graph_for(self.kb, self.rules).reachability(item)
        if not reach.reachable:
            raise CannotRepair(reach.reason)

    def llm_use(self) -> dict:
        """What the model cost so far in this process (scoring, repair, and planning needs with
        ``--repair-needs model``): each part's counters (:class:`~barsym.planner.stats.LLMStats`, the one
        type every model call is counted in)."""
        out: dict = {}
        parts = ((self.scorer, "scoring"), (self.llm_repairer, "repair"), (self.needs.planner, "needs"))
        for part, name in parts:
            stats = getattr(part, "stats", None)
            if stats is not None:
                out[name] = {key: getattr(stats, key) for key in USE_KEYS}
        return out

    def _stats(self, result: RepairResult, used_before: dict) -> RepairStats:
        """Counters of this repair: rounds, windows, steps by provenance, fallbacks, and the model's calls."""
        windows = [r for rnd in result.rounds for r in rnd.repairs]
        stats = {
            "rounds": len(result.rounds),
            "windows": len(windows),
            "repaired_steps": sum(p is not Provenance.KEPT for p in result.provenance),
            "kept_steps": sum(p is Provenance.KEPT for p in result.provenance),
            "unfinished_windows": sum(not r.done for r in windows),
            "symbolic_fallbacks": sum(r.note.startswith("symbolic fallback") for r in windows),
            "valid_before": result.valid_before,
            "valid_after": result.valid_after,
            "seconds": round(result.seconds, 6),
        }
        now = self.llm_use()
        calls = tokens = 0
        replayed = 0.0
        for name, use in now.items():
            before = used_before.get(name, {})

            def delta(key: str, use=use, before=before):
                return use[key] - before.get(key, 0)

            # scores replayed from the cache count as the calls a run of its own would have made
            calls_here = delta("llm_calls") + delta("reused_replies")
            stats[f"{name}_llm_calls"] = calls_here
            stats[f"{name}_forced"] = delta("graph_forced")
            calls += calls_here
            tokens += delta("evaluated_prompt_tokens")
            replayed += delta("reused_seconds")
        stats["llm_calls"], stats["evaluated_prompt_tokens"] = calls, tokens
        stats["replayed_seconds"] = round(replayed, 3)  # time the replayed calls took when first made
        return RepairStats(**stats)

    def _round(
        self, record: RoundRecord, steps: list[Step], labels: list[Provenance], goal: Goal, start: State
    ) -> tuple[list[Step], list[Provenance]]:
        """Repair the round's windows left to right and splice them in.

        A window whose repair climbs back up is tried again from the last
        step before it that made what it climbed for (:meth:`_grown`); if that
        step lies in or before an earlier window, the two are merged and the
        round starts over.
        """
        for _ in range(4):
            try:
                return self._splice(record, steps, labels, goal, start, grow=True)
            except _Regrow as again:
                record.windows, record.repairs = merge(again.windows), []
        return self._splice(record, steps, labels, goal, start, grow=False)

    def _splice(
        self, record: RoundRecord, steps: list[Step], labels: list[Provenance], goal: Goal, start: State, grow: bool
    ) -> tuple[list[Step], list[Provenance]]:
        steps, labels = list(steps), list(labels)
        where = list(range(1, len(steps) + 1))  # each step's number in the round's plan (a new one: its window's)
        shift = 0
        windows = record.windows
        repairer = self.llm_repairer if self.config.repairer is RepairerKind.LLM else self.symbolic
        for number, window in enumerate(windows):
            s, e = window.start + shift, window.end + shift
            following = windows[number + 1].start + shift if number + 1 < len(windows) else len(steps) + 1
            done = repairer.repair(self._job(steps, s, e, following, goal, start))
            grown = self._grown(steps, s, done) if grow else None
            if grown is not None:  # the repair climbed back up for something an earlier step made too few of
                again = repairer.repair(self._job(steps, grown, e, following, goal, start))
                if again.done and len(again.climbed_for) < len(done.climbed_for):
                    origin = where[grown - 1]
                    if number and origin < windows[number - 1].end:
                        raise _Regrow(windows[:number] + [AnchorPair(origin, window.end)] + windows[number + 1 :])
                    done, s = again, grown
                    windows[number] = AnchorPair(origin, window.end)
            record.repairs.append(done)
            old = labels[s - 1 : e - 1]
            new_labels = [
                old[source] if source is not None else Provenance(label)
                for label, source in zip(done.provenance, done.kept_from)
            ]
            steps[s - 1 : e - 1] = list(done.steps)
            labels[s - 1 : e - 1] = new_labels
            where[s - 1 : e - 1] = [windows[number].start] * len(done.steps)
            shift += len(done.steps) - (e - s)
        return steps, labels

    def _job(self, steps: list[Step], s: int, e: int, following: int, goal: Goal, start: State) -> Window:
        trace = rollout(self.validator.sim, steps, start).states()  # the states alone: no verdict needed
        return Window(
            AnchorPair(s, e),
            trace[s - 1],
            tuple(steps[s - 1 : e - 1]),
            tuple(steps[e - 1 : following - 1]),
            goal if following > len(steps) else None,
            goal,
            tuple(steps),
            tuple(steps[following - 1 :]),
        )

    def _grown(self, steps: list[Step], s: int, done: WindowRepair) -> int | None:
        """An earlier start for a window whose repair climbs back up: the last step that made what it climbed for.

        BAR's agent never climbs; a climb in a repair means a step before the
        window made too few (sticks, planks), and only a window that starts
        there can widen it.
        """
        if not done.climbed_for:
            return None
        wanted: set[str] = set()
        for item in done.climbed_for:
            wanted |= set(self.kb.acceptable(item)) | {item}
        for i in range(s - 1, 0, -1):
            step = steps[i - 1]
            if step.item and self.kb.is_known(step.item) and self.kb.resolve(step.item) in wanted:
                return i
        return None
