"""Plans from below the surface: no move a later move undoes, and every dig names its pickaxe.

A plan from the surface goes down once, as BAR's do. A start below the surface
(``--layer N``) holds traps the backward loop cannot see, since its layer goals
down to the start are covered by the start: a dig below the start ordered
before the surface gathering (dig down, then climb straight back up: the
issue-56 plan), and a dig put in after a climb that names no pickaxe. So a
start below the surface is laid out in two ways and the better plan is kept
(:func:`~barsym.planner.ordering.layer_rank`: fewer wasted steps, fewer steps, fewer digs after a climb):

- **down first** (:func:`down_first`): the gathering and digging that need no
  step of the plan (their tools are held) go first, layer by layer downwards,
  then the agent climbs once for the rest: no dig undoes a climb;
- **above first, here first**: gathering found only above the start comes
  before the first planned dig below it (:func:`start_layer_needs`, as surface
  gathering comes before the first dig from the surface), and gathering that
  can happen on the start layer with held tools goes before any climb
  (:func:`gather_here_first`).

:class:`~barsym.planner.backward.BackwardPlanner` also plans such a start as
if from the surface (climb first, then dig back down with planned pickaxes)
and keeps the better by the same rank. Every dig the layout puts in after a
climb names the lowest held pickaxe of the tier its layer's ores need
(:func:`~barsym.planner.ordering.name_dig_tools`; any pickaxe digs), found by playing the plan forward.
Only a start below the surface loads this module.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..kb import Rules
from ..model import Step
from .ordering import Need, NoOrder, order_steps


def start_layer_needs(rules: Rules, steps: Sequence[Step], digs: dict[int, int], start_layer: int) -> list[Need]:
    """Gathering found only above ``start_layer`` before the planned dig to the layer below it."""
    below = digs.get(start_layer + 1)
    if start_layer <= 0 or below is None:
        return []
    out = []
    for i, step in enumerate(steps):
        found = rules.step_layers(step)
        if found and max(found) < start_layer:
            out.append(Need(i, below, "surface", 0, step.item))
    return out


def gather_here_first(
    rules: Rules, steps: Sequence[Step], order: list[int], needs: list[Need], layer: int
) -> list[int]:
    """``order`` with the gathering that can run on ``layer`` from the start alone moved to the front."""
    waits = {d.after for d in needs if d.before != d.after}
    here = [i for i in order if i not in waits and layer in (rules.step_layers(steps[i]) or ())]
    return here + [i for i in order if i not in here]


def down_first(
    rules: Rules, steps: Sequence[Step], order: list[int], needs: list[Need], digs: dict[int, int], layer: int
) -> list[int]:
    """``order`` with the gathering and digging below ``layer`` that need only each other first, going down."""
    preds: dict[int, set[int]] = defaultdict(set)
    for d in needs:
        if d.before != d.after:
            preds[d.after].add(d.before)
    dug = {i: reaches for reaches, i in digs.items()}
    key: dict[int, float] = {}
    for i in order:  # a topological order: every step's needs are judged before it
        found = rules.step_layers(steps[i])
        if i in dug and dug[i] > layer:
            where = dug[i] - 0.5  # before the gathering on the layer it reaches
        elif found and max(found) >= layer:
            where = max(layer, min(found))
        else:
            continue
        if preds[i] <= key.keys():
            key[i] = where
    front = sorted(key, key=lambda i: (key[i], order.index(i)))
    return front + [i for i in order if i not in key]


def orders_below(
    rules: Rules, steps: Sequence[Step], needs: list[Need], digs: dict[int, int], layer: int
) -> list[tuple[list[int], list[Need]]]:
    """The orders (and the needs they honour) worth laying out from a start on ``layer`` below the surface."""
    out = []
    for extra in (start_layer_needs(rules, steps, digs, layer), []):
        try:
            order = order_steps(steps, needs + extra)
        except NoOrder:
            continue
        if extra:
            out.append((gather_here_first(rules, steps, order, needs + extra, layer), needs + extra))
        else:
            out.append((down_first(rules, steps, order, needs, digs, layer), needs))
    return out
