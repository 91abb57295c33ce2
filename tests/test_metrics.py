"""BAR's metrics on hand-made cases whose scores can be worked out by hand."""

from __future__ import annotations

import pytest

from barsym.metrics import GroupScore, accuracy_counts, as_records, edit_distance, f1_counts, score_task, step_matches


def rec(kind, name, num=1, tool=None):
    return {"type": kind, "obj_name": name, "obj_num": num, "tool": tool}


DIG = {"type": "special", "obj_name": "dig down", "obj_num": None, "tool": "wooden_pickaxe"}
EXPERT = [
    rec("mine", "logs", 3),
    rec("craft", "planks", 9),
    rec("craft", "stick", 2),
    rec("craft", "crafting_table"),
    rec("craft", "wooden_pickaxe"),
    DIG,
    rec("mine", "cobblestone", 1, "wooden_pickaxe"),
]


def group_of(pred, ref=EXPERT):
    group = GroupScore()
    group.add(score_task(pred, ref))
    return group


def test_perfect_plan():
    g = group_of(list(EXPERT))
    assert (g.accuracy, g.f1, g.edit_distance, g.edit_distance_ratio) == (100, 100, 0, 0)


def test_swapped_stick_and_crafting_table_keeps_f1():
    swapped = EXPERT[:2] + [EXPERT[3], EXPERT[2]] + EXPERT[4:]
    g = group_of(swapped)
    assert g.f1 == 100
    assert accuracy_counts(swapped, EXPERT) == (5, 7)  # positions 2 and 3 differ
    assert edit_distance(swapped, EXPERT) == 2


def test_swapping_other_steps_costs_f1():
    swapped = EXPERT[:4] + [EXPERT[5], EXPERT[4]] + EXPERT[6:]
    ph, pt, rh, rt = f1_counts(swapped, EXPERT)
    assert pt == rt == 7 and ph < 7 and rh < 7


def test_truncated_plan():
    short = EXPERT[:4]
    assert accuracy_counts(short, EXPERT) == (4, 5)  # counting stops one step past the prediction
    assert f1_counts(short, EXPERT) == (4, 4, 4, 7)
    g = group_of(short)
    assert g.accuracy == 80 and g.precision == 100 and g.recall == pytest.approx(400 / 7)
    assert g.f1 == pytest.approx(2 * 100 * (400 / 7) / (100 + 400 / 7))
    assert edit_distance(short, EXPERT) == 3 and g.edit_distance_ratio == pytest.approx(3 / 7)


def test_extra_step():
    extra = EXPERT[:2] + [rec("craft", "chest", 1)] + EXPERT[2:]
    assert accuracy_counts(extra, EXPERT) == (2, 7)  # everything after the insertion is shifted
    ph, pt, rh, rt = f1_counts(extra, EXPERT)
    # the chest and the step after it (its predecessor is not in the expert plan) are wrong
    assert (pt, rt) == (8, 7) and ph == 6 and rh == 7
    assert edit_distance(extra, EXPERT) == 1


def test_stick_exception_also_forgives_a_repeated_stick():
    extra = EXPERT[:2] + [rec("craft", "stick", 4)] + EXPERT[2:]
    ph, pt, rh, rt = f1_counts(extra, EXPERT)
    assert (ph, pt) == (7, 8)  # stick 4 is wrong; stick 2 after it counts as right (stick/table rule)
    assert edit_distance(extra, EXPERT) == 1


def test_empty_prediction():
    assert accuracy_counts([], EXPERT) == (0, 1)
    assert f1_counts([], EXPERT) == (0, 0, 0, 7)
    assert group_of([]).f1 == 0 and edit_distance([], EXPERT) == 7


def test_step_match_rules():
    assert step_matches(rec("craft", "oak_planks", 4), rec("craft", "planks", 4))
    assert not step_matches(rec("craft", "planks", 4), rec("craft", "oak_planks", 4))  # only the prediction's prefix
    assert not step_matches(rec("craft", "planks", 5), rec("craft", "planks", 4))
    assert step_matches(rec("craft", "planks", 5), rec("craft", "planks", 4), with_count=False)
    assert step_matches({"type": "craft", "obj_name": "crafting_table", "obj_num": 1}, rec("craft", "crafting_table"))
    assert not step_matches(rec("mine", "cobblestone", 1), rec("mine", "cobblestone", 1, "wooden_pickaxe"))
    assert not step_matches(dict(DIG, obj_num=1), DIG)


def test_group_pooling():
    g = GroupScore()
    g.add(score_task(list(EXPERT), EXPERT))
    g.add(score_task(EXPERT[:4], EXPERT))
    assert g.accuracy == pytest.approx(100 * (7 + 4) / (7 + 5))
    assert g.edit_distance == 1.5 and g.edit_distance_ratio == pytest.approx(3 / 14)
    assert g.to_dict()["tasks"] == 2 and g.exact == 1


def test_steps_and_records_score_alike(kb):
    from barsym.bar_io import parse_plan

    text = "".join(__import__("json").dumps(r) + "\n" for r in EXPERT)
    plan = parse_plan(text)
    assert as_records(plan) == [dict(r) for r in EXPERT]
    assert score_task(plan, EXPERT).exact
