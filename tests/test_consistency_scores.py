"""State consistency, part 1: the simulator's step scores, the anchors they pick, the cross-check.

The formula is documented in barsym.consistency.scores; these tests pin its
values on hand-made plans (a failure here, one step on, a knock-on, an
intrinsic failure, the goal missing at the end, a step that made too few),
the anchor rules (step scoring, the seeded sliding window, merging) and the
statistics of the cross-check.
"""

from __future__ import annotations

import pytest

from barsym.bar_io import parse_plan
from barsym.consistency import (
    AnchorPair,
    FailureKind,
    merge,
    score_plan,
    simulator_scores,
    sliding_window,
    step_scoring,
)
from barsym.consistency.crosscheck import CrossCheck, ranks, spearman
from barsym.consistency.scores import formula
from barsym.model import Goal, Plan, Step, StepType


def steps(*lines: str) -> Plan:
    out = []
    for line in lines:
        words = line.split()
        if words[:2] == ["dig", "down"]:
            out.append(Step(type=StepType.DIG_DOWN, tool=words[3] if len(words) > 3 else None))
        else:
            tool = words[4] if len(words) > 4 else None
            out.append(Step(type=StepType(words[0]), item=words[2], count=int(words[1]), tool=tool))
    return Plan(steps=tuple(out))


WOODEN = ("mine 3 logs", "craft 9 planks", "craft 4 stick", "craft 1 crafting_table", "craft 1 wooden_pickaxe")


def test_the_formula_for_k_3():
    assert [formula(d, FailureKind.STATE, 3) for d in range(4)] == [2, 4, 6, 8]
    assert [formula(d, FailureKind.INTRINSIC, 3) for d in range(4)] == [1, 3, 5, 7]
    assert [formula(d, FailureKind.KNOCK_ON, 3) for d in range(4)] == [3, 5, 7, 9]
    assert all(formula(d, kind, k) <= 9 for k in range(1, 12) for d in range(k + 1) for kind in FailureKind)


def test_a_valid_plan_scores_ten_everywhere(validator):
    scores, validation = score_plan(validator, steps(*WOODEN))
    assert validation.valid and [s.score for s in scores] == [10] * 5
    assert all(s.fault is None for s in scores)


def test_scores_fall_as_the_failure_comes_closer(validator):
    plan = steps("mine 3 logs", "craft 9 planks", "craft 4 stick", "craft 1 wooden_pickaxe", "craft 1 crafting_table")
    scores, _ = score_plan(validator, plan)
    assert [s.score for s in scores] == [8, 6, 4, 2, 10]  # step 4 misses the table; step 5 runs, and then the end
    assert scores[3].fault.kind is FailureKind.STATE and scores[3].fault.code == "missing_station"
    assert scores[0].distance == 3 and "step 4 fails" in scores[0].reason()


def test_knock_on_and_intrinsic_failures(validator):
    plan = steps(
        "mine 3 logs",
        "craft 9 planks",
        "craft 1 wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "mine 2 cobblestone with wooden_pickaxe",
        "craft 1 stone_pickaxe",
    )
    scores, _ = score_plan(validator, plan, Goal(item="stone_pickaxe"))
    kinds = [s.fault.kind if s.fault and s.distance == 0 else None for s in scores]
    assert kinds[2] is FailureKind.STATE  # no sticks, no table
    assert kinds[3] is FailureKind.KNOCK_ON and scores[3].score == 3  # the pickaxe was never made
    bad = steps("mine 3 logs", "craft 1 unobtainium_block")
    scores, _ = score_plan(validator, bad, Goal(item="logs"))
    assert scores[1].fault.kind is FailureKind.INTRINSIC and scores[1].score == 1


def test_a_named_tool_too_weak_is_intrinsic(validator):
    plan = steps(
        "mine 3 logs",
        "craft 9 planks",
        "craft 4 stick",
        "craft 1 crafting_table",
        "craft 1 wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "dig down with wooden_pickaxe",
        "mine 1 iron_ore with wooden_pickaxe",
    )
    scores, _ = score_plan(validator, plan, Goal(item="iron_ore"))
    assert scores[-1].fault.kind is FailureKind.INTRINSIC and scores[-1].score == 1


def test_the_goal_missing_at_the_end_lowers_the_last_steps(validator):
    plan = steps(*WOODEN[:4])
    scores, validation = score_plan(validator, plan, Goal(item="wooden_pickaxe"))
    assert not validation.valid
    # the sticks (step 3) are for the pickaxe that is never made: the plan does no worse without them
    assert [s.score for s in scores] == [10, 8, 4, 4]
    assert scores[2].fault.kind is FailureKind.UNNEEDED
    assert scores[-1].fault.step == 5 and scores[-1].fault.code == "goal_not_reached"


def test_an_unneeded_step_scores_four(validator):
    plan = steps(
        "mine 3 logs",
        "mine 2 dirt",
        "craft 9 planks",
        "craft 4 stick",
        "craft 1 crafting_table",
        "craft 1 wooden_pickaxe",
        "craft 1 stone_pickaxe",
    )
    scores, _ = score_plan(validator, plan, Goal(item="stone_pickaxe"))
    assert scores[1].fault.kind is FailureKind.UNNEEDED and scores[1].score == 4 and scores[0].score == 10


def test_a_step_that_made_too_few_is_blamed(validator):
    plan = steps(
        "mine 3 logs",
        "craft 4 planks",
        "craft 4 stick",
        "craft 1 crafting_table",
        "craft 1 wooden_pickaxe",
        "mine 1 dirt",
        "mine 1 dirt",
        "mine 1 dirt",
        "craft 1 oak_button",
    )
    scores, _ = score_plan(validator, plan, Goal(item="oak_button"))
    cut = scores[1]  # 4 planks: the table and the pickaxe run short
    assert cut.blamed and cut.score == formula(1, FailureKind.STATE, 3) and "made too few" in cut.reason()


def test_k_changes_the_lookahead(validator):
    plan = steps("mine 3 logs", "craft 9 planks", "craft 4 stick", "craft 1 wooden_pickaxe", "craft 1 crafting_table")
    validation = validator.validate(plan)
    assert [s.score for s in simulator_scores(validator, validation, k=1)] == [10, 10, 6, 2, 10]
    with pytest.raises(ValueError):
        simulator_scores(validator, validation, k=0)


def test_step_scoring_anchors():
    assert step_scoring([10, 4, 10, 2, 10], t=5, k=3) == [AnchorPair(2, 5), AnchorPair(4, 6)]
    assert step_scoring([10, 10], t=5, k=3) == []
    assert step_scoring([5, 4], t=5, k=1) == [AnchorPair(2, 3)]  # below t, not at it
    for bad in ((0, 3), (11, 3), (5, 0)):
        with pytest.raises(ValueError):
            step_scoring([1], *bad)


def test_merge_joins_overlapping_and_touching_pairs():
    pairs = [AnchorPair(2, 5), AnchorPair(4, 7), AnchorPair(7, 9), AnchorPair(12, 14)]
    assert merge(pairs) == [AnchorPair(2, 9), AnchorPair(12, 14)]
    assert merge([]) == []


def test_the_sliding_window_is_seeded_spaced_and_slides():
    for n in (1, 5, 13, 30):
        for k in (1, 3, 4):
            pairs = sliding_window(n, k, seed=7, round_number=1)
            assert pairs == sliding_window(n, k, seed=7, round_number=1)
            assert all(1 <= p.start <= n and p.end == min(p.start + k, n + 1) for p in pairs)
            assert all(b.start - a.start == 2 * k for a, b in zip(pairs, pairs[1:]))
            assert merge(pairs) == pairs  # pairs never touch
    offsets = {sliding_window(30, 3, seed=0, round_number=r)[0].start for r in range(1, 20)}
    assert offsets == {1, 2, 3}  # new offsets in later rounds
    assert sliding_window(0, 3) == []


def test_spearman_and_ranks():
    assert ranks([10, 2, 2, 5]) == [4.0, 1.5, 1.5, 3.0]
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 3], [10, 10, 10]) is None  # a constant side has no ranks to correlate
    assert spearman([1], [1]) is None
    assert spearman([2, 4, 6, 8, 10], [1, 3, 2, 5, 4]) == pytest.approx(0.8)


def test_the_cross_check_counts_anchors_on_both_sides():
    check = CrossCheck(t=5)
    check.add([10, 4, 2, 10], [10, 3, 10, 2])
    check.add([10, 10], [None, 10])
    d = check.to_dict()
    assert d["steps"] == 5 and d["missing"] == 1 and d["plans"] == 2
    assert (d["simulator_anchors"], d["llm_anchors"], d["both_anchors"]) == (2, 2, 1)
    assert d["precision"] == 0.5 and d["recall"] == 0.5
    assert d["llm_distribution"] == {2: 1, 3: 1, 10: 3}
    empty = CrossCheck().to_dict()
    assert empty["precision"] is None and empty["spearman"] is None


def test_plans_parsed_from_text_score_the_same(validator):
    text = "".join('{"type": "mine", "obj_name": "logs", "obj_num": 1}\n' for _ in range(2))
    scores, _ = score_plan(validator, parse_plan(text), Goal(item="planks"))
    assert [s.score for s in scores] == [4, 4]  # no planks are made: neither log is needed for the goal
