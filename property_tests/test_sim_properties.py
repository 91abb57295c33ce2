"""Hypothesis properties of the simulator, validator and BAR JSONL IO."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barsym.bar_io import format_plan, parse_plan, read_plan
from barsym.kb import load_kb
from barsym.model import MAX_COUNT, Plan, Step, StepType
from barsym.sim import Failure, Simulator, State
from barsym.validation import Validator
from testdata import EXPERT_FILES

KB = load_kb()
SIM = Simulator(KB)
VALIDATOR = Validator(KB)
COMMON = sorted(
    {
        "logs",
        "planks",
        "stick",
        "crafting_table",
        "wooden_pickaxe",
        "stone_pickaxe",
        "iron_pickaxe",
        "cobblestone",
        "iron_ore",
        "iron_ingot",
        "furnace",
        "coal",
        "diamond",
        "gold_ore",
        "redstone",
        "charcoal",
        "torch",
        "leather",
        "oak_planks",
        "chest",
        "bucket",
        "oak_log",
    }
)
ANY_ITEM = sorted(KB.items)
TOOLS = sorted(KB.tools)
RAW = ["logs", "cobblestone", "iron_ore", "gold_ore", "coal", "diamond", "redstone", "planks", "stick", "oak_log"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.one_of(st.sampled_from(COMMON), st.sampled_from(ANY_ITEM), st.text(min_size=1, max_size=12))
tools = st.one_of(st.none(), st.sampled_from(TOOLS), st.text(min_size=1, max_size=8))


@st.composite
def steps(draw):
    kind = draw(st.sampled_from(list(StepType)))
    if kind.moves:
        return Step(type=kind, tool=draw(tools))
    name = draw(names)
    if not name.strip():
        name = "x" + name
    return Step(type=kind, item=name, count=draw(st.integers(1, MAX_COUNT)), tool=draw(tools))


states = st.builds(
    lambda inv, layer: State.start(inv, layer),
    st.dictionaries(st.sampled_from(COMMON), st.integers(0, 70), max_size=8),
    st.integers(0, KB.deepest_layer),
)


@SETTINGS
@given(st.lists(steps(), min_size=1, max_size=25))
def test_arbitrary_plans_never_crash_the_validator(step_list):
    result = VALIDATOR.validate(Plan(steps=tuple(step_list)))
    assert result.verdict.value in ("valid", "valid with waste", "invalid")
    assert len(result.trace) >= 1
    if not result.valid and result.failed_step:
        assert 1 <= result.failed_step <= len(step_list)


@SETTINGS
@given(steps(), states)
def test_apply_is_pure(step, state):
    snapshot = (state.inventory, state.layer)
    first = SIM.transition(step, state)
    second = SIM.transition(step, state)
    assert first == second
    assert (state.inventory, state.layer) == snapshot
    if not isinstance(first, Failure):
        assert all(n > 0 for _, n in first.state.inventory)
        if step.type is StepType.CLIMB_UP:  # only a climb goes up, one layer at most
            assert first.state.layer == max(0, state.layer - 1)
        else:
            assert first.state.layer >= state.layer


EXECUTABLE = [p for p in (read_plan(f) for f in EXPERT_FILES) if VALIDATOR.validate(p).valid]


@SETTINGS
@given(st.sampled_from(EXECUTABLE), st.dictionaries(st.sampled_from(RAW), st.integers(1, 64), max_size=5))
def test_more_raw_materials_never_break_a_valid_plan(plan, extra):
    assert VALIDATOR.validate(plan, start=State.start(extra)).valid


@SETTINGS
@given(st.lists(steps(), min_size=1, max_size=20))
def test_bar_jsonl_write_then_read_is_identity(step_list):
    plan = Plan(steps=tuple(step_list))
    assert parse_plan(format_plan(plan)).steps == plan.steps
