"""Task sets to evaluate on: BAR's tech tree (with expert plans) or a task list.

The layouts below are read from a path the user passes, or from a task set
barsym ships, by name (``bar``, ``deps``, ``plancraft-train``:
:mod:`barsym.datasets`; a bundled set's name dialect comes with it). barsym
never looks for datasets anywhere else:

- a **folder** in BAR's layout: ``tasks.json`` mapping group -> task -> goal
  (``obj_name``, ``obj_num``) and one expert plan per task in
  ``GROUP/TASK.jsonl`` (``.jsonlines`` as in BAR's release also works);
- a **JSON file** listing ``{"task", "group", "object"}`` records, like the DEPS
  task set. There are no reference plans, so only plannability and validity
  are scored. Old names go through a name dialect (``--dialect deps``).
- **Plancraft's** task file (a list of ``{"id", "target", "inventory",
  "impossible", "optimal_path_length", ...}``): each task starts from its
  inventory and implies the ``crafting`` rules; its label (possible or not)
  and its oracle's path length are kept for comparison. Plancraft's ``air``
  (an empty slot) is not an item and is skipped.

Anything malformed raises :class:`DatasetError` with one line saying where.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bar_io import PlanFormatError, loads_json, read_input, read_plan, shown
from ..datasets import bundled, names
from ..kb import KnowledgeBase, UnknownItemError
from ..model import MAX_COUNT, Goal, Plan
from ..sim import State

#: Plancraft's name for an empty inventory slot
PLANCRAFT_EMPTY = "air"
PLANCRAFT_RULES = "crafting"


class DatasetError(ValueError):
    """The dataset path is missing or not in a layout barsym reads."""


class _NotInVersion(DatasetError):
    """A task's item exists in 1.16.5 (the task sets' version) but not in the knowledge base's: the task is left out."""


def _left_out(kb: KnowledgeBase, skipped: list[str], total: int) -> None:
    """One warning for the tasks a release lacks the items of (``--mc-version`` older than the task set)."""
    if skipped:
        import warnings

        shown_names = ", ".join(skipped[:6]) + (", ..." if len(skipped) > 6 else "")
        warnings.warn(
            f"{len(skipped)} of {total} tasks left out: they name items Minecraft {kb.version} does not have "
            f"({shown_names}); the task sets are written for 1.16.5",
            RuntimeWarning,
            stacklevel=3,
        )


@dataclass(frozen=True)
class Task:
    name: str
    group: str
    goal: Goal  # canonical item name
    reference: Plan | None = None
    asked: str = ""  # the object name as the dataset writes it
    start: State | None = None  # the task's start inventory (Plancraft)
    rules: str | None = None  # the rule profile the task set implies
    label_possible: bool | None = None  # the data set's own verdict (Plancraft's oracle)
    optimal_length: int | None = None  # the oracle's number of craft/smelt actions
    optimal_path: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.group}/{self.name}"


def resolve_dataset(name_or_path: str | Path) -> tuple[Path, str | None]:
    """The files a dataset argument means, and the name dialect they imply.

    A string that is a bundled task set's name means that set (write ``./bar``
    for a folder called ``bar``); so does a ``Path`` spelled like one when no
    such file exists (a command whose option is typed ``Path``); anything else
    is a path.
    """
    found = bundled(str(name_or_path))
    if isinstance(name_or_path, Path) and name_or_path.exists():
        found = None
    if found is not None:
        return found.path, found.dialect
    return Path(name_or_path), None


def load_dataset(path: str | Path, kb: KnowledgeBase, dialect: str | None = None) -> list[Task]:
    path, implied = resolve_dataset(path)
    dialect = implied if dialect is None else dialect
    if not path.exists():
        raise DatasetError(f"dataset {path} not found (a path, or a bundled task set: {', '.join(names())})")
    if path.is_dir():
        return _load_bar(path, kb, dialect)
    return _load_list(path, kb, dialect)


def _read_json(path: Path):
    try:
        text = read_input(path).decode("utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON (not UTF-8 text: bad byte at offset {exc.start})") from None
    try:
        return loads_json(text, str(path))
    except PlanFormatError as exc:  # malformed, nested too deeply, or a number too long to read
        raise DatasetError(f"{path}: not valid JSON ({exc.message})") from None


def _goal(kb: KnowledgeBase, name: object, count: object, where: str, dialect: str | None) -> Goal:
    if not isinstance(name, str) or not name.strip():
        raise DatasetError(f"{where}: the object name must be a non-empty string, got {shown(name)}")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise DatasetError(
            f"{where}: the object count must be a whole number from 1 to {MAX_COUNT}, got {shown(count)}"
        )
    try:
        return Goal(item=kb.resolve(name, dialect=dialect), count=count)
    except UnknownItemError as exc:
        raise (_NotInVersion if exc.absent_from else DatasetError)(f"{where}: {exc}") from None
    except KeyError as exc:  # unknown dialect
        raise DatasetError(str(exc.args[0])) from None


def _plain_name(name: object, what: str, where: str) -> str:
    """A group or task name of BAR's layout, which names a file: a name, never a path.

    ``../../../secret2`` would otherwise read ``secret2.jsonl`` three folders up
    (and print it in the error about its content).
    """
    if (
        not isinstance(name, str)
        or not name.strip()
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or name != name.strip()
    ):
        raise DatasetError(
            f"{where}: the {what} name {shown(name)} is not a plain name (no '/', '\\', '..' or "
            f"surrounding spaces): {what} names are file names inside the dataset folder"
        )
    return name


def _load_bar(folder: Path, kb: KnowledgeBase, dialect: str | None) -> list[Task]:
    index = folder / "tasks.json"
    if not index.is_file():
        raise DatasetError(f"{folder}: no tasks.json (expected BAR's layout: tasks.json and GROUP/TASK.jsonl)")
    groups = _read_json(index)
    if not isinstance(groups, dict) or not groups:
        raise DatasetError(f"{index}: expected an object mapping group names to tasks")
    tasks, skipped = [], []
    for group, entries in groups.items():
        _plain_name(group, "group", str(index))
        if not isinstance(entries, dict):
            raise DatasetError(f"{index}: group {group!r} must map task names to goals")
        for name, spec in entries.items():
            _plain_name(name, "task", f"{index}: group {group}")
            where = f"{index}: {group}/{name}"
            if not isinstance(spec, dict):
                raise DatasetError(f"{where}: expected an object with obj_name and obj_num")
            try:
                goal = _goal(kb, spec.get("obj_name"), spec.get("obj_num", 1), where, dialect)
            except _NotInVersion:
                skipped.append(f"{group}/{name}")
                continue
            plan_file = next(
                (
                    folder / group / f"{name}{suffix}"
                    for suffix in (".jsonl", ".jsonlines")
                    if (folder / group / f"{name}{suffix}").is_file()
                ),
                None,
            )
            if plan_file is None:
                raise DatasetError(f"{folder / group / name}.jsonl: expert plan not found")
            try:
                reference = read_plan(plan_file)
            except PlanFormatError as exc:
                raise DatasetError(str(exc)) from None
            tasks.append(Task(name, group, goal, reference, spec.get("obj_name")))
    _left_out(kb, skipped, len(tasks) + len(skipped))
    return tasks


def _is_plancraft(records: object) -> bool:
    return (
        isinstance(records, list)
        and bool(records)
        and isinstance(records[0], dict)
        and {"id", "target", "inventory", "impossible"} <= set(records[0])
    )


def _load_plancraft(path: Path, records: list, kb: KnowledgeBase) -> list[Task]:
    tasks = []
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        where = f"{path}: record {number}"
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise DatasetError(f"{where}: expected a Plancraft task with 'id', 'target', 'inventory', 'impossible'")
        where = f"{path}: task {record['id']}"
        if record["id"] in seen:
            raise DatasetError(f"{where}: the id appears twice")
        seen.add(record["id"])
        goal = _goal(kb, record.get("target"), record.get("count", 1), where, None)
        inventory = record.get("inventory")
        if not isinstance(inventory, dict):
            raise DatasetError(f"{where}: 'inventory' must map item names to counts")
        held: dict[str, int] = {}
        for name, count in inventory.items():
            if name == PLANCRAFT_EMPTY:
                continue
            if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_COUNT:
                raise DatasetError(f"{where}: the count of {name!r} must be a whole number from 0 to {MAX_COUNT}")
            try:
                item = kb.resolve(name)
            except UnknownItemError as exc:
                raise DatasetError(f"{where}: inventory: {exc}") from None
            held[item] = held.get(item, 0) + count
        impossible = record.get("impossible")
        if not isinstance(impossible, bool):
            raise DatasetError(f"{where}: 'impossible' must be true or false, got {impossible!r}")
        length = record.get("optimal_path_length")
        path_items = record.get("optimal_path") or ()
        tasks.append(
            Task(
                record["id"],
                str(record.get("complexity_split") or "all"),
                goal,
                None,
                str(record.get("target")),
                start=State.start(held),
                rules=PLANCRAFT_RULES,
                label_possible=not impossible,
                optimal_length=int(length)
                if isinstance(length, (int, float)) and length == length and not isinstance(length, bool)
                else None,
                optimal_path=tuple(str(p) for p in path_items) if isinstance(path_items, list) else (),
            )
        )
    return tasks


def _load_list(path: Path, kb: KnowledgeBase, dialect: str | None) -> list[Task]:
    records = _read_json(path)
    if _is_plancraft(records):
        return _load_plancraft(path, records, kb)
    if not isinstance(records, list) or not records:
        raise DatasetError(f"{path}: expected a non-empty list of {{task, group, object}} records")
    tasks, skipped = [], []
    for number, record in enumerate(records, start=1):
        where = f"{path}: record {number}"
        if not isinstance(record, dict) or not isinstance(record.get("object"), str):
            raise DatasetError(f"{where}: expected an object with 'task', 'group' and 'object'")
        name = str(record.get("task") or record["object"])
        try:
            goal = _goal(kb, record["object"], record.get("count", 1), where, dialect)
        except _NotInVersion:
            skipped.append(name)
            continue
        tasks.append(Task(name, str(record.get("group", "all")), goal, None, record["object"]))
    _left_out(kb, skipped, len(tasks) + len(skipped))
    return tasks
