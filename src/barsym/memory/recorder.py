"""Writing a plan into the memory: its decomposition tree and how the plan executed.

Why the recorder needs the memory decomposer: the context an answer depends on
(tools, stations and layer at hand) is only known while planning, so the
:class:`~barsym.memory.decomposer.MemoryDecomposer` notes it per answer and the
recorder joins those notes with the finished tree. Answers that used fuel
already budgeted by earlier goals (``fuel_credit``) are not recorded: they are
right only inside the plan that budgeted the fuel. Plan-level fallbacks (the
tree of a symbolic re-plan) went around the memory decomposer, have no noted
context, and are not recorded either.
"""

from __future__ import annotations

from ..planner.result import PlanResult
from .decomposer import MemoryDecomposer
from .store import DecompositionRecord, MemoryFileError, MemoryStore


def records(result: PlanResult, memory: MemoryDecomposer) -> list[DecompositionRecord]:
    """The recordable decompositions of ``result``'s tree, in tree order."""
    out = []
    for node in result.nodes:
        d = node.decomposition
        if d is None or d.fuel_credit:
            continue
        context = memory.context_of(d)
        if context is None:
            continue
        out.append(
            DecompositionRecord(
                node.goal.item,
                node.goal.count,
                context,
                d.step.model_dump(mode="json", exclude_none=True),
                [g.model_dump(mode="json") for g in d.subgoals],
                d.yields if d.yields is not None and d.yields != d.step.count else None,
                d.provenance,
            )
        )
    return out


def record(
    store: MemoryStore,
    task: str,
    result: PlanResult,
    memory: MemoryDecomposer,
    executions: list[tuple[str, int, int, int]] = (),
) -> int:
    """Store the plan, its decompositions and its executions (world, seed, runs, successes) in one transaction."""
    return store.record_plan(
        task,
        result.planner,
        (result.goal.item, result.goal.count),
        [str(step) for step in result.plan.steps],
        records(result, memory),
        list(executions),
    )


class TaskRecorder:
    """Records an evaluation's plans as they finish, and their executions once they have run.

    Why two steps: a memory decomposer forgets its noted contexts when the next
    plan starts, so each plan is written right after it is made; ``barsym
    eval`` executes all plans only at the end, so the executions are added to
    the plans afterwards (each write is its own transaction; a plan without
    executions yet has no runs and is never preferred by a reader).

    Why a write that fails does not stop the evaluation: the memory is a side
    product, the evaluation's results are the work. A memory another writer
    holds past the busy timeout, or a full disk, ends the recording (``failure``
    says why, ``missed`` counts the plans not recorded) and the run goes on, so
    its report, ``--json`` and ``--run`` files are still written.
    """

    def __init__(self, store: MemoryStore, memory: MemoryDecomposer):
        self.store, self.memory = store, memory
        self.plan_ids: dict[str, int] = {}  # task key -> plan id
        self.failure: str | None = None
        self.missed = 0

    def planned(self, task: str, result: PlanResult) -> int | None:
        if self.failure is None:
            try:
                self.plan_ids[task] = record(self.store, task, result, self.memory)
                return self.plan_ids[task]
            except MemoryFileError as exc:
                self.failure = str(exc)
        self.missed += 1
        return None

    def executed(self, task: str, world: str, seed: int, runs: int, successes: int) -> bool:
        """Credit the task's recorded plan with its runs; False if the task was not recorded (or cannot be now)."""
        plan_id = self.plan_ids.get(task)
        if plan_id is None or self.failure is not None:
            return False
        try:
            self.store.attach_executions(plan_id, [(world, seed, runs, successes)])
        except MemoryFileError as exc:
            self.failure = str(exc)
            return False
        return True

    def credit(self, executed: dict | None) -> str:
        """Credit each recorded plan with its runs from an evaluation's execution report (``report["execution"]``),
        with the seed the report gave that task; what was recorded, in a line."""
        for key, task in (executed or {}).get("tasks", {}).items():
            ran = task["planner"]
            if ran is not None:
                self.executed(key, executed["world"], ran.get("seed", executed["seed"]), ran["runs"], ran["successes"])
        runs = f" with {executed['runs']} {executed['world']} run(s) each" if executed else ""
        return f"recorded {len(self.plan_ids)} plan(s){runs} into {self.store.path}"


def credit_runs(store: MemoryStore, plan, world: str, seed: int, runs: int, successes: int) -> bool:
    """Add runs to the plan in memory with the same steps (``barsym plan --record`` wrote it); False if none has."""
    plan_id = store.plan_with_steps([str(step) for step in plan.steps])
    if plan_id is not None:
        store.attach_executions(plan_id, [(world, seed, runs, successes)])
    return plan_id is not None


class RecordingPlanner:
    """A planner whose every plan is written to the memory as soon as it is made, for the task named in ``task``.

    Right away, because the memory decomposer forgets the contexts it noted
    when the next plan starts; the executions are credited at the end
    (:meth:`TaskRecorder.credit`). Everything else is the wrapped planner's.
    """

    def __init__(self, planner, recorder: TaskRecorder):
        self.inner, self.recorder = planner, recorder
        self.task: str | None = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def plan(self, goal, start=None):
        result = self.inner.plan(goal, start)
        if self.task is not None:
            self.recorder.planned(self.task, result)
        return result
