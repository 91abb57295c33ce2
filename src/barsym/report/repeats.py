"""``barsym eval --repeats N``: every task N times, each group's mean and spread over the runs.

BAR's protocol runs each of its 53 tasks ten times and reports the mean. A
repeat here is a whole evaluation run again with the model's seed moved on by
one (``--llm-seed``, +1, ...): at temperature 0 a deterministic model gives
the same plans every time (the spread is 0, as it should be), and with a
temperature the runs differ. Each repeat keeps its own run file beside
``--run FILE`` (``FILE.repeat2.jsonl`` ..., :func:`barsym.eval.runfile.repeat_path`), so a
long protocol resumes where it stopped like any run. This is the repeats' report.

The spread is the sample standard deviation of a group's score over the
runs (0 for one run); the values of every run are kept in the JSON.
"""

from __future__ import annotations

import statistics

from ..eval.runner import ALL, Evaluation

METRICS = ("accuracy", "f1", "edit_distance")


def _spread(values: list[float]) -> dict:
    return {
        "mean": round(statistics.fmean(values), 4),
        "sd": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
        "values": [round(v, 4) for v in values],
    }


def summary(evaluations: list[Evaluation], seeds: list[int | None]) -> dict:
    """Per group (and ``all``), each metric's mean, standard deviation and per-run values."""
    names = evaluations[0].group_names() + [ALL]
    groups: dict[str, dict] = {}
    for name in names:
        scores = [e.overall() if name == ALL else e.groups().get(name) for e in evaluations]
        if any(s is None for s in scores):
            continue
        groups[name] = {m: _spread([float(getattr(s, m)) for s in scores]) for m in METRICS}
    return {"runs": len(evaluations), "seeds": seeds, "groups": groups}


def text(data: dict) -> str:
    """The table the report prints after the first run's: mean ± sd of Acc, F1 and ED per group."""
    seeds = [s for s in data["seeds"] if s is not None]
    how = f"llm seeds {seeds[0]}..{seeds[-1]}" if seeds else "no model seed (a planner without one)"
    rows = [
        f"repeats: {data['runs']} runs ({how}); mean ± sd over the runs",
        f"{'group':<10} {'Acc':>15} {'F1':>15} {'ED':>13}",
    ]
    for name, entry in data["groups"].items():
        acc, f1, ed = (entry[m] for m in METRICS)
        rows.append(
            f"{name:<10} {acc['mean']:>7.2f} ± {acc['sd']:<5.2f} {f1['mean']:>7.2f} ± {f1['sd']:<5.2f} "
            f"{ed['mean']:>5.2f} ± {ed['sd']:<5.2f}"
        )
    return "\n".join(rows) + "\n"
