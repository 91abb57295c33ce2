"""Plain-data task specs, and the one function every executor runs on them.

A serial run, a process pool, Ray workers and a resumed run must give the
same result for the same task. So all of them go through :func:`run_task`:
it takes a :class:`RunSpec` and a task as JSON-ready data (no planner objects,
no callbacks), builds -- once per process -- the knowledge base, the planner
and the execution world the spec names, plans the task and scores it against
its expert plan (:func:`~.runner.plan_task`, as the serial :func:`~.runner.evaluate`
does), optionally executes it, and returns one JSON-ready
**record**. The record is what a ``--run`` file keeps, what workers send back,
and what :func:`outcome_from_record` turns into the :class:`TaskOutcome`
the reports read. A worker never needs anything but the spec to rebuild the
planner, so any process on any machine can run any task.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field

from ..bar_io import step_to_record
from ..kb import KnowledgeBase, load_kb
from ..model import Goal, Plan
from ..planner import PlanningError
from ..planner.registry import build
from ..planner.result import PlanResult
from ..planner.stats import PlanStats
from ..sim import State
from ..sim.options import ExecutionOptions
from ..validation import Validator
from .dataset import Task
from .runner import TaskOutcome, plan_task, score_against_expert, score_record

RECORD_VERSION = 1


@dataclass(frozen=True)
class WorldSpec:
    """``--world NAME --runs N --world-seed S [--budget B]`` as data."""

    name: str
    runs: int
    seed: int = 0
    budget: int | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "runs": self.runs, "seed": self.seed, "budget": self.budget}

    @classmethod
    def of(cls, options: ExecutionOptions) -> "WorldSpec | None":
        """The execution world the options name, as data; None when they name none (no execution)."""
        if options.world is None:
            return None
        return cls(options.world, options.episodes, options.world_seed, options.budget)


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to rebuild a run's planner in any process.

    ``options`` are :func:`make_planner`'s keyword options, plain values only;
    ``backend`` optionally names a ``module:function`` that returns an LLM
    backend (a scripted model for tests, say), called in each worker.
    """

    planner: str
    options: dict = field(default_factory=dict)
    rules: str | None = None
    mc_version: str = "1.16.5"
    world: WorldSpec | None = None
    backend: str | None = None

    def to_dict(self) -> dict:
        return {
            "planner": self.planner,
            "options": dict(sorted(self.options.items())),
            "rules": self.rules,
            "mc_version": self.mc_version,
            "world": self.world.to_dict() if self.world else None,
            "backend": self.backend,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "RunSpec":
        world = data.get("world")
        return cls(
            data["planner"],
            dict(data.get("options") or {}),
            data.get("rules"),
            data.get("mc_version", "1.16.5"),
            WorldSpec(**world) if world else None,
            data.get("backend"),
        )

    def planner_spec(self):
        """The options as the planner reads them: a :class:`~barsym.reasoning.spec.PlannerSpec` (a run file
        written before the typed spec has the same keys)."""
        from ..reasoning.spec import PlannerSpec

        return PlannerSpec.of(self.planner, self.options)

    @property
    def key(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def task_to_data(task: Task) -> dict:
    """A task as JSON-ready data (goal, expert plan as BAR records, start, labels)."""
    return {
        "name": task.name,
        "group": task.group,
        "goal": {"item": task.goal.item, "count": task.goal.count},
        "reference": None if task.reference is None else [step_to_record(s) for s in task.reference.steps],
        "asked": task.asked,
        "start": None if task.start is None else task.start.to_dict(),
        "rules": task.rules,
        "label_possible": task.label_possible,
        "optimal_length": task.optimal_length,
        "optimal_path": list(task.optimal_path),
    }


def task_from_data(data: dict) -> Task:
    from ..bar_io import step_from_record

    reference = data.get("reference")
    plan = (
        None
        if reference is None
        else Plan(steps=tuple(step_from_record(r, data["name"]) for r in reference), source=data["name"])
    )
    start = data.get("start")
    return Task(
        data["name"],
        data["group"],
        Goal(item=data["goal"]["item"], count=data["goal"]["count"]),
        plan,
        data.get("asked", ""),
        None if start is None else State.start(start["inventory"], start["layer"]),
        data.get("rules"),
        data.get("label_possible"),
        data.get("optimal_length"),
        tuple(data.get("optimal_path") or ()),
    )


class _Process:
    """What one process keeps between tasks: knowledge bases, planners, validators, worlds."""

    kbs: dict[str, KnowledgeBase] = {}
    planners: dict[str, object] = {}


def _kb(version: str) -> KnowledgeBase:
    if version not in _Process.kbs:
        _Process.kbs[version] = load_kb(version)
    return _Process.kbs[version]


def planner_from_run(spec: RunSpec, progress=None, command: str = "", api_key: str | None = None):
    """A new planner as the run spec says (``progress`` only where it is drawn: in the parent process), made by the
    one factory (:func:`barsym.planner.registry.build`) from the typed spec its plain options describe;
    ``spec.backend`` (a test's fake model) is called here, in the process that plans."""
    typed = spec.planner_spec()
    if api_key:
        typed = typed.model_copy(update={"llm": typed.llm.model_copy(update={"api_key": api_key})})
    backend = None
    if spec.backend:
        module, _, name = spec.backend.partition(":")
        backend = getattr(importlib.import_module(module), name)()
    command = command or f"barsym eval --planner {spec.planner}"
    typed = typed.with_context(progress=progress, command=command, rules=spec.rules, backend=backend)
    return build(_kb(spec.mc_version), typed)


def planner_for(spec: RunSpec, progress=None, api_key: str | None = None):
    """The spec's planner, built once per worker process and kept for its next tasks."""
    planner = _Process.planners.get(spec.key)
    if planner is None:
        planner = _Process.planners[spec.key] = planner_from_run(spec, progress, api_key=api_key)
    return planner


def forget_planners() -> None:
    """Drop this process's planners (tests that build several runs in one process)."""
    _Process.planners.clear()


def run_task(spec: RunSpec, task_data: dict, planner=None, api_key: str | None = None) -> dict:
    """Plan, score and (with a world) execute one task; the record of it.

    ``planner``: the caller's own (the serial run's, which draws progress); else this process's.
    """
    kb = _kb(spec.mc_version)
    planner = planner if planner is not None else planner_for(spec, api_key=api_key)
    task = task_from_data(task_data)
    outcome = plan_task(task, planner, Validator(kb, spec.rules))
    record = {"kind": "task", "version": RECORD_VERSION, "key": task.key, **outcome.to_dict()}
    if "hash" in task_data:  # the content hash of the task it was made for: a resume checks it
        record["task_hash"] = task_data["hash"]
    if outcome.score is not None:
        record["score"] = score_record(outcome.score)
    if spec.world is not None:
        from .execution import execute_task

        record["execution"] = execute_task(kb, spec, task, outcome.plan)
    return record


def outcome_from_record(record: dict, task: Task, kb: KnowledgeBase, rules=None) -> TaskOutcome:
    """The outcome a record describes, rebuilt for the reports (plan re-validated; no decomposition tree)."""
    from ..bar_io import step_from_record

    outcome = TaskOutcome(task, seconds=float(record.get("seconds", 0.0)))
    validator = Validator(kb, rules)
    if record.get("planned"):
        plan = Plan(steps=tuple(step_from_record(r, task.key) for r in record["plan"]), source=task.key)
        validation = validator.validate(plan, goal=task.goal, start=task.start)
        stats = PlanStats.from_dict(record.get("stats"))
        outcome.result = PlanResult(
            task.goal,
            plan,
            [],
            [[] for _ in plan.steps],
            [],
            (),
            validation,
            str(stats.extra.get("planner", "")),
            "",
            stats,
        )
    else:
        outcome.error = PlanningError(record["error_kind"], record["error"])
    score_against_expert(outcome, validator)  # the score is recomputed from the plan, never taken from the record
    if outcome.score is not None:
        record["score"] = score_record(outcome.score)
    return outcome
