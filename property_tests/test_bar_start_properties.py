"""Hypothesis: from any start state the symbolic planner can plan from, ``bar[copy-facts]`` plans without a fallback.

``copy-facts`` answers every goal with the facts line of its prompt, so it is the
model that does what barsym's own decomposition tells it. A fallback then means
barsym's prompts, grammars or conventions disagree with the start state (issue 35:
a held iron pickaxe while the grammar forced a wooden one), not that a model erred.
The counters must also say what the step tags say: no goal of the plan was
answered by the symbolic fallback, and no plan-level fallback happened.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from barsym.kb import load_kb
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from barsym.reasoning.planners.backward.bar_decomposer import FALLBACK
from barsym.sim import State

KB = load_kb()
SYMBOLIC = make_planner("symbolic", KB)
BAR = make_planner("bar", KB, llm_stand_in="copy-facts", facts=True, log=False)
SETTINGS = settings(max_examples=220, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GOALS = ["torch", "stone_pickaxe", "iron_pickaxe", "furnace", "bucket", "shears", "diamond_sword", "rail", "chest"]
TOOLS = ["wooden_pickaxe", "stone_pickaxe", "iron_pickaxe", "diamond_pickaxe", "golden_pickaxe", "wooden_axe"]
STATIONS = ["crafting_table", "furnace"]
MATERIALS = ["logs", "oak_planks", "stick", "cobblestone", "coal", "iron_ingot", "iron_ore", "diamond"]

inventories = st.dictionaries(st.sampled_from(TOOLS + STATIONS + MATERIALS), st.integers(1, 6), max_size=5)
starts = st.builds(lambda inv, layer: State.start(inv, layer), inventories, st.integers(0, KB.deepest_layer))
goals = st.builds(lambda item, n: Goal(item=item, count=n), st.sampled_from(GOALS), st.integers(1, 2))


@SETTINGS
@given(goals, starts)
@example(Goal(item="stone_pickaxe", count=2), State.start({"stone_pickaxe": 1}, 0))  # a held tool, a second made
def test_bar_with_copy_facts_needs_no_fallback_from_any_plannable_start(goal, start):
    try:
        SYMBOLIC.plan(goal, start)
    except PlanningError as exc:
        assert exc.kind.about_goal, exc.message
        return  # not a start the symbolic planner plans from
    result = BAR.plan(goal, start)
    assert result.validation.valid, (goal, start.describe(), result.validation.failure())
    assert result.stats.plan_fallback is None, (goal, start.describe(), result.stats.plan_fallback)
    llm = result.stats.model
    assert llm.fallbacks == 0 and llm.plan_fallbacks == 0, (goal, start.describe(), llm.fallbacks)
    tags = [tag for i in range(len(result.plan)) for tag in result.provenance(i)]
    assert FALLBACK not in tags, (goal, start.describe(), tags)
