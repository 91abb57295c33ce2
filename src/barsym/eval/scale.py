"""One evaluation, however it runs: chosen tasks, any executor, resumable.

:func:`run_evaluation` is what ``barsym eval`` calls. It turns the tasks
into plain data, skips those a ``--run`` file already holds, sends the rest
to the executor, appends each record to the run file as it arrives, and
finally rebuilds the :class:`~.runner.Evaluation` from the records *in task
order* -- the same way for a serial run, a pool, Ray, or a resumed run, which
is why they all print the same report.

:func:`select_tasks` is ``--tasks``, ``--groups`` and ``--limit``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..kb import KnowledgeBase
from .dataset import DatasetError, Task
from .execution import TaskExecution
from .record_check import record_problem, task_hash, unknown_items
from .run_model import model_record
from .runfile import RUN_VERSION, RunFile
from .runner import Evaluation, ordered_groups
from .spec import RunSpec, outcome_from_record, task_to_data
from .workers import Executor, iter_records


@dataclass
class EvaluationRun:
    """The evaluation, the executions (with a world), and how many tasks this process ran."""

    evaluation: Evaluation
    records: dict[str, dict]
    executions: dict[str, TaskExecution] = field(default_factory=dict)
    ran: int = 0
    resumed: int = 0


def select_tasks(
    tasks: Sequence[Task], names: Sequence[str] = (), groups: Sequence[str] = (), limit: int | None = None
) -> list[Task]:
    """The tasks named (by ``name`` or ``group/name``), in the chosen groups, then the first ``limit``."""
    chosen = list(tasks)
    if groups:
        known = list(dict.fromkeys(t.group for t in tasks))
        unknown = [g for g in groups if g not in known]
        if unknown:
            raise DatasetError(
                f"--groups: no group {', '.join(map(repr, unknown))} in the data set; "
                f"its groups: {', '.join(ordered_groups(known))}"
            )
        chosen = [t for t in chosen if t.group in groups]
    if names:
        wanted = set(names)
        unknown = [n for n in names if not any(n in (t.name, t.key) for t in tasks)]
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], [t.name for t in tasks], n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise DatasetError(f"--tasks: no task {', '.join(map(repr, unknown))} in the data set{hint}")
        chosen = [t for t in chosen if t.name in wanted or t.key in wanted]
        if not chosen:
            raise DatasetError("--tasks: none of the named tasks is in the chosen --groups")
    if limit is not None:
        chosen = chosen[:limit]
    return chosen


def run_header(spec: RunSpec, dataset: str, dialect: str | None, tasks: int, dataset_name: str | None = None) -> dict:
    """A run file's first line: what ran on what (``dataset_name`` as the user named it: ``bar``), and the model."""
    return {
        "kind": "run",
        "version": RUN_VERSION,
        "planner": spec.planner,
        "spec": spec.to_dict(),
        "dataset": dataset,
        "dataset_name": dataset_name,
        "dialect": dialect,
        "tasks": tasks,
        "model": model_record(spec.planner, spec.options),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def run_evaluation(
    spec: RunSpec,
    tasks: Sequence[Task],
    kb: KnowledgeBase,
    *,
    name: str,
    dataset: str = "",
    dialect: str | None = None,
    executor: Executor | str = Executor.LOCAL,
    workers: int = 1,
    ray_address: str | None = None,
    run_path: Path | None = None,
    planner=None,
    on_start: Callable[[int, int], None] | None = None,
    on_record: Callable[[dict], None] | None = None,
    on_task: Callable[[str], None] | None = None,
    on_goal: Callable[[str, str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    api_key: str | None = None,
    dataset_name: str | None = None,
) -> EvaluationRun:
    """Run every task not already in ``run_path`` and return the whole evaluation, in task order.

    A record is resumed only if it is for the task as it is now (its content
    hash: a data set changed in place runs the changed tasks again) and reads
    as a record (:func:`~.record_check.record_problem`); a damaged one is one
    ``on_warning`` line naming the file and line, and its task runs again.
    Scores and executions of resumed records are recomputed from their plans.
    ``api_key`` (for ``--llm-url``) is handed to the workers as an argument, never put in the spec
    (written into run files) or the environment (inherited by every process Ray starts).
    """
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise DatasetError("the data set names a task twice (group/name); each task needs its own name")
    header = run_header(spec, dataset, dialect, len(tasks), dataset_name)
    run_file = RunFile(run_path, header) if run_path else None
    records: dict[str, dict] = {}
    try:
        if run_file is not None:
            records = _resumable(run_file, tasks, kb, on_warning)
        resumed = len(records)
        pending = [_with_hash(task_to_data(t)) for t in tasks if t.key not in records]
        if on_start is not None:
            on_start(len(tasks), resumed)
        for record in iter_records(
            spec,
            pending,
            executor=executor,
            workers=workers,
            ray_address=ray_address,
            planner=planner,
            on_task=on_task,
            on_goal=on_goal,
            api_key=api_key,
        ):
            if run_file is not None:
                run_file.append(record)
            records[record["key"]] = record
            if on_record is not None:
                on_record(record)
    finally:
        if run_file is not None:
            run_file.close()
    evaluation = Evaluation(name)
    executions = {}
    fresh = {data["group"] + "/" + data["name"] for data in pending}
    for task in tasks:
        record = records[task.key]
        outcome = outcome_from_record(record, task, kb, spec.rules)
        evaluation.outcomes.append(outcome)
        if spec.world is not None and task.key not in fresh:  # recomputed: same seeds, same worlds, same numbers
            from .execution import execute_task

            record["execution"] = execute_task(kb, spec, task, outcome.plan)
        if "execution" in record:
            executions[task.key] = TaskExecution.from_dict(record["execution"])
    return EvaluationRun(evaluation, records, executions, ran=len(pending), resumed=resumed)


def _with_hash(data: dict) -> dict:
    """Task data with its content hash, which its record carries (``task_hash``) for a later resume."""
    return {**data, "hash": task_hash(data)}


def _resumable(run_file: RunFile, tasks: Sequence[Task], kb: KnowledgeBase, on_warning) -> dict[str, dict]:
    """Per task, the last record in the run file that is for this task as it is now and reads as a record."""
    out: dict[str, dict] = {}
    for task in tasks:
        want = task_hash(task_to_data(task))
        for number, record in reversed(run_file.lines.get(task.key, [])):
            problem = record_problem(record) or (unknown_items(record, kb) if record.get("planned") else None)
            if problem is not None:
                if on_warning is not None:
                    on_warning(
                        f"{run_file.path}:{number}: damaged record of {task.key} ({problem}); the task is run again"
                    )
                continue
            if record.get("task_hash") != want:
                continue  # written for another version of this task (the data set changed), or by an older barsym
            out[task.key] = record
            break
    return out
