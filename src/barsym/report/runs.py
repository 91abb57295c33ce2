"""The run files a report is drawn from: each read (damaged lines and headers named, not fatal) into a
:class:`Run` whose groups, stats, scores and summary the sections read.

Split from :mod:`.html_report` (the page's sections and their charts) along that seam: ``barsym report``,
``tools/doc_numbers.py`` and the tests read runs without drawing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from ..eval.record_check import header_problem, record_problem
from ..eval.runfile import read_run_lines
from ..eval.runner import ALL, ordered_groups
from ..metrics import GroupScore, TaskScore
from ..planner.registry import planner_label
from ..planner.stats import PlanStats
from .llm_report import summarize

INVALID = "invalid"


@dataclass
class Run:
    """One run file: its planner and records, in the file's order."""

    label: str
    path: Path
    header: dict
    records: list[dict] = field(default_factory=list)

    def groups(self) -> list[str]:
        return ordered_groups(r["group"] for r in self.records)

    @staticmethod
    def stats(record: dict) -> PlanStats:
        """A record's stats, typed (a record of a task that was not planned has none: empty stats)."""
        stats = record.get("stats")
        return PlanStats.from_dict(stats if isinstance(stats, dict) else None)

    def scores(self) -> dict[str, GroupScore]:
        out: dict[str, GroupScore] = {}
        for r in self.records:
            s = r.get("score")
            if s:
                score = TaskScore(tuple(s["accuracy"]), tuple(s["f1"]), s["edit_distance"], s["longest"])
                for name in (r["group"], ALL):
                    out.setdefault(name, GroupScore()).add(score, r["key"])
        return out

    def summary(self) -> dict:
        """llm_report's summary, from the records (the same numbers ``barsym eval`` prints)."""
        outcomes = []
        for r in self.records:
            result = (
                SimpleNamespace(stats=self.stats(r), validation=SimpleNamespace(valid=r.get("verdict") != INVALID))
                if r.get("planned")
                else None
            )
            outcomes.append(SimpleNamespace(result=result, seconds=float(r.get("seconds", 0.0))))
        return summarize(SimpleNamespace(outcomes=outcomes))


def load_runs(paths: list[Path], warnings: list[str] | None = None) -> list[Run]:
    """Every run file, labelled by planner (and file name where two runs share a planner).

    A record that does not read as one (:func:`~barsym.eval.record_check.record_problem`:
    NaN seconds, a string for a count, no group, ...) is left out, and a run
    whose header cannot be used is left out whole; each adds one line naming
    the file and line to ``warnings``, and the report is made of the rest.
    A task recorded twice (a resumed run) counts once: its last good record.
    """
    runs = []
    for path in paths:
        header, numbered, _ = read_run_lines(path)
        problem = header_problem(header)
        if problem is not None:
            if warnings is not None:
                warnings.append(f"{path}:1: unusable run header ({problem}); run left out of the report")
            continue
        seen: dict[str, dict] = {}
        for number, r in numbered:
            problem = record_problem(r)
            if problem is not None:
                if warnings is not None:
                    warnings.append(
                        f"{path}:{number}: damaged record of {str(r.get('key'))[:60]} ({problem}); "
                        "left out of the report"
                    )
                continue
            seen.pop(r["key"], None)
            seen[r["key"]] = r
        spec = header.get("spec") if isinstance(header.get("spec"), dict) else {}
        label = planner_label(
            str(header.get("planner", "?")), spec.get("options") if isinstance(spec.get("options"), dict) else None
        )  # bar[copy-facts]: a stand-in, not a model, made the plans
        runs.append(Run(label, path, header, list(seen.values())))
    labels = [r.label for r in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = f"{run.label} ({run.path.stem})"
    return runs
