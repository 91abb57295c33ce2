"""What a plan cost and what each module did: the typed stats every planner returns.

``PlanResult.stats`` is a :class:`PlanStats` whoever planned: BAR's loop and
the inventory search fill the planner-level counters, the model's counters
are :class:`LLMStats`, and each module above the planner that took part adds
its own section. Readers in-process use the attributes and
:meth:`PlanStats.section`, so a counter's name is written once, as a field.

The sections register themselves: a package whose module adds one to the
stats defines its class (plain data with ``to_dict``/``from_dict``, and
``lines()`` if a plan's text should show it) and calls
:func:`register_section` when that module is imported. This package, the
lowest one every planner shares, names none of them (the import layers,
tests/test_layers.py, let only the packages above import it), and
:class:`PlanStats` holds them by name.

The JSON is what it was when ``stats`` was a dict (the run files written by
``barsym eval --run`` are read back by resumed runs and by ``barsym report``):
:meth:`PlanStats.to_dict` writes the same keys in the same order, the model's
counters and the flat sections' beside the planner's, and
:meth:`PlanStats.from_dict` reads that back; keys it does not know (from an
older or newer version, or a section whose package is not loaded) are kept in
``extra`` and written out again, and :meth:`PlanStats.section` still reads a
section kept there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

__all__ = ["LLMStats", "PlanStats", "Section", "known_fields", "register_section"]


def known_fields(cls, data: Mapping) -> dict:
    """The entries of ``data`` that are fields of ``cls`` (for a section's ``from_dict``)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in data.items() if k in names}


_known = known_fields


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


class Section(Protocol):
    """What a module adds to a plan's stats: plain data that writes and reads its JSON (``from_dict`` a classmethod,
    and, optionally, ``lines() -> list[str]``, its lines in the plan's text)."""

    def to_dict(self) -> dict: ...


S = TypeVar("S")


@dataclass(frozen=True)
class _Kind:
    """A registered section: its name (its key in the JSON), class, place, and whether it is written flat."""

    name: str
    cls: type
    order: int
    flat: bool
    keys: tuple[str, ...] = ()  # a flat section's keys; the first marks it present

    def present(self, data: Mapping) -> bool:
        return self.keys[0] in data if self.flat else isinstance(data.get(self.name), dict)

    def read(self, data: Mapping):
        return self.cls.from_dict(dict(data) if self.flat else data[self.name])  # type: ignore[attr-defined]


_SECTIONS: dict[str, _Kind] = {}
_NAMES: dict[type, str] = {}


def register_section(name: str, cls: type, *, order: int, flat: bool = False) -> None:
    """Let :class:`PlanStats` hold sections of ``cls`` under ``name`` (called by the module defining ``cls``).

    ``to_dict()`` is written under ``name`` (``stats["deps"]``), or, with ``flat``, its keys beside the
    planner's (``name_this``, ``name_that``..., whose first key marks it present; ``cls()`` must build one).
    ``order``: where the section stands, lower first, among the nested ones in the JSON (the flat ones follow
    them) and among the lines of the plan's text.
    """
    keys = tuple(cls().to_dict()) if flat else ()
    _SECTIONS[name] = _Kind(name, cls, order, flat, keys)
    _NAMES[cls] = name


def _ordered(names) -> list[_Kind]:
    return sorted((_SECTIONS[n] for n in names), key=lambda kind: kind.order)


@dataclass(frozen=True)
class PlanStats:
    """The stats of one plan: wall time, the planner's counters, and a section per module that took part.

    Frozen: a planner wrapping another returns ``inner.with_section(...)`` (or
    ``dataclasses.replace(inner, ...)``) with its own section added. ``goals`` to ``held_materials_used`` are
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
    #: the modules' sections by their registered names (:func:`register_section`): read with :meth:`section`
    sections: dict[str, Any] = field(default_factory=dict)
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

    def section(self, cls: type[S]) -> S | None:
        """The section of ``cls`` (registered by its module), or None if that module did not take part.

        A section read from a file before its module was loaded sits in :attr:`extra` as plain data; it is
        read from there.
        """
        kind = _SECTIONS[_NAMES[cls]]
        found = self.sections.get(kind.name)
        if found is None and kind.present(self.extra):
            found = kind.read(self.extra)
        return cast("S | None", found)

    def with_section(self, section: Section) -> "PlanStats":
        """These stats with ``section`` added (or replacing the one of its kind)."""
        kind = _SECTIONS[_NAMES[type(section)]]
        gone = kind.keys if kind.flat else (kind.name,)
        extra = {k: v for k, v in self.extra.items() if k not in gone}
        return dataclasses.replace(self, sections={**self.sections, kind.name: section}, extra=extra)

    def section_lines(self) -> list[str]:
        """The sections' lines in a plan's text, in their registered order (nothing for a plan without them)."""
        lines: list[str] = []
        for kind in _ordered(self.sections):
            text = getattr(self.sections[kind.name], "lines", None)
            if text is not None:
                lines += text()
        return lines

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
        kinds = _ordered(self.sections)
        for kind in kinds:  # the nested sections, then the flat ones
            if not kind.flat:
                out[kind.name] = self.sections[kind.name].to_dict()
        for kind in kinds:
            if kind.flat:
                out.update(self.sections[kind.name].to_dict())
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
        sections = {}
        for kind in _ordered(_SECTIONS):  # those registered; any other stays in extra as it was read
            if kind.present(data):
                sections[kind.name] = kind.read(data)
                for key in kind.keys if kind.flat else (kind.name,):
                    data.pop(key, None)
        return cls(**values, sections=sections, extra=data)
