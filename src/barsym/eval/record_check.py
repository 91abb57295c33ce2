"""Is a task record read back from a ``--run`` file one barsym could have written?

A run file is plain text: an editor, a disk error or another program may have
changed a record (``"plan": "x"``, ``"stats": 7``, a score of two numbers,
``NaN`` for seconds, a missing ``error_kind``). Whoever reads records back --
a resumed ``eval`` (which then runs the task again) and ``report`` (which
leaves the record out) -- asks :func:`record_problem` first and gets one
sentence saying what is wrong, or None. Numbers a reader can recompute from
the plan (the scores, the executions) are recomputed by the resumed run;
what cannot be recomputed (time, the planner's counters) is checked here:
the right type, finite, in range.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

from ..bar_io import PlanFormatError, shown, step_from_record
from ..consistency.stats import RepairStats
from ..memory.stats import MemoryStats
from ..planner.decomposer import ErrorKind
from ..planner.stats import LLMStats, PlanStats
from ..reasoning.planners.forward.stats import BaselineSummary, CotSummary, DepsSummary
from ..validation import Verdict

#: the most rounds a DEPS record may claim (the loop stops at a handful; a report draws one bar per round)
MAX_ROUNDS = 1000
#: the longest plan a record may hold (every step is validated and drawn)
MAX_STEPS = 100_000
#: the largest counter or time a record may claim: past it a sum or a mean would leave the floats (``inf %``)
MAX_NUMBER = 10**12


def task_hash(task_data: dict) -> str:
    """The content hash a record is keyed by: a task changed in place (goal, expert plan, start) gets a new one."""
    text = json.dumps(task_data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _number(value, kind: str) -> bool:
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    return isinstance(value, (int, float)) and math.isfinite(value)


def _fields_problem(data: dict, cls, where: str, prefix: str = "") -> str | None:
    """The first field of ``cls`` in ``data`` whose value is not of its declared number type."""
    for f in dataclasses.fields(cls):
        name = prefix + f.name
        if name not in data or data[name] is None:
            continue
        kinds = [k.strip() for k in str(f.type).split("|")]
        numeric = [k for k in kinds if k in ("int", "float")]
        if numeric and not any(_number(data[name], k) for k in numeric):
            if "bool" in kinds and isinstance(data[name], bool):
                continue
            return f"{where}{name} must be a finite {' or '.join(numeric)}, got {shown(data[name])}"
        if numeric and not 0 <= data[name] <= MAX_NUMBER:
            return f"{where}{name} must be from 0 to {MAX_NUMBER:.0e}, got {shown(data[name])}"
    return None


def stats_problem(stats) -> str | None:
    """What is wrong with a record's ``stats``, or None (missing stats are empty stats)."""
    if stats is None:
        return None
    if not isinstance(stats, dict):
        return f"'stats' must be an object, got {shown(stats)}"
    problem = (
        _fields_problem(stats, PlanStats, "stats.")
        or _fields_problem(stats, LLMStats, "stats.")
        or _fields_problem(stats, MemoryStats, "stats.", "memory_")
    )
    if problem:
        return problem
    sections = (("deps", DepsSummary), ("cot", CotSummary), ("baseline", BaselineSummary), ("consistency", RepairStats))
    for key, cls in sections:
        section = stats.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            return f"stats.{key} must be an object, got {shown(section)}"
        problem = _fields_problem(section, cls, f"stats.{key}.")
        if problem:
            return problem
    rounds = (stats.get("deps") or {}).get("rounds")
    if isinstance(rounds, int) and rounds > MAX_ROUNDS:
        return f"stats.deps.rounds must be at most {MAX_ROUNDS}, got {shown(rounds)}"
    try:
        PlanStats.from_dict(stats)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return f"'stats' cannot be read ({' '.join(str(exc).split())[:120]})"
    return None


def score_problem(score) -> str | None:
    """What is wrong with a stored ``score`` (BAR's counts: accuracy 2, f1 4, edit distance, longest), or None."""
    if score is None:
        return None
    if not isinstance(score, dict):
        return f"'score' must be an object, got {shown(score)}"
    for name, length in (("accuracy", 2), ("f1", 4)):
        value = score.get(name)
        if (
            not isinstance(value, list)
            or len(value) != length
            or not all(_number(v, "int") and 0 <= v <= MAX_NUMBER for v in value)
        ):
            return f"score.{name} must be {length} whole numbers of at least 0, got {shown(value)}"
    for name in ("edit_distance", "longest"):
        if not _number(score.get(name), "int") or not 0 <= score[name] <= MAX_NUMBER:
            return f"score.{name} must be a whole number of at least 0, got {shown(score.get(name))}"
    return None


def _runs_problem(value, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"{where} must be an object, got {shown(value)}"
    runs, successes = value.get("runs"), value.get("successes")
    if not _number(runs, "int") or not _number(successes, "int") or not 0 <= successes <= runs or runs > MAX_NUMBER:
        return f"{where} needs whole numbers 0 <= successes <= runs, got {shown(successes)} of {shown(runs)}"
    ticks = value.get("success_ticks", [])
    if not isinstance(ticks, list) or not all(_number(t, "int") for t in ticks):
        return f"{where}.success_ticks must be a list of whole numbers"
    return failures_problem(value.get("failures"), where)


def execution_problem(execution) -> str | None:
    if execution is None:
        return None
    if not isinstance(execution, dict) or set(execution) - {"planner", "expert"}:
        return f"'execution' must be an object with 'planner' and 'expert', got {shown(execution)}"
    return _runs_problem(execution.get("planner"), "execution.planner") or _runs_problem(
        execution.get("expert"), "execution.expert"
    )


def header_problem(header: dict) -> str | None:
    """What a report cannot use in a run header (it names the planner and, with a world, the runs), or None."""
    if not isinstance(header.get("planner", ""), str):
        return f"'planner' must be a string, got {shown(header.get('planner'))}"
    spec = header.get("spec")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        return f"'spec' must be an object, got {shown(spec)}"
    world = spec.get("world")
    if world is None:
        return None
    if not isinstance(world, dict) or not isinstance(world.get("name", ""), str):
        return f"'spec.world' must be an object naming a world, got {shown(world)}"
    runs = world.get("runs", 0)
    if not _number(runs, "int") or not 0 <= runs <= MAX_NUMBER:
        return f"'spec.world.runs' must be a whole number of at least 0, got {shown(runs)}"
    return None


def record_problem(record) -> str | None:
    """One sentence on what makes ``record`` unusable as a task record, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if not isinstance(record.get("key"), str) or not isinstance(record.get("group"), str):
        return "'key' and 'group' must be strings"
    seconds = record.get("seconds", 0.0)
    if not _number(seconds, "float") or not 0 <= seconds <= MAX_NUMBER:
        return f"'seconds' must be a finite number of at least 0, got {shown(seconds)}"
    planned = record.get("planned")
    if not isinstance(planned, bool):
        return f"'planned' must be true or false, got {shown(planned)}"
    if planned:
        plan = record.get("plan")
        # an empty plan is an outcome, not damage: a forward planner whose model wrote no readable step
        # (DEPS, CoT) planned nothing, and its task counts as a plan that cannot run
        if not isinstance(plan, list) or (not plan and record.get("verdict") != "invalid") or len(plan) > MAX_STEPS:
            return f"'plan' must be a list of steps (empty only for an invalid plan), got {shown(plan)}"
        for number, step in enumerate(plan, start=1):
            if not isinstance(step, dict):
                return f"plan step {number} must be an object, got {shown(step)}"
            try:
                step_from_record(step, f"plan step {number}")
            except PlanFormatError as exc:
                return str(exc)
        if record.get("verdict") not in {v.value for v in Verdict}:
            return f"'verdict' must be one of {', '.join(v.value for v in Verdict)}, got {shown(record.get('verdict'))}"
    else:
        if record.get("error_kind") not in {k.value for k in ErrorKind}:
            return f"'error_kind' must be one of barsym's planning errors, got {shown(record.get('error_kind'))}"
        if not isinstance(record.get("error"), str):
            return f"'error' must be a string, got {shown(record.get('error'))}"
    return (
        stats_problem(record.get("stats"))
        or score_problem(record.get("score"))
        or execution_problem(record.get("execution"))
        or expert_plan_problem(record.get("expert_plan"))
    )


def expert_plan_problem(plan) -> str | None:
    """What is wrong with a record's copy of the expert plan (the report shows it step by step), or None."""
    if plan is None:
        return None
    if not isinstance(plan, list) or len(plan) > MAX_STEPS:
        return f"'expert_plan' must be a list of steps, got {shown(plan)}"
    for number, step in enumerate(plan, start=1):
        if not isinstance(step, dict):
            return f"expert_plan step {number} must be an object, got {shown(step)}"
    return None


def failures_problem(failures, where: str) -> str | None:
    """An execution's failure counts: a list of {code, count, step} (the report lists them), or None."""
    if failures is None:
        return None
    if not isinstance(failures, list):
        return f"{where}.failures must be a list, got {shown(failures)}"
    for f in failures:
        if (
            not isinstance(f, dict)
            or not _number(f.get("count"), "int")
            or not 0 <= f["count"] <= MAX_NUMBER
            or not (f.get("step") is None or _number(f.get("step"), "int"))
            or not isinstance(f.get("code"), str)
        ):
            return f"{where}.failures must hold {{code, count, step}} objects, got {shown(f)}"
    return None


def unknown_items(record: dict, kb) -> str | None:
    """A plan step naming an item the knowledge base does not know, or None (kb-aware, after record_problem)."""
    for number, step in enumerate(record.get("plan") or [], start=1):
        parsed = step_from_record(step, f"plan step {number}")
        for name in (parsed.item, parsed.tool):
            if name is not None and not kb.is_known(name):
                return f"plan step {number} names {shown(name)}, an item this barsym does not know"
    return None
