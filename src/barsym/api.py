"""barsym's public Python API: plan, validate, execute and repair in one call each.

Before this module a script needed six submodules (the knowledge base
loader, the planner registry, the validator, the worlds, the consistency
module, the plan reader) and their wiring. These functions do that wiring
once, the way the commands do it, and return the typed results the commands
print: :class:`Planned`, :class:`~barsym.validation.ValidationResult`,
:class:`~barsym.sim.execution.Execution`, :class:`~barsym.consistency.RepairResult`.

Plans may be given as a :class:`~barsym.model.Plan`, a sequence of
:class:`~barsym.model.Step` or of BAR records (``{"type": "craft",
"obj_name": "stick", "obj_num": 4}``), BAR JSONL text, or the path of a
``.jsonl`` file. Items may be named as the game or BAR does (``planks``,
``oak_planks``); starts are an inventory mapping and a layer. The knowledge
base is loaded once per process and shared.

``barsym/__init__.py`` imports this module only when one of its names is
first used, so ``import barsym`` stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .bar_io import PlanFormatError, parse_plan, read_plan, step_from_record, step_from_text
from .kb import KnowledgeBase, load_kb
from .model import MAX_COUNT, Goal, Plan, Step
from .planner import PlanningError
from .planner.result import PlanResult
from .planner.stats import PlanStats
from .sim import State, StepUse
from .validation import ValidationResult, Validator, Verdict

__all__ = ["Planned", "PlanLike", "execute", "knowledge_base", "plan", "repair", "validate"]

PlanLike = Plan | Iterable[Step] | Iterable[Mapping] | str | os.PathLike
_kbs: dict[str, KnowledgeBase] = {}


def knowledge_base(mc_version: str = "1.16.5") -> KnowledgeBase:
    """The knowledge base for a Minecraft version, loaded once per process."""
    if mc_version not in _kbs:
        _kbs[mc_version] = load_kb(mc_version)
    return _kbs[mc_version]


@dataclass(frozen=True)
class Planned:
    """A plan for a goal, the validator's verdict on it, who answered each step, and what it cost."""

    goal: Goal
    plan: Plan
    verdict: Verdict
    provenance: tuple[tuple[str, ...], ...]  # per step: llm, symbolic-fallback, graph, context, ...
    planner: str
    stats: PlanStats = field(default_factory=PlanStats)  # ``stats.to_dict()`` is barsym plan --json's
    result: PlanResult | None = field(default=None, repr=False, compare=False)  # the tree and every detail
    start: State | None = None  # the start state it was planned from (None: empty, on the surface)
    rules: str | None = None  # the rule profile it was planned under (None: the knowledge base's default)
    mc_version: str = "1.16.5"  # the Minecraft version it was planned for

    def actions(self) -> dict:
        """The plan as a bot runs it: each step in the version's item and block ids (``plan --format actions``)."""
        from .sim.bot_actions import bot_actions

        return bot_actions(knowledge_base(self.mc_version), self.plan.steps, self.start, self.rules)

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.plan.steps

    @property
    def valid(self) -> bool:
        return self.verdict is not Verdict.INVALID

    def uses(self) -> tuple[StepUse | None, ...]:
        """Per step, what it used as played from the start: a craft's or smelt's recipe (``recipe``, one
        batch's ingredients ``per_batch``, ``batches``) and what it ``consumed`` and ``made``
        (:class:`barsym.sim.StepUse`); what a replay in another crafting environment must place."""
        found = self.result.validation.uses() if self.result is not None else []
        if not found and self.plan.steps:  # read back from JSON: play it again
            found = validate(self).uses()
        return tuple(found)

    def records(self) -> list[dict]:
        """The plan as BAR's JSONL records."""
        from .bar_io import step_to_record

        return [step_to_record(s) for s in self.plan.steps]

    def __str__(self) -> str:
        return "\n".join(f"{i}. {s}" for i, s in enumerate(self.plan.steps, start=1))

    def to_dict(self) -> dict:
        """Plain JSON data: goal, steps (BAR's records), verdict, provenance, planner, stats, start, rules.

        The decomposition tree (``result``) is not written; :meth:`from_dict` gives a Planned without it.
        """
        return {
            "goal": {"item": self.goal.item, "count": self.goal.count},
            "steps": self.records(),
            "uses": [None if use is None else use.to_dict() for use in self.uses()],
            "verdict": self.verdict.value,
            "provenance": [list(p) for p in self.provenance],
            "planner": self.planner,
            "stats": self.stats.to_dict(),
            "start": None if self.start is None else self.start.to_dict(),
            "rules": self.rules,
            "source": self.plan.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "Planned":
        """The Planned :meth:`to_dict` wrote."""
        steps = tuple(step_from_record(dict(r), f"step {i}") for i, r in enumerate(data["steps"], start=1))
        start = data.get("start")
        return cls(
            Goal(**data["goal"]),
            Plan(steps=steps, source=data.get("source")),
            Verdict(data["verdict"]),
            tuple(tuple(p) for p in data.get("provenance", ())),
            data["planner"],
            PlanStats.from_dict(data.get("stats")),
            None,
            None if start is None else State.from_dict(start),
            data.get("rules"),
        )


def whole_argument(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` if it is a whole number in range; else TypeError (not a number) or ValueError naming the argument.

    Why here: a script's ``layer="2"`` or ``count=0`` otherwise surfaced deep inside as a TypeError
    comparing str and int, an IndexError, or pydantic's wording about a field the caller never named.
    """
    span = f"from {low} to {high}" if high is not None else f"at least {low}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number {span}, got {value!r}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {span}, got {value}")
    return value


def _start(kb: KnowledgeBase, start: Mapping[str, int] | State | None, layer: int) -> State | None:
    if isinstance(start, State):
        return start
    whole_argument("layer", layer, 0, kb.deepest_layer)
    if start is not None and not isinstance(start, Mapping):
        raise TypeError(f"start must be a mapping of item names to counts, got {type(start).__name__}")
    if not start and not layer:
        return None
    inventory = {}
    for name, units in (start or {}).items():
        if not isinstance(name, str):
            raise TypeError(f"start: item names must be strings, got {name!r}")
        inventory[kb.resolve(name)] = whole_argument(f"start[{name!r}]", units, 0, MAX_COUNT)
    return State.start(inventory, layer)


def _goal(kb: KnowledgeBase, item: str | Goal | None, count: int = 1) -> Goal | None:
    if item is None or isinstance(item, Goal):
        return item
    if not isinstance(item, str):
        raise TypeError(f"goal must be an item name or a Goal, got {type(item).__name__}")
    return Goal(item=kb.resolve(item), count=whole_argument("count", count, 1, MAX_COUNT))


def _plan_goal(
    kb: KnowledgeBase, plan: Plan, goal: str | Goal | None, count: int | None, goal_count: int | None
) -> Goal | None:
    """The goal a plan is held to, as ``barsym validate`` reads ``--goal ITEM --goal-count N``.

    ``goal_count`` is the command line's name (``--goal-count``) and ``count`` the API's first one; either
    may be given (both, only when they agree). Without ``goal`` the plan's last step's item is held to
    ``count`` of it, or to what that step asks for (:meth:`~barsym.model.Plan.default_goal`).
    """
    if count is not None and goal_count is not None and count != goal_count:
        raise TypeError(f"give count or goal_count (the same thing), not both: got {count!r} and {goal_count!r}")
    count = goal_count if count is None else count
    if goal is None:
        default = plan.default_goal()
        if default is None or count is None:
            return default
        return Goal(item=default.item, count=whole_argument("count", count, 1, MAX_COUNT))
    return _goal(kb, goal, 1 if count is None else count)


def _step(value: object, number: int) -> Step:
    """One step of a plan given as a sequence: a Step, a BAR record, or a line of barsym's notation."""
    if isinstance(value, Step):
        return value
    if isinstance(value, str):
        try:
            return step_from_text(value)
        except ValueError as exc:
            raise PlanFormatError(f"step {number}", f"{exc} (expected a step such as `mine 4 logs`)") from None
    if isinstance(value, Mapping):
        return step_from_record(dict(value), f"step {number}")
    raise TypeError(f"step {number} must be a Step, a BAR record or a step such as 'mine 4 logs', got {value!r}")


def as_plan(steps: PlanLike) -> Plan:
    """Any accepted plan form as a :class:`Plan` (``PlanFormatError`` says what is wrong with it)."""
    if isinstance(steps, Plan):
        return steps
    if isinstance(steps, Planned):
        return steps.plan
    if isinstance(steps, os.PathLike):
        return read_plan(steps)
    if isinstance(steps, str):
        return (
            read_plan(steps)
            if "\n" not in steps and Path(steps).suffix in (".jsonl", ".jsonlines")
            else parse_plan(steps)
        )
    if not isinstance(steps, Iterable):
        raise TypeError(f"steps must be a Plan, a sequence of steps, plan text or a path, got {type(steps).__name__}")
    return Plan(steps=tuple(_step(s, i) for i, s in enumerate(steps, start=1)))


def plan(
    item: str | Goal,
    count: int = 1,
    *,
    planner: str = "bar",
    start: Mapping[str, int] | State | None = None,
    layer: int = 0,
    rules: str | None = None,
    mc_version: str = "1.16.5",
    **options,
) -> Planned:
    """Plan ``count`` of ``item`` with a planner (``bar``, ``llm-only``, ``bar-sc``, ``symbolic``, ...).

    ``options`` are the planner's (``model``, ``llm_url`` with ``api_key``/``llm_model``, ``seed``, ``backend``, ...).
    Raises :class:`~barsym.planner.PlanningError` when no plan can be made (``kind`` says why).
    """
    kb = knowledge_base(mc_version)
    if item is None:
        raise TypeError("plan() needs the item to plan for, e.g. plan('stick', 4)")
    goal = _goal(kb, item, count)
    from .planner.registry import make_planner, planner_names  # the options become one typed spec, built in one place

    if not isinstance(planner, str):
        raise TypeError(f"planner must be a planner's name, got {type(planner).__name__}")
    if planner not in planner_names():
        raise ValueError(f"planner must be one of {', '.join(planner_names())}, got {planner[:60]!r}")

    if "backend" in options and options["backend"] is None:  # None is no backend of the caller's: the default one
        del options["backend"]
    chosen = make_planner(planner, kb, rules=rules, **options)
    state = _start(kb, start, layer)
    result = chosen.plan(goal, state) if state is not None else chosen.plan(goal)
    provenance = tuple(tuple(result.provenance(i)) for i in range(len(result.plan)))
    return Planned(
        goal,
        result.plan,
        result.validation.verdict,
        provenance,
        result.planner,
        result.stats,
        result,
        state,
        rules,
        mc_version,
    )


def validate(
    steps: PlanLike | Planned,
    goal: str | Goal | None = None,
    count: int | None = None,
    *,
    goal_count: int | None = None,
    start: Mapping[str, int] | State | None = None,
    layer: int = 0,
    rules: str | None = None,
    mc_version: str = "1.16.5",
) -> ValidationResult:
    """Play a plan forward: verdict (valid, valid with waste, invalid) and every failing step.

    ``count`` (or ``goal_count``, the command line's ``--goal-count``) of ``goal``; without ``goal``, of the plan's
    last step's item. A :class:`Planned` brings its own goal, start state and rule profile (each used unless given
    here).
    """
    kb = knowledge_base(mc_version)
    if isinstance(steps, Planned):
        goal = steps.goal if goal is None else goal
        rules = steps.rules if rules is None else rules
        if start is None and not layer:
            start = steps.start
        steps = steps.plan
    chosen = as_plan(steps)
    target = _plan_goal(kb, chosen, goal, count, goal_count)
    return Validator(kb, rules).validate(chosen, goal=target, start=_start(kb, start, layer))


def execute(
    steps: PlanLike,
    goal: str | Goal | None = None,
    count: int | None = None,
    *,
    goal_count: int | None = None,
    world: str = "stochastic",
    runs: int = 100,
    seed: int = 0,
    budget: int | None = None,
    start: Mapping[str, int] | State | None = None,
    layer: int = 0,
    rules: str | None = None,
    mc_version: str = "1.16.5",
):
    """Run a plan ``runs`` times in an execution world (``deterministic`` or ``stochastic``); an Execution.

    The goal is read as :func:`validate` reads it (``count`` or ``goal_count``). ``runs`` is from 1 to
    100,000 (``barsym execute --runs``' bound), ``seed`` from 0 to 2**64 - 1, ``budget`` (ticks) from 1 to
    1,000,000: TypeError or ValueError naming the argument otherwise."""
    from .sim.execution import run
    from .sim.options import MAX_BUDGET, MAX_RUNS
    from .sim.stochastic import StochasticWorld
    from .sim.world import SEED_MASK, DeterministicWorld

    worlds = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}
    if not isinstance(world, str) or world not in worlds:
        raise ValueError(f"world must be one of {', '.join(worlds)}, got {world!r}")
    whole_argument("runs", runs, 1, MAX_RUNS)  # barsym execute --runs' bound: 10**12 runs would never end
    whole_argument("seed", seed, 0, SEED_MASK)
    if budget is not None:
        whole_argument("budget", budget, 1, MAX_BUDGET)
    kb = knowledge_base(mc_version)
    chosen = as_plan(steps)
    target = _plan_goal(kb, chosen, goal, count, goal_count)
    return run(
        chosen,
        worlds[world](kb, rules),
        runs,
        seed,
        goal=target,
        start=_start(kb, start, layer) or State(),
        budget=budget,
    )


def repair(
    steps: PlanLike,
    goal: str | Goal | None = None,
    count: int | None = None,
    *,
    goal_count: int | None = None,
    start: Mapping[str, int] | State | None = None,
    layer: int = 0,
    anchors: str = "step-scoring",
    scores: str = "simulator",
    repairer: str = "symbolic",
    needs: str = "graph",
    t: int = 5,
    k: int = 3,
    rounds: int = 3,
    backend=None,
    rules: str | None = None,
    mc_version: str = "1.16.5",
):
    """BAR's state consistency: the plan repaired forward between anchors; a RepairResult (the goal read as
    :func:`validate` reads it: ``count`` or ``goal_count``).

    LLM scores (``scores="llm"`` or ``"both"``), ``repairer="llm"`` and ``needs="model"`` (what a window misses
    planned by the model's own decomposition, not the graph's) need ``backend``
    (an :class:`~barsym.llm.LLMBackend`, e.g. ``barsym.llm.make_backend()``).
    """
    from .consistency import ConsistencyConfig
    from .reasoning import model_consistency

    kb = knowledge_base(mc_version)
    config = ConsistencyConfig(anchors=anchors, scores=scores, repairer=repairer, needs=needs, t=t, k=k, rounds=rounds)
    engine = model_consistency(kb, config, rules=rules, backend=backend)
    chosen = as_plan(steps)
    target = _plan_goal(kb, chosen, goal, count, goal_count)
    return engine.repair(chosen, goal=target, start=_start(kb, start, layer))


# re-exported for ``from barsym.api import PlanningError``
PlanningError = PlanningError
