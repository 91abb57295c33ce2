"""The plain records (:mod:`barsym.plain_models`) check and convert as the pydantic models they replaced did.

``Step``, ``Goal``, ``Plan``, ``GoalOptions``, ``StartOptions`` and ``MemoryOptions`` were pydantic models until
issue 54 took pydantic off ``barsym plan --planner symbolic``'s start. The references below are those models as
they were (pydantic, ``extra="forbid"``, the same fields, bounds and check); on generated input -- whole numbers
as numbers, floats, strings with signs, underscores and blanks, bytes, booleans, None, wrong types, missing and
extra keys -- each record is made or refused as its reference is, with the same first error (type, place,
message), and what is made dumps to the same JSON.
"""

from __future__ import annotations

import copy
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_serializer, model_validator

from barsym.memory.options import ENV_VAR, MemoryOptions
from barsym.model import MAX_COUNT, Goal, GoalOptions, Plan, Step, StepType
from barsym.plain_models import ModelError
from barsym.start_state import StartOptions

FORBID = ConfigDict(frozen=True, extra="forbid")


class RefStep(BaseModel):
    model_config = FORBID
    type: StepType
    item: str | None = None
    count: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    tool: str | None = None
    recipe: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _shape(self) -> RefStep:
        Step._check(self)  # type: ignore[arg-type]  # the one check, on the same attributes
        return self

    @model_serializer(mode="wrap")
    def _without_unpinned_recipe(self, handler):
        data = handler(self)
        if isinstance(data, dict) and data.get("recipe") is None:
            data.pop("recipe", None)
        return data


class RefGoal(BaseModel):
    model_config = FORBID
    item: str
    count: int = Field(default=1, ge=1, le=MAX_COUNT)


class RefPlan(BaseModel):
    model_config = FORBID
    steps: tuple[RefStep, ...]
    source: str | None = None


class RefGoalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str | None = None
    goal_count: int | None = Field(None, ge=1, le=MAX_COUNT)


class RefStartOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: list[str] = []
    inventory: Path | None = None
    layer: str | None = None
    rules: str | None = None


class RefMemoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    memory: Path | None = None
    record: bool = False
    no_memory: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> RefMemoryOptions:
        if self.no_memory and (self.memory is not None or self.record):
            raise ValueError("--no-memory cannot be combined with --memory or --record")
        if self.record and self.memory is None and not os.environ.get(ENV_VAR, "").strip():
            raise ValueError(f"--record needs --memory PATH (or ${ENV_VAR})")
        return self


PAIRS = [
    (Step, RefStep),
    (Goal, RefGoal),
    (Plan, RefPlan),
    (GoalOptions, RefGoalOptions),
    (StartOptions, RefStartOptions),
    (MemoryOptions, RefMemoryOptions),
]

digits = st.from_regex(r"\A\s?[+-]?[0-9]{1,6}(_[0-9]{1,3})?(\.0*|\.[0-9])?\s?\Z")
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, MAX_COUNT + 10),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.5, 64.0, -0.0, 1e20, 1e300]),
    digits,
    st.text(max_size=6),
    st.binary(max_size=4),
    st.sampled_from(["mine", "craft", "smelt", "dig_down", "climb_up", "MINE", "logs", "", " ", "yes", "off", "2"]),
    st.sampled_from(list(StepType)),
    st.lists(st.sampled_from(["logs=1", "x", 3]), max_size=2),
)
step_dicts = st.fixed_dictionaries(
    {}, optional={"type": scalars, "item": scalars, "count": scalars, "tool": scalars, "recipe": scalars}
)


def records(fields: list[str]) -> st.SearchStrategy[dict]:
    extra = st.dictionaries(st.sampled_from(["extra", "obj_name"]), scalars, max_size=1)
    values = {f: st.one_of(scalars, st.lists(st.one_of(step_dicts, scalars), max_size=3)) for f in fields}
    return st.tuples(st.fixed_dictionaries({}, optional=values), extra).map(lambda p: {**p[0], **p[1]})


def outcome(make, data: dict):
    try:
        made = make(**data)
    except (ValidationError, ModelError) as exc:
        first = exc.errors()[0]  # the references' names are RefStep, ...: a message naming the type is the same
        return "refused", first["type"], tuple(first["loc"]), first["msg"].replace("RefStep", "Step")
    return "made", made.model_dump(mode="json")


CASES = st.sampled_from(PAIRS).flatmap(lambda pair: st.tuples(st.just(pair), records(list(pair[0].model_fields))))


@settings(max_examples=1500, deadline=None)
@given(case=CASES)
def test_a_record_is_made_or_refused_as_its_pydantic_model_was(case):
    (plain, reference), record = case
    assert outcome(plain, record) == outcome(reference, record), record


@settings(max_examples=300, deadline=None)
@given(record=step_dicts)
def test_a_step_from_a_mapping_is_as_pydantic_made_it(record):
    assert outcome(Step, record) == outcome(RefStep, record)
    assert outcome(lambda **r: Step.model_validate(r), record) == outcome(lambda **r: RefStep.model_validate(r), record)


def test_a_record_is_a_value_like_a_frozen_pydantic_model():
    step = Step(type="craft", item="planks", count=4, recipe=0)
    same = Step(type=StepType.CRAFT, item="planks", count="4", recipe=0)
    assert step == same and hash(step) == hash(same) and step != Step(type="craft", item="planks", count=4)
    assert "Ref" + repr(step) == repr(RefStep(type="craft", item="planks", count=4, recipe=0))
    plan = Plan(steps=[step, {"type": "mine", "item": "logs", "count": 1}], source="a.jsonl")
    ref = RefPlan(steps=[RefStep(**step.model_dump()), {"type": "mine", "item": "logs", "count": 1}], source="a.jsonl")
    assert str(plan) == str(ref).replace("RefStep", "Step") and plan.model_dump(mode="json") == ref.model_dump(
        mode="json"
    )
    assert pickle.loads(pickle.dumps(plan)) == plan and copy.deepcopy(plan) == plan
    with pytest.raises(ModelError, match="frozen"):
        step.count = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="unhashable"):
        hash(GoalOptions())
    assert step.model_copy(update={"count": MAX_COUNT + 1}).count == MAX_COUNT + 1  # unchecked, as pydantic's
    assert "recipe" not in Step(type="mine", item="logs", count=1).model_dump()


def test_a_pydantic_model_holding_a_record_checks_it_as_before():
    """The memory's rows hold a step and goals: pydantic checks them with the same first error as before."""
    held, reference = TypeAdapter(list[Step]), TypeAdapter(list[RefStep])
    for bad in ({"type": "teleport", "item": "x", "count": 1}, {"type": "mine", "count": 1}, {"type": "mine"}, 3):
        with pytest.raises(ValidationError) as mine:
            held.validate_python([bad])
        with pytest.raises(ValidationError) as theirs:
            reference.validate_python([bad])
        first, expected = mine.value.errors()[0], theirs.value.errors()[0]
        wanted = (expected["type"], expected["loc"], expected["msg"].replace("RefStep", "Step"))
        assert (first["type"], first["loc"], first["msg"]) == wanted
    steps = held.validate_python([{"type": "mine", "item": "logs", "count": "2"}])
    assert steps == [Step(type="mine", item="logs", count=2)] and isinstance(steps[0], Step)
    assert held.dump_python(steps, mode="json") == [{"type": "mine", "item": "logs", "count": 2, "tool": None}]
