"""The training set: a mix of the planners' calls over the training goals, as JSON lines.

One line per example: ``kind`` (bar, bar-nofacts, bar-shots (:mod:`.shots`), cot, deps, score, parse (:mod:`.prose_data`),
yes-facts, yes-state: the step scorer's probability prompts, :mod:`.verdicts`), the
goal the prompt asks for, the messages and the oracle's reply. The mix leans
towards what the evaluation asks most and the base model does worst: whole
forward plans (cot, deps) and BAR's decompositions without facts. Duplicate
prompts (the same sub-goal met in two plans) are kept once.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from ..atomic_files import replacing
from ..kb import KnowledgeBase, Rules
from ..model import Goal
from ..planner.decomposer import PlanningError
from ..planner.registry import graph_for, symbolic_planner
from . import oracle
from .goals import (
    GoalPool,
    far_from,
    is_evaluation_task,
    other_start,
    random_count,
    start_state,
    starts_keeping_inputs,
    training_pool,
)
from .knowledge import KIND as KNOW
from .knowledge import KnowledgeWriter
from .oracle import _NO_MODEL
from .prose_data import parse_examples
from .shots import shot_examples
from .verdicts import VERDICT_KINDS, verdict_examples

#: ``cot-empty``/``deps-empty``: whole forward plans of training goals from the empty start only, the start every
#: task of BAR's and DEPS' sets has (``cot``/``deps`` draw that start for about a fifth of their examples).
#: Their examples are of kind ``cot``/``deps``: the same prompts, so the training and the rule treat them alike.
FROM_EMPTY = {"cot-empty": "cot", "deps-empty": "deps", "deps-repair": "deps"}
#: ``deps-repair``: DEPS from the empty start whose round 0 is one of the model's own faults (an input made too few
#: times or never made, :func:`~.oracle.short_plan`), then the explanation and the repaired plan; of kind ``deps``.
REPAIR = "deps-repair"
#: ``cot-items``/``deps-items``: whole forward plans of evaluation items from a start holding only logs, planks or
#: sticks (:func:`~.goals.starts_keeping_inputs`), so every tool, station and mined input stays in the plan; never
#: from the empty start. Of kind ``cot``/``deps``.
KEEPING_INPUTS = {"cot-items": "cot", "deps-items": "deps"}
KINDS = (
    "know",
    "cot",
    "deps",
    *FROM_EMPTY,
    *KEEPING_INPUTS,
    "bar-nofacts",
    "bar-shots",
    "bar",
    "score",
    "parse",
    *VERDICT_KINDS,
)
#: share of the examples of each kind
DEFAULT_MIX = {"cot": 0.3, "deps": 0.3, "bar-nofacts": 0.2, "bar": 0.1, "score": 0.1}


class DataError(ValueError):
    """A data option that cannot work (an unknown kind, a non-positive count); the message names ``--mix``."""


def parse_mix(text: str | None) -> dict[str, float]:
    """``cot=3,deps=3,bar-nofacts=2`` -> normalised shares; None -> the default mix."""
    if not text:
        return dict(DEFAULT_MIX)
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise DataError(f"--mix: unknown kind {name!r}; the kinds are {', '.join(KINDS)}")
        try:
            mix[name] = float(weight) if weight else 1.0
        except ValueError:
            raise DataError(f"--mix: {part!r} is not KIND=WEIGHT (e.g. cot=3)") from None
        if mix[name] < 0:
            raise DataError(f"--mix: the weight of {name} must not be negative")
    total = sum(mix.values())
    if total <= 0:
        raise DataError("--mix: at least one weight must be positive")
    return {k: v / total for k, v in mix.items() if v > 0}


GoalWeighting = Literal["uniform", "length", "tiers"]
#: the share of whole forward plans (cot, deps) whose goal is an evaluation item, from another start.
#: A cost found at stage 8: such a start often holds the item's deepest input (``Goal: 1 stone_hoe`` /
#: ``You start with: ... 2 cobblestone``), so its plan mines none, and a 135M model that reads the goal
#: line more than the start line carries that plan to the empty start (stage 8's CoT and DEPS wrote every
#: stone tool without cobblestone; 8 of its 16 stone-tool examples started with cobblestone in hand).
#: Stage 9's mix leaves ``cot`` and ``deps`` out for ``cot-empty``/``deps-empty``. Two tries at a stage 10 added
#: ``cot-items``/``deps-items`` (:data:`KEEPING_INPUTS`), whose starts hold only logs, planks or sticks; their model
#: left out what those starts held, and neither was shipped (docs/results/knows-the-game.md, "Stage 10").
EVALUATION_ITEMS_SHARE = 0.4
TIER_GROUPS = 4  # no tool, a tier-1 tool (wooden), tier 2 (stone), tier 3 or deeper (iron and past it)


def goal_weights(pool: GoalPool, how: GoalWeighting, kb: KnowledgeBase | None = None) -> list[float]:
    """How often each training goal is drawn: all alike, by its plan's length cubed, or by tiers.

    Most training goals are short (dyes, slabs: 6 steps) while the benchmarks'
    are tech-tree tools of 13-25 steps, past iron. A small model taught on the
    short ones drops lines of the long ones (run 5: the furnace, the second
    dig); ``length`` draws the 44 goals that mine iron or deeper for 37 % of
    the examples instead of 11 %.

    ``tiers`` groups the goals by the deepest tool tier their plan uses (none,
    wooden, stone, iron or past it) and gives the groups 1 : 2 : 3 : 4 of the
    draws, length cubed within a group: the plans that mine iron ore with a
    stone pickaxe and go on past it get 70 % instead of 37 %. With ``length``
    the wooden tier takes 55 % (long stained-glass and terracotta chains), and
    the furnace after the iron ore, where the forward planners' plans on BAR's
    tasks fail most (``tools/copy_errors.py``), is in one cot example in six.
    """
    if how == "uniform":
        return [1.0] * len(pool.goals)
    lengths = [float(len(plan.steps)) ** 3 for _, plan in pool.goals]
    if how == "length":
        return lengths
    if kb is None:
        raise ValueError("goal_weights(..., 'tiers') needs the knowledge base (the tools' tiers)")
    rules = Rules(kb)
    groups = [_tier_group(rules, plan) for _, plan in pool.goals]
    totals = Counter()
    for group, weight in zip(groups, lengths):
        totals[group] += weight
    return [(group + 1) * weight / totals[group] for group, weight in zip(groups, lengths)]


def _tier_group(rules: Rules, plan) -> int:
    """0 for a plan with no tool, else its deepest tool's tier (the rule book's), tiers 3 and up as one group."""
    tiers = [rules.tier(step.tool) for step in plan.steps if step.tool]
    return min(max(tiers, default=0), TIER_GROUPS - 1)


class DataGenerator:
    """Examples of one kind at a time, from random training goals and start states (seeded)."""

    def __init__(self, kb: KnowledgeBase, seed: int = 0, goals: GoalWeighting = "uniform"):
        self.kb = kb
        self.rng = random.Random(seed)
        self.graph = graph_for(kb)
        self.symbolic = symbolic_planner(kb, graph=self.graph)
        self.pool: GoalPool = training_pool(kb, self.symbolic)
        self.weights = goal_weights(self.pool, goals, kb)
        self.seen: set[str] = set()
        self._parser = None
        self._knowledge: list[oracle.Example] | None = None

    def _prose_parser(self):
        """``barsym parse``'s parser, built once (its prompt prefix and name tables are the same for every goal)."""
        if self._parser is None:
            from ..reasoning.prose.parser import ProseParser

            self._parser = ProseParser(self.kb, self.graph, _NO_MODEL)
        return self._parser

    def _known(self) -> list[oracle.Example]:
        """The next few one-step knowledge examples (:mod:`.knowledge`): every item at its counts, in a seeded
        order, each once; nothing once all are out."""
        if self._knowledge is None:
            writer = KnowledgeWriter(self.kb, self.graph)
            known = list(writer.examples(writer.items(), self.rng))
            layers = [e for e in known if e["goal"].startswith("layer:")]  # first: every mix with know has them
            items = [e for e in known if not e["goal"].startswith("layer:")]
            self.rng.shuffle(items)
            self._knowledge = layers + items
        taken, self._knowledge = self._knowledge[:8], self._knowledge[8:]
        return taken

    def _goal(self):
        item, plan = self.rng.choices(self.pool.goals, self.weights)[0]
        goal = Goal(item=item, count=random_count(self.rng))
        if goal.count != 1:
            plan = self.symbolic.plan(goal).plan
        return goal, plan

    def some(self, kind: str) -> list[oracle.Example]:
        if kind == KNOW:
            return self._known()
        goal, plan = self._goal()
        if kind in ("bar", "bar-nofacts"):
            return oracle.bar_examples(self.kb, goal, facts=kind == "bar", graph=self.graph)
        if kind == "bar-shots":
            asked = oracle.bar_examples(self.kb, goal, facts=False, graph=self.graph)
            asked = [e for e in asked if e["goal"] not in self.pool.held_out]
            return shot_examples(self.kb, self.symbolic, asked, self.pool.items(), self.rng)
        if kind == "score":
            return oracle.score_examples(self.kb, goal, plan, self.rng)
        if kind in VERDICT_KINDS:
            return verdict_examples(self.kb, goal, plan, self.rng, kind)
        if kind == "parse":
            return parse_examples(self._prose_parser(), goal, plan, self.rng)
        repair = kind == REPAIR
        if kind in FROM_EMPTY:
            kind, task = FROM_EMPTY[kind], (goal, None, plan)
        elif kind in KEEPING_INPUTS:
            kind, task = KEEPING_INPUTS[kind], self._item_task()
        else:
            task = self._forward_task(goal, plan)
        if task is None:
            return []
        goal, start, plan = task
        if kind == "cot":
            return oracle.cot_examples(self.kb, goal, start, plan, graph=self.graph)
        return oracle.deps_examples(
            self.kb, goal, start, plan, self.rng, graph=self.graph, symbolic=self.symbolic, repair=repair
        )

    def _forward_task(self, goal: Goal, plan):
        """(goal, start, plan) of a whole forward plan to teach, or None: a training goal from the empty start or
        a state on its plan's way; or, ``EVALUATION_ITEMS_SHARE`` of the time, an evaluation item from
        :func:`~.goals.other_start` -- never an evaluation task (:func:`~.goals.is_evaluation_task`)."""
        evaluation = None
        if self.rng.random() < EVALUATION_ITEMS_SHARE:
            goal = Goal(item=self.rng.choice(sorted(self.pool.held_out)), count=random_count(self.rng))
            evaluation = self.symbolic.plan(goal).plan
            start = other_start(self.kb, evaluation, self.rng)
        else:
            start = start_state(self.kb, plan, self.rng)
        if is_evaluation_task(self.pool.held_out, goal, start):
            return None
        if start is not None:
            plan = self.symbolic.plan(goal, start).plan
        if not plan.steps or (evaluation is not None and not far_from(plan, evaluation)):
            return None
        return goal, start, plan

    def _item_task(self):
        """(goal, start, plan) of an evaluation item from the first of :func:`~.goals.starts_keeping_inputs` whose
        plan is far from the evaluation plan (:func:`~.goals.far_from`), or None (none is)."""
        goal = Goal(item=self.rng.choice(sorted(self.pool.held_out)), count=random_count(self.rng))
        evaluation = self.symbolic.plan(goal).plan
        for start in starts_keeping_inputs(self.kb, evaluation, self.rng):
            if is_evaluation_task(self.pool.held_out, goal, start):
                continue
            plan = self.symbolic.plan(goal, start).plan
            if plan.steps and far_from(plan, evaluation):
                return goal, start, plan
        return None

    def generate(
        self, n: int, mix: dict[str, float] | None = None, progress: Callable[[int, int], None] | None = None
    ) -> Iterator[oracle.Example]:
        """``n`` distinct examples in the proportions of ``mix``, interleaved."""
        if n <= 0:
            raise DataError(f"--examples must be positive, got {n}")
        mix = mix or DEFAULT_MIX
        wanted = Counter({k: round(n * share) for k, share in mix.items()})
        wanted[max(mix, key=mix.get)] += n - sum(wanted.values())
        made: Counter = Counter()
        stale = 0
        while sum(made.values()) < n and stale < 50 * n:
            open_kinds = [k for k in mix if made[k] < wanted[k]]
            kind = self.rng.choices(open_kinds, [wanted[k] - made[k] for k in open_kinds])[0]
            try:
                found = self.some(kind)
            except PlanningError:
                found = []
            fresh = 0
            for example in found:
                if example["goal"] in self.pool.held_out and example["kind"] not in (KNOW, "cot", "deps"):
                    continue  # a benchmark target asked as a sub-goal (BAR's decomposer asks for sticks)
                key = json.dumps([example["messages"], example["reply"]])
                if key in self.seen or made[kind] >= wanted[kind]:
                    continue
                self.seen.add(key)
                made[kind] += 1
                fresh += 1
                yield example
                if progress is not None:
                    progress(sum(made.values()), n)
            stale = 0 if fresh else stale + 1


def write_jsonl(examples, path: Path) -> Counter:
    """Write the examples one per line; the count per kind."""
    counts: Counter = Counter()
    with replacing(path) as out:  # the old file kept whole until the new one is complete
        for example in examples:
            out.write(json.dumps(example, ensure_ascii=False) + "\n")
            counts[example["kind"]] += 1
    return counts


def read_jsonl(path: Path) -> list[oracle.Example]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_examples(path: Path) -> list[oracle.Example]:
    """The examples of a file :func:`write_jsonl` wrote, every line checked; a DataError says what is wrong."""
    try:
        rows = read_jsonl(path)
    except FileNotFoundError:
        raise DataError("no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"not a JSON-lines file of examples ({exc})") from None
    keys = {"kind", "messages", "reply"}
    bad = next((i for i, r in enumerate(rows, 1) if not isinstance(r, dict) or not keys <= set(r)), None)
    if bad is not None or not rows:
        raise DataError(f"line {bad or 1} is not an example (kind, messages, reply); write the file with --data-only")
    return rows
