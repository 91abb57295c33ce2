"""BAR's plan-similarity metrics, re-implemented from their definitions.

Du et al. (2025) score a predicted plan against an expert plan step by step;
barsym computes the same numbers so its results sit in the same table as the
paper's. Definitions (docs/evaluation.md, "The metrics"):

- A step *matches* when type, name, count (``obj_num``) and tool agree, a
  predicted ``oak_`` prefix being ignored when the expert name has none, and an
  absent tool equal to null. Some comparisons ignore the count.
- **AccuracyHard**: walk the expert plan; step i is correct when the predicted
  step i matches it; counting stops one step past the end of the prediction.
  A group's score is correct / counted over all its tasks.
- **F1ScoreHard**: every step of one plan is judged against the other plan.
  The first step is right when it matches the other plan's first step; a later
  step is right when the other plan has its predecessor (count ignored)
  somewhere before a match of it (count included) -- the first match of each
  is used; stick and crafting_table may come in either order. Precision judges
  the prediction, recall the expert plan; counts pool over a group.
- **EditDistanceHard**: Levenshtein distance over steps with the same match;
  per group, the mean per task and sum(distance) / sum(longer plan length).

Plans may be given as :class:`barsym.model.Plan`, sequences of steps, or BAR
records (dicts); everything is compared in BAR's record form.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .bar_io import step_to_record
from .model import Plan, Step

Record = Mapping[str, object]
SWAPPABLE = frozenset({"stick", "crafting_table"})


def as_records(plan: Plan | Iterable[Step | Record]) -> list[dict]:
    out = []
    for step in plan:
        record = step_to_record(step) if isinstance(step, Step) else dict(step)
        record.setdefault("tool", None)
        out.append(record)
    return out


def _name(predicted: Record, expert: Record) -> bool:
    mine, theirs = str(predicted.get("obj_name")), str(expert.get("obj_name"))
    if "oak_" in mine and "oak_" not in theirs:
        mine = mine.replace("oak_", "")
    return mine == theirs


def step_matches(predicted: Record, expert: Record, with_count: bool = True) -> bool:
    """BAR's step match; ``predicted`` is the side whose ``oak_`` prefix may be dropped."""
    if predicted.get("type") != expert.get("type") or not _name(predicted, expert):
        return False
    if with_count and predicted.get("obj_num") != expert.get("obj_num"):
        return False
    return predicted.get("tool") == expert.get("tool")


def accuracy_counts(predicted: Sequence[Record], expert: Sequence[Record]) -> tuple[int, int]:
    """(correct, counted) steps for AccuracyHard."""
    correct = counted = 0
    for i, step in enumerate(expert):
        counted += 1
        if i >= len(predicted):
            break
        correct += step_matches(predicted[i], step)
    return correct, counted


def _first(step: Record, plan: Sequence[Record], judged_is_prediction: bool, with_count: bool) -> int | None:
    for i, other in enumerate(plan):
        ok = step_matches(step, other, with_count) if judged_is_prediction else step_matches(other, step, with_count)
        if ok:
            return i
    return None


def _order_correct(judged: Sequence[Record], other: Sequence[Record], judged_is_prediction: bool) -> int:
    correct = 0
    for i, step in enumerate(judged):
        if i == 0:
            if other:
                pair = (step, other[0]) if judged_is_prediction else (other[0], step)
                correct += step_matches(*pair)
            continue
        before = _first(judged[i - 1], other, judged_is_prediction, with_count=False)
        here = _first(step, other, judged_is_prediction, with_count=True)
        if before is None or here is None:
            continue
        names = {judged[i - 1].get("obj_name"), step.get("obj_name")}
        if before < here or names <= SWAPPABLE:
            correct += 1
    return correct


def f1_counts(predicted: Sequence[Record], expert: Sequence[Record]) -> tuple[int, int, int, int]:
    """(precision correct, precision total, recall correct, recall total) for F1ScoreHard."""
    return (
        _order_correct(predicted, expert, True),
        len(predicted),
        _order_correct(expert, predicted, False),
        len(expert),
    )


def edit_distance(predicted: Sequence[Record], expert: Sequence[Record]) -> int:
    """Levenshtein distance where two steps are equal when they match (count included)."""
    previous = list(range(len(expert) + 1))
    for i, step in enumerate(predicted, start=1):
        current = [i] + [0] * len(expert)
        for j, other in enumerate(expert, start=1):
            cost = 0 if step_matches(step, other) else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        previous = current
    return previous[-1]


@dataclass
class TaskScore:
    accuracy: tuple[int, int]
    f1: tuple[int, int, int, int]
    edit_distance: int
    longest: int

    @property
    def exact(self) -> bool:
        return self.edit_distance == 0


def score_task(predicted, expert) -> TaskScore:
    p, e = as_records(predicted), as_records(expert)
    return TaskScore(accuracy_counts(p, e), f1_counts(p, e), edit_distance(p, e), max(len(p), len(e)))


@dataclass
class GroupScore:
    """Pooled scores of one group of tasks (or of all tasks)."""

    tasks: int = 0
    correct: int = 0
    counted: int = 0
    precision_hits: int = 0
    precision_total: int = 0
    recall_hits: int = 0
    recall_total: int = 0
    distance: int = 0
    longest: int = 0
    exact: int = 0
    names: list[str] = field(default_factory=list)

    def add(self, score: TaskScore, name: str = "") -> None:
        self.tasks += 1
        self.correct += score.accuracy[0]
        self.counted += score.accuracy[1]
        ph, pt, rh, rt = score.f1
        self.precision_hits += ph
        self.precision_total += pt
        self.recall_hits += rh
        self.recall_total += rt
        self.distance += score.edit_distance
        self.longest += score.longest
        self.exact += score.exact
        if name:
            self.names.append(name)

    @property
    def accuracy(self) -> float:
        return 100.0 * self.correct / self.counted if self.counted else 0.0

    @property
    def precision(self) -> float:
        return 100.0 * self.precision_hits / self.precision_total if self.precision_total else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.recall_hits / self.recall_total if self.recall_total else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def edit_distance(self) -> float:
        return self.distance / self.tasks if self.tasks else 0.0

    @property
    def edit_distance_ratio(self) -> float:
        return self.distance / self.longest if self.longest else 0.0

    def to_dict(self) -> dict:
        return {
            "tasks": self.tasks,
            "accuracy": round(self.accuracy, 2),
            "f1": round(self.f1, 2),
            "precision": round(self.precision, 2),
            "recall": round(self.recall, 2),
            "edit_distance": round(self.edit_distance, 4),
            "edit_distance_ratio": round(self.edit_distance_ratio, 4),
            "exact_plans": self.exact,
        }
