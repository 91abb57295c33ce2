"""Step-verdict examples for the probability step scores: "can this step be done now?" answered yes or no.

The step scorer's ``yes-facts``, ``yes-state`` and ``yes-needs`` methods read P(yes) from the
model's first reply token (:mod:`barsym.reasoning.scoring.step_scorer`). Taught here:
the exact messages :meth:`LLMStepScorer.messages` sends, the reply ``yes``
when the validator plays the step without a failure (the steps before it
played as written) and ``no`` when it fails -- the same verdict the labelled
step set (:mod:`barsym.consistency.step_set`) scores against.

The plans are the symbolic planner's for *training* goals (the benchmarks'
targets are held out, :mod:`.goals`) and faulty variants of them:

- the fault classes the labelled set uses: :func:`~barsym.consistency.faults.repair_faults`
  (a dropped dig down or furnace, the crafting table moved after its first use,
  a count cut in half) and :func:`~barsym.consistency.faults.moved_before_needs`;
- faults whose verdict can only be read by comparing the facts: a count short
  by one (``mine 2 logs`` where 3 are needed: the step that consumes them has
  2 of 3), an ingredient never made (a step dropped), two steps swapped.

Per plan the verdicts are balanced: as many ``no`` as ``yes`` (the first
failing step of a variant, where the fault shows, and a passing step of
another variant or the plan itself), so a model that always says one word
learns nothing from the loss.

``yes-needs`` is taught in **contrast pairs** (:func:`contrast_verdicts`):
each ``no`` (a variant's first failing step) beside the same step where it
runs in the unbroken plan, ``yes``. Why: taught with unpaired verdicts, the
scorer ranked steps by their kind (every ``craft planks`` alike, short of
logs or not: s5g, docs/results/taught-model.md); in a pair the step, its
needs and most of the prompt are the same, and only what the player has
tells the two answers apart.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from ..consistency.config import ScoreMethod
from ..consistency.faults import moved_before_needs, repair_faults
from ..kb import Rules
from ..llm import Completion, CompletionRequest, LLMBackend
from ..model import Goal, Plan, Step
from ..validation import Validator

#: the methods whose prompts this module answers, and the data kind of each
VERDICT_KINDS = {
    "yes-recall": ScoreMethod.YES_RECALL,
    "yes-needs": ScoreMethod.YES_NEEDS,
    "yes-facts": ScoreMethod.YES_FACTS,
    "yes-state": ScoreMethod.YES_STATE,
}
YES, NO = "yes", "no"


def taught_score_method(rows: list[dict]) -> ScoreMethod | None:
    """The step-score method a model trained on ``rows`` should be read with, or None (no verdicts taught).

    ``barsym distill`` writes it into the GGUF (:data:`~barsym.consistency.anchors.SCORE_METHOD_KEY`),
    so ``--scores llm`` reads a distilled scorer the way it was taught. Taught several, ``yes-recall``
    wins (the one whose prompt leaves the needs to the model), then ``yes-needs`` (the facts of
    ``yes-facts`` laid out for comparing), then ``yes-facts``: its
    prompt holds the task and the plan as well as the facts. Measured on the labelled
    steps (docs/step-scores.md), both taught kinds rank well and neither always wins: AUC 0.818 vs
    ``yes-state``'s 0.797 in run 3, 0.850 vs 0.880 in run 4."""
    kinds = {row.get("kind") for row in rows}
    return next((VERDICT_KINDS[k] for k in VERDICT_KINDS if k in kinds), None)


class _PromptsOnly(LLMBackend):
    """A backend the scorer accepts for its probability methods and never calls (only messages are built)."""

    gives_probabilities = True

    def execute(self, request: CompletionRequest) -> Completion:
        raise RuntimeError("the verdict examples build prompts only")


def count_short_by_one(steps: list[Step], rng: random.Random) -> list[Step] | None:
    """One step with a count above 1 made one smaller (None: no such step)."""
    counted = [i for i, step in enumerate(steps) if step.count is not None and step.count > 1]
    if not counted:
        return None
    i = rng.choice(counted)
    out = list(steps)
    out[i] = steps[i].model_copy(update={"count": (steps[i].count or 1) - 1})
    return out


def ingredient_never_made(steps: list[Step], rng: random.Random) -> list[Step] | None:
    """The plan with one step before the last dropped (what it made is missing later), or None."""
    if len(steps) < 2:
        return None
    i = rng.randrange(len(steps) - 1)
    return steps[:i] + steps[i + 1 :]


def swapped(steps: list[Step], rng: random.Random) -> list[Step] | None:
    if len(steps) < 2:
        return None
    i = rng.randrange(len(steps) - 1)
    out = list(steps)
    out[i], out[i + 1] = out[i + 1], out[i]
    return out


def variants(plan: Plan, validator: Validator, rng: random.Random) -> Iterator[tuple[str, list[Step]]]:
    """The plan itself, the labelled set's fault classes, and the fact-reading faults."""
    steps = list(plan.steps)
    yield "expert", steps
    for fault in repair_faults(plan, validator):
        yield fault.kind, fault.steps
    for name, make in (
        ("step moved before its needs", lambda s, r: moved_before_needs(s)),
        ("count short by one", count_short_by_one),
        ("ingredient never made", ingredient_never_made),
        ("two steps swapped", swapped),
    ):
        made = make(steps, rng)
        if made is not None and made != steps:
            yield name, made


def verdicts(plan: Plan, goal: Goal, validator: Validator, rng: random.Random, per_plan: int = 4):
    """Balanced (steps, number, good) triples over the plan's variants: at most ``per_plan`` of each verdict."""
    good: list[tuple[tuple[Step, ...], int, bool]] = []
    bad: list[tuple[tuple[Step, ...], int, bool]] = []
    for _, steps in variants(plan, validator, rng):
        played = tuple(steps)
        failed = set(validator.validate(Plan(steps=played), goal=goal).failed_steps)
        passing = [n for n in range(1, len(played) + 1) if n not in failed]
        if failed:
            bad.append((played, min(failed), False))
        if passing:
            good.append((played, rng.choice(passing), True))
    n = min(len(good), len(bad), per_plan)
    return rng.sample(good, n) + rng.sample(bad, n)


def contrast_verdicts(plan: Plan, goal: Goal, validator: Validator, rng: random.Random, per_plan: int = 4):
    """(steps, number, good) in pairs: a variant's first failing step, then the same step where it runs in
    ``plan`` (the nearest such place); at most ``per_plan`` pairs, one per step of ``plan``, drawn with ``rng``."""
    expert = tuple(plan.steps)
    runs = set(range(1, len(expert) + 1)) - set(validator.validate(Plan(steps=expert), goal=goal).failed_steps)
    pairs: dict[int, list] = {}  # by the plan's step: a yes asked twice would be dropped as a duplicate
    for name, steps in variants(plan, validator, rng):
        if name == "expert":  # validated above
            continue
        played = tuple(steps)
        failed = validator.validate(Plan(steps=played), goal=goal).failed_steps
        if not failed:
            continue
        number = min(failed)
        same = [i for i in runs if expert[i - 1] == played[number - 1]]
        if same:
            near = min(same, key=lambda i: abs(i - number))
            pairs.setdefault(near, [(played, number, False), (expert, near, True)])
    chosen = rng.sample(sorted(pairs.values(), key=lambda pair: pair[1][1]), min(per_plan, len(pairs)))
    return [verdict for pair in chosen for verdict in pair]


_scorers: dict[tuple[int, str], tuple] = {}


def verdict_examples(kb, goal: Goal, plan: Plan, rng: random.Random, kind: str, *, per_plan: int = 4) -> list[dict]:
    """The scorer's messages for ``kind`` (a key of :data:`VERDICT_KINDS`), answered with the validator's verdict."""
    from ..reasoning.scoring.step_scorer import LLMStepScorer

    key = (id(kb), kind)
    if key not in _scorers:
        rules = Rules(kb)
        scorer = LLMStepScorer(_PromptsOnly(), method=VERDICT_KINDS[kind], rules=rules, log=False)
        _scorers.clear()
        _scorers[key] = (kb, scorer, Validator(kb, rules))
    _, scorer, validator = _scorers[key]
    out = []
    chosen = contrast_verdicts if kind in ("yes-needs", "yes-recall") else verdicts
    for steps, number, ok in chosen(plan, goal, validator, rng, per_plan):
        out.append(
            {
                "kind": kind,
                "goal": goal.item,
                "count": goal.count,
                "messages": scorer.messages(goal, steps, number),
                "reply": YES if ok else NO,
            }
        )
    return out
