"""Comparing runs fairly in ``barsym report``: only on shared tasks, and by tech-tree depth.

A 4-task ``bar`` run beside a 53-task ``symbolic`` run, both labelled "all",
compares a few stone tasks with the whole tech tree. So when the runs do not
cover the same tasks, every comparing table and chart is computed on the
tasks they *all* have (the page says how many each run has and how many are
shared); the per-task table still lists every task. Runs with no task in
common are each shown on their own tasks, and the page says the numbers do
not compare.

The depth section sets success against the goal's tech-tree depth
(:mod:`.tech_depth`): the share of tasks with an executable plan and, where
the plans were executed, the share of runs that succeeded, each with its 95 %
Wilson interval.
"""

from __future__ import annotations

import dataclasses
from html import escape
from pathlib import Path

from .parts import INTERVAL_NOTE, interval, note, rate_text, section, table
from .svg import Series, bar_chart
from .tech_depth import goal_depth


def shared_tasks(runs) -> tuple[list, str]:
    """(the runs cut to the tasks every one of them has, one sentence saying what was compared)."""
    if len(runs) < 2:
        return list(runs), ""
    sets = [{r["key"] for r in run.records} for run in runs]
    shared = set.intersection(*sets)
    counts = ", ".join(f"{run.label} {len(keys)}" for run, keys in zip(runs, sets))
    if all(keys == shared for keys in sets):
        return list(runs), f"All {len(runs)} runs have the same {len(shared)} tasks; they are compared on all of them."
    if not shared:
        return list(runs), (
            f"The runs have no task in common (tasks per run: {counts}); each run is shown on its "
            "own tasks, and their numbers do not compare."
        )
    cut = [dataclasses.replace(run, records=[r for r in run.records if r["key"] in shared]) for run in runs]
    return cut, (
        f"The runs do not cover the same tasks (tasks per run: {counts}); {len(shared)} task(s) are shared, "
        f"and every table and chart below compares the runs on those {len(shared)} only. "
        "The per-task table lists every task of every run."
    )


def rules_of(run) -> str | None:
    return (run.header.get("spec") or {}).get("rules") if isinstance(run.header.get("spec"), dict) else None


def depth_of(kb, run):
    """A record -> its goal's tech-tree depth under the run's rules (None where the goal has none)."""
    rules = rules_of(run)

    def depth(record: dict) -> int | None:
        goal = record.get("goal")
        item = goal.get("item") if isinstance(goal, dict) else None
        return goal_depth(kb, item, rules) if isinstance(item, str) else None

    return depth


def _executable(record: dict) -> bool:
    return bool(record.get("planned")) and record.get("verdict") != "invalid"


def depth_section(runs, kb) -> str:
    """Executable plans and execution success per tech-tree depth and run, with 95 % Wilson intervals."""
    per_run = []  # (run, {depth: [tasks, executable, run successes, runs]})
    for run in runs:
        depth = depth_of(kb, run)
        table_: dict[int, list[int]] = {}
        for r in run.records:
            d = depth(r)
            if d is None:
                continue
            acc = table_.setdefault(d, [0, 0, 0, 0])
            acc[0] += 1
            acc[1] += _executable(r)
            e = (r.get("execution") or {}).get("planner")
            planned_runs = int(((run.header.get("spec") or {}).get("world") or {}).get("runs") or 0)
            acc[2] += int(e["successes"]) if e else 0
            acc[3] += int(e["runs"]) if e else planned_runs  # no plan with a world: every run failed
        per_run.append((run, table_))
    levels = sorted({d for _, t in per_run for d in t})
    if not levels:
        return ""
    executed = any(t[d][3] for _, t in per_run for d in t)
    head = ["depth", "planner", "tasks", "executable plans"] + (["execution success (runs)"] if executed else [])
    rows = []
    for d in levels:  # long form: one row per depth and run, so that any number of runs fits the page
        for run, t in per_run:
            if d in t:
                rows.append(
                    [str(d), run.label, str(t[d][0]), rate_text(t[d][1], t[d][0])]
                    + ([rate_text(t[d][2], t[d][3])] if executed else [])
                )
    categories = [str(d) for d in levels]
    charts = bar_chart(
        "Executable plans per tech-tree depth, %",
        categories,
        [Series(run.label, [100.0 * t[d][1] / t[d][0] if d in t else None for d in levels]) for run, t in per_run],
        y_max=100.0,
    )
    if executed:
        charts += bar_chart(
            "Execution success per tech-tree depth, %",
            categories,
            [
                Series(run.label, [100.0 * t[d][2] / t[d][3] if d in t and t[d][3] else None for d in levels])
                for run, t in per_run
            ],
            y_max=100.0,
        )
    bounds = []
    for run, t in per_run:  # the widest interval, said in words: how little a thin depth tells
        for d in levels:
            if d in t and t[d][0]:
                low, high = interval(t[d][1], t[d][0])
                bounds.append((high - low, run.label, d, t[d][0]))
    widest = max(bounds)
    return section(
        "Success against tech-tree depth",
        note(
            "Depth: the number of item tiers between the surface and the goal by the shallowest way "
            "(logs 1, planks 2, wooden pickaxe 4, cobblestone 5, iron ingot 8, diamond 10). " + INTERVAL_NOTE
        ),
        table(head, rows),
        charts,
        note(
            f"The widest interval is {widest[0]:.0f} points ({widest[1]}, depth {widest[2]}, "
            f"{widest[3]} task(s)): a depth with few tasks says little."
        ),
    )


def experts_from_datasets(runs, kb) -> dict[str, list[dict]]:
    """Expert plans of runs written before records carried them, read from the data set the header names.

    Only where that path still reads as a data set; otherwise the drill-down says the expert plan is not in
    the run file.
    """
    from ..eval.dataset import DatasetError, load_dataset
    from ..metrics import as_records

    out: dict[str, list[dict]] = {}
    for run in runs:
        if all("expert_plan" in r or not r.get("planned", True) for r in run.records):
            continue
        path = run.header.get("dataset")
        if not isinstance(path, str) or not path or not Path(path).exists():
            continue
        try:
            tasks = load_dataset(Path(path), kb, dialect=run.header.get("dialect"))
        except (DatasetError, OSError, ValueError):
            continue
        for task in tasks:
            if task.reference is not None:
                out.setdefault(task.key, as_records(task.reference))
    return out


def comparison_note(text: str) -> str:
    return f'<p class="compare">{escape(text)}</p>' if text else ""
