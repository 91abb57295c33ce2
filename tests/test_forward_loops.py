"""DEPS and chain of thought stop early on a loop and keep to a deadline (issue 35, item 2).

The model here is a scripted fake that answers badly on purpose: one step written
25 times, the same failing plan in every round, or every call taking 20 s of a
fake clock. Nothing is timed: the fake clock moves only when the fake answers,
so the tests count calls and read the stop reason.
"""

from __future__ import annotations

import pytest

from barsym.llm import LLMOptions, ScriptedLLM
from barsym.model import Goal
from barsym.planner import make_planner
from barsym.planner.registry import graph_for
from barsym.planner.stats import LLMStats
from barsym.reasoning.loop_limits import DEFAULT_DEADLINE, Deadline, repeated_run
from barsym.reasoning.planners.forward.cot import COT_TOKENS, CotPlanner
from barsym.reasoning.planners.forward.deps import DepsPlanner, StopReason
from barsym.reasoning.planners.forward.stats import DepsSummary
from barsym.reasoning.spec import PlannerSpec
from cli_run import one_line, run

GOAL = Goal(item="stone_pickaxe", count=1)
LOOP = "mine 3 logs\ncraft 4 planks\n" + "craft 1 stone_bricks\n" * 25 + "done"
WHY = "A stone pickaxe needs cobblestone."


class FakeClock:
    """Seconds that pass only when the fake model answers."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def slow(text: str, clock: FakeClock, seconds: float = 20.0):
    """A reply that takes ``seconds`` of the fake clock."""

    def answer(call):
        clock.now += seconds
        return text

    return answer


def deps(kb, replies, rounds=5, deadline=DEFAULT_DEADLINE, clock=None):
    backend = ScriptedLLM(replies, LLMOptions(n_ctx=8192))
    graph = graph_for(kb)
    options = {"graph": graph, "log": False, "facts": True, "deps_rounds": rounds, "feedback_world": "deterministic"}
    planner = DepsPlanner(kb, PlannerSpec.of("deps", {**options, "deadline": deadline}), backend)
    planner.clock = clock
    return planner, backend


def test_a_repeated_step_run_stops_deps_after_the_round_that_wrote_it(kb):
    planner, backend = deps(kb, [LOOP])
    result = planner.plan(GOAL)
    trace = result.trace
    assert len(backend.calls) == 1 and trace.stopped is StopReason.REPEATED_STEP
    assert trace.problem == "round 0 wrote 'craft 1 stone_bricks' 25 times in a row"
    assert [str(s) for s in result.plan.steps].count("craft 1 stone_bricks") == 1 and trace.rounds[0].folded == 24
    assert "stopped: repeated step (round 0 wrote 'craft 1 stone_bricks' 25 times in a row)" in result.to_text()
    assert result.to_dict()["trace"]["rounds"][0]["folded_repeats"] == 24


def test_a_round_that_changes_nothing_stops_deps(kb):
    failing = "mine 3 logs\ncraft 4 planks\ncraft 1 stone_pickaxe\ndone"
    planner, backend = deps(kb, [failing, WHY, failing])
    result = planner.plan(GOAL)
    assert backend.remaining == 0 and len(backend.calls) == 3
    assert result.trace.stopped is StopReason.NO_CHANGE and len(result.trace.rounds) == 2
    assert result.trace.problem == "round 1 wrote the plan of round 0 again"


def test_deps_starts_no_call_after_its_deadline(kb):
    clock = FakeClock()
    plans = [f"mine {n} logs\ncraft 4 planks\ncraft 1 stone_pickaxe\ndone" for n in range(1, 7)]
    replies = [slow(text, clock) for plan in plans for text in (plan, WHY)]
    planner, backend = deps(kb, replies, deadline=45, clock=clock)
    result = planner.plan(GOAL)
    # round 0 at 20 s, its explanation at 40 s, round 1 at 60 s: past 45 s, so no explanation and no round 2
    assert len(backend.calls) == 3 and len(result.trace.rounds) == 2
    assert result.trace.stopped is StopReason.DEADLINE and result.trace.problem == "the deadline of 45 s passed"
    assert result.stats.section(DepsSummary).stopped == "deadline"


def test_a_deadline_caps_a_reply_to_the_tokens_the_measured_rate_allows():
    clock = FakeClock()
    deadline = Deadline(10, clock)
    measured = LLMStats(completion_tokens=100, llm_seconds=10.0)  # 10 tokens a second
    assert deadline.tokens(360, LLMStats()) == 360  # nothing measured yet: the planner's own cap
    clock.now = 5.0
    assert deadline.tokens(360, measured) == 40  # 5 s left, 80 % of it at 10 tokens a second
    clock.now = 9.0
    assert deadline.tokens(360, measured) == 0  # 8 tokens would not make a step
    assert Deadline(None, clock).tokens(360, measured) == 360


def test_a_first_call_spent_on_the_prefix_or_cut_at_one_token_is_not_a_rate():
    clock = FakeClock()
    deadline = Deadline(45, clock)
    # a busy machine: 150 s building the few-shot prefix, then one token before the reply's deadline
    first = LLMStats(completion_tokens=1, llm_seconds=201.0, prefix_seconds=150.0)
    assert deadline.tokens(640, first) == 640  # not 0: every later plan would skip its call
    primed = LLMStats(completion_tokens=100, llm_seconds=160.0, prefix_seconds=150.0)  # 10 tokens a second
    assert deadline.tokens(640, primed) == 360  # 45 s left, 80 % of it at the rate the prefix leaves out


def test_repeated_run_finds_the_longest_run_but_not_moves(kb):
    from barsym.bar_io import step_from_text

    steps = [step_from_text(t) for t in ["mine 1 logs", *["craft 1 stick"] * 3, *["dig down with wooden_pickaxe"] * 4]]
    found = repeated_run(steps)
    assert found is not None and str(found[0]) == "craft 1 stick" and found[1] == 3
    assert repeated_run(steps[:3]) is None


def cot(kb, replies, clock=None, deadline=DEFAULT_DEADLINE):
    backend = ScriptedLLM(replies)
    graph = graph_for(kb)
    options = {"graph": graph, "log": False, "facts": True, "deadline": deadline}
    planner = CotPlanner(kb, PlannerSpec.of("cot", options), backend)
    planner.clock = clock
    return planner, backend


def test_cot_says_when_the_model_looped_and_folds_the_loop(kb):
    line = "craft 1 stone_bricks; inventory: 1 stone_bricks\n"
    planner, backend = cot(kb, ["mine 3 logs; inventory: 3 logs\n" + line * 19 + "done"])
    result = planner.plan(GOAL)
    assert len(backend.calls) == 1 and result.trace.folded == 18
    assert result.trace.stopped == "the model wrote 'craft 1 stone_bricks' 19 times in a row (folded into one)"
    assert result.trace.stopped in result.to_text()


def test_cot_caps_its_reply_by_the_rate_of_earlier_plans_and_asks_nothing_past_the_deadline(kb):
    clock = FakeClock()
    reply = "mine 3 logs; inventory: 3 logs\ndone"
    planner, backend = cot(kb, [slow(reply, clock, 50.0), reply], clock=clock, deadline=45)
    first = planner.plan(GOAL)  # nothing measured before it: the full cap, and it took 50 s of the fake clock
    assert backend.calls[0].max_tokens == COT_TOKENS and first.trace.stopped is None
    planner.measured = LLMStats(completion_tokens=20, llm_seconds=20.0)  # a slow model: 1 token a second
    second = planner.plan(GOAL)
    assert backend.calls[1].max_tokens == 36 and second.trace.stopped is None  # 45 s x 80 % x 1 token/s
    planner.measured = LLMStats(completion_tokens=20, llm_seconds=200.0)  # 0.1 token a second: not even a step
    third = planner.plan(GOAL)
    assert len(backend.calls) == 2 and third.trace.stopped == "the deadline of 45 s passed"
    assert not third.plan.steps


@pytest.mark.parametrize("planner", ["deps", "cot"])
def test_a_model_that_answers_badly_ends_the_plan_with_a_reason(kb, planner):
    """The command's path with a stand-in that takes the first word the grammar allows, every time."""
    built = make_planner(planner, kb, llm_stand_in="first", log=False)
    result = built.plan(GOAL)
    assert not result.validation.valid
    if planner == "deps":
        assert result.trace.stopped in (StopReason.REPEATED_STEP, StopReason.NO_CHANGE, StopReason.DEADLINE)
        assert result.trace.problem


@pytest.mark.parametrize("name", ["bar", "symbolic", "llm-only"])
def test_deadline_is_for_the_forward_planners_only(capsys, name):
    code, out, err = run(capsys, "plan", "stick", "--planner", name, "--deadline", "10")
    assert code == 2 and out == "" and one_line(err) and "--deadline applies to --planner deps, cot," in err


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_a_bad_deadline_is_one_line(capsys, value):
    code, out, err = run(capsys, "plan", "stick", "--planner", "deps", "--deadline", value)
    assert code == 2 and one_line(err) and "--deadline" in err, err


def test_a_stand_in_stops_writing_when_the_reply_deadline_has_passed():
    import time

    from barsym.llm.stand_in import make_stand_in
    from barsym.llm.time_limit import reply_deadline

    messages, grammar = [{"role": "user", "content": "x"}], 'root ::= "a" root | "b"'
    assert make_stand_in("first").complete(messages, grammar=grammar, max_tokens=2).text == "a" * 12
    with reply_deadline(time.monotonic() - 1):
        cut = make_stand_in("first").complete(messages, grammar=grammar, max_tokens=2)
    assert (cut.text, cut.finish_reason) == ("", "length")
