"""The needs planner of the forward repair (consistency/needs.py): what it plans for a shortage."""

from __future__ import annotations

from barsym.consistency.needs import Need, NeedPlanner
from barsym.kb import Rules
from barsym.model import MAX_COUNT
from barsym.sim import State


def test_a_need_past_what_a_step_can_name_has_no_plan_and_raises_nothing(kb):
    """A chooser's huge count, widened by the repair, is a need no plan makes (it once raised a traceback)."""
    planner = NeedPlanner(kb, Rules(kb))
    assert planner.steps_for(Need("planks", MAX_COUNT + 1), State.start(), ()) is None
    assert planner.steps_for(Need("planks", 4), State.start(), ()) is not None
