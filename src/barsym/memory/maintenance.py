"""Filling, listing and moving a stage memory: what ``barsym memory build|show|export|import`` do, for scripts too.

A build plans each task with the memory decomposer in front (noting
contexts, not answering: the memory records what the planner itself
decides), executes the plan and records tree and runs in one transaction.
The listing and the JSON Lines export and import are the same data a script
reading the memory through the API gets, so the two cannot disagree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from ..bar_io import read_input
from ..planner import PlanningError
from ..private_files import private_dir
from ..sim.execution import Execution
from ..sim.options import ExecutionOptions
from ..sim.world import World
from .memory_file import MemoryFileError, default_path
from .recorder import record
from .row_checks import Vocabulary
from .store import MemoryStore


def open_memory(path: Path | None, write: bool) -> MemoryStore:
    """The memory at ``path``, else the default one (:func:`~.memory_file.default_path`), read-only unless ``write``.

    Writing into the default memory creates barsym's own data folder (0700) first; a folder that cannot be
    made (a read-only home) is a one-line MemoryFileError, as a damaged or locked file is.
    """
    chosen = path or default_path()
    if write and path is None and not chosen.parent.exists():
        try:
            private_dir(chosen.parent)
        except OSError as exc:
            raise MemoryFileError(
                f"memory {chosen}: cannot create the folder {chosen.parent} ({exc.strerror or exc})"
            ) from None
    return MemoryStore(chosen, readonly=not write)


def build(
    store: MemoryStore, planner, tasks: Iterable, world: World, options: ExecutionOptions, starting=None
) -> Iterator[tuple[object, Execution | PlanningError]]:
    """Plan, execute and record each task in turn; yields ``(task, execution)``, or the PlanningError of a task
    no plan was found for (nothing is recorded for it). ``planner`` is a :func:`~barsym.memory.with_memory`
    planner without a store, so that it notes the contexts of its answers; ``starting(number, task)`` is
    called before each task is planned (a progress bar)."""
    for number, task in enumerate(tasks, start=1):
        if starting is not None:
            starting(number, task)
        try:
            result = planner.plan(task.goal, task.start)
        except PlanningError as exc:
            yield task, exc
            continue
        execution = options.execute(result.plan, world, start=task.start)
        ran = (options.world, options.world_seed, execution.runs, execution.successes)
        record(store, task.key, result, planner.memory, [ran])
        yield task, execution


def decompositions(store: MemoryStore) -> list[dict]:
    """Every remembered decomposition of every goal with the success counts of the plans that used it."""
    rows = []
    for item, count in store.goals():
        for c in store.candidates(item, count):
            rows.append(
                {
                    "goal": {"item": item, "count": count},
                    "signature": c.signature,
                    "context": c.record.context,
                    "step": c.record.step,
                    "subgoals": c.record.subgoals,
                    "yields": c.record.yields,
                    "provenance": c.record.provenance,
                    "successes": c.successes,
                    "runs": c.runs,
                    "plans": c.plans,
                    "rate": round(c.rate, 6),
                }
            )
    return rows


def decomposition_line(row: dict) -> str:
    """One :func:`decompositions` row in a line: the goal, the step, what it needs, its runs."""
    subgoals = ", ".join(f"{g['count']} {g['item']}" for g in row["subgoals"]) or "nothing"
    return (
        f"{row['goal']['count']} {row['goal']['item']}: {row['step'].get('type')} -> needs {subgoals}; "
        f"{row['successes']}/{row['runs']} runs over {row['plans']} plan(s) [{row['provenance']}]"
    )


def export_jsonl(store: MemoryStore, out: TextIO) -> None:
    """Every remembered plan as one JSON line (its decompositions and executions with it)."""
    for plan in store.export_plans():
        out.write(json.dumps(plan) + "\n")


def import_jsonl(store: MemoryStore, text: str, where: str, vocabulary: Vocabulary | None = None) -> tuple[int, int]:
    """Add the plans of an export, all or none; ``(added, read)``. ValueError naming the line or the record
    that is wrong (``where:N: not JSON (...)``); the memory is then as it was.

    ``vocabulary`` (:meth:`Vocabulary.of` a knowledge base) also refuses items, worlds and layers it does not
    know; without it only the shape, the step notation and the counts are checked.
    """
    records, lines = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}:{number}: not JSON ({exc.msg}); nothing imported") from None
            except RecursionError:
                raise ValueError(f"{where}:{number}: JSON nested too deeply to read; nothing imported") from None
            except ValueError:  # an integer of more than 4300 digits
                raise ValueError(f"{where}:{number}: a number too long to read; nothing imported") from None
            lines.append(number)
    try:
        return store.import_plans(records, vocabulary, lines), len(records)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}; nothing imported") from None


def import_file(store: MemoryStore, path, vocabulary: Vocabulary | None = None) -> tuple[int, int]:
    """:func:`import_jsonl` of a file an export wrote; a file that cannot be read is a ValueError too."""
    try:
        text = read_input(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text: bad byte at offset {exc.start}"
        raise ValueError(f"{path}: cannot read ({why})") from None
    return import_jsonl(store, text, str(path), vocabulary)
