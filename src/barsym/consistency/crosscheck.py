"""Cross-check: how well the model's step scores agree with the simulator's.

The simulator's scores are ground truth for "does this step and the next k
run". For a plan or a whole data set the agreement is reported three ways:

- **Spearman's rank correlation** of the two scores over every step (ties
  get average ranks; undefined, ``None``, when either side is constant, as a
  model answering 10 for every step is);
- at threshold ``t``, the **precision and recall of the model's anchors**
  (steps it scores below ``t``) against the simulator's: of the steps the
  model flags, how many the simulator flags too, and of the steps the
  simulator flags, how many the model finds;
- the **distribution** of each side's scores, which shows at a glance a model
  that answers one number for everything.

Steps the model gave no score (a backend failure) are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from .anchors import DEFAULT_T


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for position in range(i, j + 1):
            out[order[position]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson's r of the ranks); None for fewer than 2 pairs or a constant side."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs two sequences of the same length")
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / (sxx * syy) ** 0.5


def auc(scores: Sequence[float], good: Sequence[bool]) -> float | None:
    """The area under the ROC curve of ``scores`` for telling ``good`` steps from bad (Mann-Whitney U over
    ranks, ties counting half): 1.0 = every good step scored above every bad one, 0.5 = chance. None when
    one class is empty."""
    if len(scores) != len(good):
        raise ValueError("auc needs as many labels as scores")
    positives = sum(1 for g in good if g)
    negatives = len(good) - positives
    if not positives or not negatives:
        return None
    rank_sum = sum(r for r, g in zip(ranks(scores), good) if g)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


@dataclass
class CrossCheck:
    """Agreement over the steps added so far (one plan or many)."""

    t: int = DEFAULT_T
    simulator: list[int] = field(default_factory=list)
    llm: list[int] = field(default_factory=list)
    per_plan: list[float | None] = field(default_factory=list)
    missing: int = 0  # steps without a model score

    def add(self, simulator: Sequence[int], llm: Sequence[int | None]) -> None:
        pairs = [(s, v) for s, v in zip(simulator, llm) if v is not None]
        self.missing += len(simulator) - len(pairs)
        self.simulator += [s for s, _ in pairs]
        self.llm += [v for _, v in pairs]
        self.per_plan.append(spearman([s for s, _ in pairs], [v for _, v in pairs]))

    @property
    def spearman(self) -> float | None:
        return spearman(self.simulator, self.llm)

    def confusion(self) -> tuple[int, int, int, int]:
        """(both flag, only the model, only the simulator, neither) at ``t``."""
        tp = fp = fn = tn = 0
        for s, v in zip(self.simulator, self.llm):
            sim, model = s < self.t, v < self.t
            tp += sim and model
            fp += model and not sim
            fn += sim and not model
            tn += not sim and not model
        return tp, fp, fn, tn

    @property
    def precision(self) -> float | None:
        tp, fp, _, _ = self.confusion()
        return tp / (tp + fp) if tp + fp else None

    @property
    def recall(self) -> float | None:
        tp, _, fn, _ = self.confusion()
        return tp / (tp + fn) if tp + fn else None

    def to_dict(self) -> dict:
        tp, fp, fn, tn = self.confusion()
        defined = [r for r in self.per_plan if r is not None]
        return {
            "steps": len(self.simulator),
            "missing": self.missing,
            "t": self.t,
            "spearman": _round(self.spearman),
            "spearman_per_plan_mean": _round(sum(defined) / len(defined)) if defined else None,
            "plans_with_spearman": len(defined),
            "plans": len(self.per_plan),
            "simulator_anchors": tp + fn,
            "llm_anchors": tp + fp,
            "both_anchors": tp,
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "exact_agreement": _round(sum(a == b for a, b in zip(self.simulator, self.llm)) / len(self.llm))
            if self.llm
            else None,
            "simulator_distribution": dict(sorted(Counter(self.simulator).items())),
            "llm_distribution": dict(sorted(Counter(self.llm).items())),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
