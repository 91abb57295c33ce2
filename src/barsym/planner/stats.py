"""What a plan cost and what each module did: the typed stats every planner returns.

``PlanResult.stats`` is a :class:`PlanStats` whoever planned: BAR's loop and
the inventory search fill the planner-level counters, and each module that
took part adds its own section (the model's counters, state consistency's
repair, the memory, DEPS' or chain-of-thought's loop). Readers in-process use
the attributes, so a counter's name is written once, as a field here.

Why the sections live in the planner layer: the planner package is the lowest
one every planner shares, and the import layers (tests/test_layers.py) only let
the modules above it import it, not the other way round. The sections are
plain data with no behaviour of their modules, so they sit here beside
:class:`PlanStats`, and the modules that fill them import them.

The JSON is what it was when ``stats`` was a dict (the run files written by
``barsym eval --run`` are read back by resumed runs and by ``barsym report``):
:meth:`PlanStats.to_dict` writes the same keys in the same order, the model's
counters and the memory's flat beside the planner's, and
:meth:`PlanStats.from_dict` reads that back; keys it does not know (from an
older or newer version) are kept in ``extra`` and written out again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

__all__ = ["LLMStats", "MemoryStats", "RepairStats", "DepsSummary", "CotSummary", "BaselineSummary", "PlanStats"]


def _known(cls, data: dict) -> dict:
    """The entries of ``data`` that are fields of ``cls``."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class LLMStats:
    """The model's counters: the one type every model call is counted in (by the gateway, ``reasoning.model_calls``).

    Per plan for an LLM decomposer or forward planner; per scorer, repairer or parse for the step scorer, the
    forward repairer and ``barsym parse``. Every int field but the max is summed.
    """

    goals: int = 0  # goals this decomposer was asked about
    context_answers: int = 0
    graph_forced: int = 0  # answered without a call: the only option there was (the graph's, the repairer's)
    llm_goals: int = 0  # goals put to the model
    llm_calls: int = 0  # real backend calls (retries included)
    reused_replies: int = 0  # identical prompts answered from earlier replies (the plan's; the scorer's cache)
    retries: int = 0  # attempts after a goal's first
    accepted_first_try: int = 0
    accepted_after_feedback: int = 0
    accepted_calls: int = 0  # accepted answers that took a real call (not a reused reply)
    max_accepted_calls_per_goal: int = field(default=0, metadata={"total": max})  # issue 4: at most 1
    rejected: int = 0  # answers the verifier refused
    unreadable: int = 0  # replies that were not a step (a short call's: not a readable answer)
    backend_errors: int = 0
    fallbacks: int = 0  # goals the symbolic decomposer answered (every goal of the plan after a plan-level fallback)
    plan_fallbacks: int = 0  # 1 when the model's whole plan was replaced by the symbolic planner's
    unanswered: int = 0  # llm-only: goals left without a step (unusable replies, dead backend)
    loops_cut: int = 0  # llm-only: goals the model's own answers led back to, left open
    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated_prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    evaluations: int = 0  # model evaluations (batches) per call, prompt included: 1 + reply tokens token by token
    drafted_tokens: int = 0  # reply tokens appended from the grammar's forced text
    prefix: str = ""  # how the few-shot prefix was made ready: disk, evaluated, memory ("" not primed)
    prefix_seconds: float = 0.0
    llm_seconds: float = 0.0  # every call's, failed ones too, and the priming
    reused_seconds: float = 0.0  # what the reused replies took when first asked (the step scorer's cached scores)
    problems: list[str] = field(default_factory=list)  # backend errors, for the report

    #: what each goal of the plan was decided by: counted again when BAR's loop plans the task once more
    #: (without sharing stations, without held materials), so they describe the plan returned, as its step tags do;
    #: calls, tokens and time are what the model spent on every attempt
    DECISIONS = (
        "goals",
        "context_answers",
        "graph_forced",
        "llm_goals",
        "retries",
        "accepted_first_try",
        "accepted_after_feedback",
        "rejected",
        "unreadable",
        "fallbacks",
        "unanswered",
        "loops_cut",
    )

    def restart_decisions(self) -> None:
        """Zero the per-goal decision counters (:data:`DECISIONS`) for another attempt at the same plan."""
        for name in self.DECISIONS:
            setattr(self, name, 0)

    @classmethod
    def summed(cls) -> tuple[str, ...]:
        """The counters an evaluation adds up over its tasks (the ints, less the per-goal maximum)."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.type == "int" and "total" not in f.metadata)

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["llm_seconds"] = round(self.llm_seconds, 3)
        out["prefix_seconds"] = round(self.prefix_seconds, 3)
        out["reused_seconds"] = round(self.reused_seconds, 3)
        out["problems"] = list(dict.fromkeys(self.problems))[:5]
        for name in ("plan_fallbacks", "reused_seconds"):  # written when it happened: earlier stats read back unchanged
            if not getattr(self, name):
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "LLMStats":
        values = _known(cls, data)
        values["problems"] = list(values.get("problems") or [])
        return cls(**values)


@dataclass
class MemoryStats:
    """What the stage memory answered in one plan (written flat as ``memory_*``)."""

    hits: int = 0  # goals answered from memory
    misses: int = 0  # goals passed on to the wrapped decomposer
    stale: int = 0  # remembered answers refused by the verifier (and marked stale)
    spare: int = 0  # goals covered by spare units of the plan itself, passed on without asking the memory
    examples: int = 0  # goals passed on with remembered answers of close goals as few-shot examples

    @property
    def share(self) -> float:
        """The part of the goals asked that the memory answered."""
        asked = self.hits + self.misses
        return round(self.hits / asked, 4) if asked else 0.0

    def to_dict(self) -> dict:
        return {
            "memory_hits": self.hits,
            "memory_misses": self.misses,
            "memory_stale": self.stale,
            "memory_share": self.share,
            "memory_examples": self.examples,
            "memory_spare": self.spare,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "MemoryStats":
        return cls(
            **{
                name: data[f"memory_{name}"]
                for name in ("hits", "misses", "stale", "spare", "examples")
                if f"memory_{name}" in data
            }
        )


@dataclass
class RepairStats:
    """State consistency's counters for one repair (``stats["consistency"]`` in the JSON).

    The ``scoring_*``/``repair_*`` counters are None when that part (the model's
    step scorer, the LLM repairer) was not configured, and are then not written.
    """

    rounds: int = 0
    windows: int = 0
    repaired_steps: int = 0
    kept_steps: int = 0
    unfinished_windows: int = 0
    symbolic_fallbacks: int = 0
    valid_before: bool = True
    valid_after: bool = True
    seconds: float = 0.0
    scoring_llm_calls: int | None = None
    scoring_forced: int | None = None
    repair_llm_calls: int | None = None
    repair_forced: int | None = None
    llm_calls: int = 0  # scoring and repair together, replayed scores included
    evaluated_prompt_tokens: int = 0
    replayed_seconds: float = 0.0  # time the replayed calls took when first made
    step_scores: dict | None = None  # the first round's scores from both scorers, where the model scored

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        for name in ("scoring_llm_calls", "scoring_forced", "repair_llm_calls", "repair_forced", "step_scores"):
            if out[name] is None:
                del out[name]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "RepairStats":
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class DepsSummary:
    """DEPS' loop in ``stats["deps"]``: what ``barsym eval --json`` and the benches read per task."""

    rounds: int  # plans written and executed
    success_round: int | None
    stopped: str
    dropped_rounds: int  # most earlier rounds left out of one prompt
    world: str
    selector: str = "order"

    @classmethod
    def of(cls, trace) -> "DepsSummary":
        """The summary of a :class:`~barsym.reasoning.deps.DepsTrace`."""
        return cls(
            len(trace.rounds),
            trace.success_round,
            trace.stopped.value,
            max((r.dropped_rounds for r in trace.rounds), default=0),
            trace.world,
            trace.selector,
        )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "DepsSummary":
        # records of a version that kept fewer fields read back with these defaults
        values = {"rounds": 0, "success_round": None, "stopped": "unknown", "dropped_rounds": 0, "world": ""}
        return cls(**{**values, **_known(cls, data)})


@dataclass(frozen=True)
class CotSummary:
    """``stats["cot"]``: steps read, how many of the model's inventories were right, lines not read,
    steps folded because they repeated the step before them."""

    steps: int
    inventory_agreement: int
    unreadable_lines: int
    folded_repeats: int = 0

    def to_dict(self) -> dict:
        """``folded_repeats`` only when some were folded, so the stats of runs before the fold read back unchanged."""
        out = dataclasses.asdict(self)
        if not self.folded_repeats:
            del out["folded_repeats"]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "CotSummary":
        return cls(
            **{"steps": 0, "inventory_agreement": 0, "unreadable_lines": 0, "folded_repeats": 0, **_known(cls, data)}
        )


@dataclass(frozen=True)
class BaselineSummary:
    """``stats["baseline"]``: how the loop of reverse-chain, self-refine, tot or plan-and-solve ended.

    ``complete`` is whether the method reached a plan it considers finished (the chain or
    plan ended with ``done``, the feedback said correct, a kept branch ended); ``rounds`` is
    the method's own count (refinement rounds, tree depth, calls to write the plan).
    """

    method: str
    stopped: str
    complete: bool
    rounds: int = 0
    unreadable_lines: int = 0
    folded_repeats: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "BaselineSummary":
        return cls(**{"method": "", "stopped": "unknown", "complete": False, **_known(cls, data)})


@dataclass(frozen=True)
class PlanStats:
    """The stats of one plan: wall time, the planner's counters, and a section per module that took part.

    Frozen: a planner wrapping another returns ``dataclasses.replace(inner,
    ...)`` with its own section added. ``goals`` to ``held_materials_used`` are
    the planners that decompose goals (BAR's loop, the search; None for the
    forward planners). With a model, the JSON's ``goals`` is the model
    section's (the goals the decomposer was asked about), as it always was.
    """

    seconds: float | None = None
    goals: int | None = None  # goal nodes in the tree
    decompositions: int | None = None  # goals a step answered
    shared_stations: bool | None = None  # BAR's loop: the attempt that let goals share planned stations
    attempts: int | None = None
    held_materials_used: bool | None = None
    #: answers the loop verified itself: those no decomposer had verified where it made them (a symbolic or
    #: fallback answer, one widened to a spare batch); with the LLM's answers verified as they arrive, each
    #: answer is checked once -- by the decomposer (its accepted and rejected counts) or here
    loop_checks: int | None = None
    llm: LLMStats | None = None
    llm_mode: str | None = None  # graph or vocab
    llm_verified: bool | None = None  # the model's answers checked by the verifier (bar) or not
    plan_fallback: str | None = None  # why bar planned the whole task symbolically, if it did
    backend_down: str | None = None  # the backend failed for good during this plan
    deps: DepsSummary | None = None
    cot: CotSummary | None = None
    baseline: BaselineSummary | None = None
    consistency: RepairStats | None = None
    memory: MemoryStats | None = None
    extra: dict = field(default_factory=dict)  # keys read from a file that this version does not know

    @property
    def decomposes(self) -> bool:
        """A planner that decomposed goals (BAR's loop, the search), not one that wrote the plan forward."""
        return self.decompositions is not None

    @property
    def model(self) -> LLMStats:
        """The model's counters, zeros for a planner without one."""
        return self.llm if self.llm is not None else LLMStats()

    def counters(self) -> dict[str, int]:
        """The model's summed counters for this plan (zeros without a model; ``goals`` the tree's then)."""
        if self.llm is not None:
            return {name: getattr(self.llm, name) for name in LLMStats.summed()}
        return {name: (self.goals or 0) if name == "goals" else 0 for name in LLMStats.summed()}

    def to_dict(self) -> dict:
        """The JSON every command and run file writes (same keys, order and values as before it was typed)."""
        out: dict = {}
        if self.decomposes:
            out.update(goals=self.goals, decompositions=self.decompositions)
            if self.shared_stations is not None:
                out["shared_stations"] = self.shared_stations
            if self.attempts is not None:
                out["attempts"] = self.attempts
            if self.seconds is not None:
                out["seconds"] = self.seconds
            if self.held_materials_used is not None:
                out["held_materials_used"] = self.held_materials_used
            if self.loop_checks is not None:
                out["loop_checks"] = self.loop_checks
        if self.llm is not None:
            out.update(self.llm.to_dict())
            if self.decomposes:  # BAR's loop with a model: whether the plan-level net caught it
                out["plan_fallback"] = self.plan_fallback
        if self.llm_mode is not None:
            out["llm_mode"] = self.llm_mode
        if self.llm_verified is not None:
            out["llm_verified"] = self.llm_verified
        if self.seconds is not None:
            out["seconds"] = self.seconds  # where a decomposing planner put it already, else here
        if self.backend_down:
            out["backend_down"] = self.backend_down
        for name in ("deps", "cot", "baseline", "consistency"):
            section = getattr(self, name)
            if section is not None:
                out[name] = section.to_dict()
        if self.memory is not None:
            out.update(self.memory.to_dict())
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: dict | None) -> "PlanStats":
        """The stats a record's ``stats`` describes (an eval run file, ``eval --json``, ``plan --json``)."""
        data = dict(data or {})
        values: dict = {"seconds": data.pop("seconds", None)}
        if "decompositions" in data:
            for name in (
                "goals",
                "decompositions",
                "shared_stations",
                "attempts",
                "held_materials_used",
                "loop_checks",
            ):
                values[name] = data.get(name)
            data.pop("decompositions")
            for name in ("shared_stations", "attempts", "held_materials_used", "loop_checks"):
                data.pop(name, None)
            if "llm_calls" not in data:
                data.pop("goals", None)
        if "llm_calls" in data:
            values["llm"] = LLMStats.from_dict(data)
            for f in dataclasses.fields(LLMStats):
                data.pop(f.name, None)
        for name in ("llm_mode", "llm_verified", "plan_fallback", "backend_down"):
            values[name] = data.pop(name, None)
        for name, section in (
            ("deps", DepsSummary),
            ("cot", CotSummary),
            ("baseline", BaselineSummary),
            ("consistency", RepairStats),
        ):
            if isinstance(data.get(name), dict):
                values[name] = section.from_dict(data.pop(name))
        if "memory_hits" in data:
            values["memory"] = MemoryStats.from_dict(data)
            for key in MemoryStats().to_dict():
                data.pop(key, None)
        return cls(**values, extra=data)
