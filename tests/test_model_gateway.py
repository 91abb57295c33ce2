"""One model-call gateway (issue 36): every call -- a planner's, the step scorer's, the repairer's, ``barsym parse``'s
-- goes through :class:`~barsym.reasoning.calls.model_calls.ModelGateway`, is logged to the call log and counted in one
counters type, :class:`~barsym.planner.stats.LLMStats`. With the scripted model, no GGUF."""

from __future__ import annotations

import re
from pathlib import Path

from barsym.llm import BackendTimeoutError, Completion, LLMOptions, ScriptedLLM
from barsym.model import Goal, Step, StepType
from barsym.planner import PlanContext, SymbolicDecomposer, layer_goal, make_planner
from barsym.planner.registry import graph_for
from barsym.planner.stats import LLMStats, PlanStats
from barsym.reasoning.calls.call_log import CallLog
from barsym.reasoning.grammars.reply_grammar import render_reply
from barsym.reasoning.planners.forward.deps import DepsPlanner
from barsym.reasoning.prompts.few_shot import EXAMPLE_ROOT
from barsym.reasoning.prose.parser import ProseParser
from barsym.reasoning.scoring.step_scorer import LLMStepScorer
from barsym.reasoning.spec import PlannerSpec
from barsym.testing.fakes import asked

SRC = Path(__file__).resolve().parents[1] / "src" / "barsym"
#: where a backend may be asked anything: the gateway (shtab's ``complete`` is no model's)
ALLOWED = {"reasoning/calls/model_calls.py", "commands/completion.py"}


def reply(text: str) -> Completion:
    """A reply with token counts, as a server gives them (no evaluations: counted as reply tokens + 1)."""
    return Completion(text=text, prompt_tokens=40, completion_tokens=3, finish_reason="stop")


def test_every_backend_call_in_barsym_is_the_gateways():
    """``.complete(`` and ``.continuation_logprobs(`` appear outside the LLM package only in the gateway."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        if where.startswith(("llm/", "testing/")) or where in ALLOWED:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{where}: {m.group(0)}" for m in re.finditer(r"\.(complete|continuation_logprobs)\(", text)]
    assert found == []
    gateway = (SRC / "reasoning" / "calls" / "model_calls.py").read_text(encoding="utf-8")
    assert gateway.count("self.backend.complete(") == gateway.count("self.backend.continuation_logprobs(") == 1
    assert not list((SRC / "reasoning").rglob("short_calls.py"))  # no second wrapper, no second counters type


def test_parse_calls_go_through_the_gateway_logged_and_counted(kb, tmp_path):
    """Each clause is one call: a row of the call log with its verdict, and LLMStats counts as a planner's."""
    log = CallLog(tmp_path / "logs.db")
    model = ScriptedLLM([reply("mine 4 logs"), reply("craft 1 planks")])
    parser = ProseParser(kb, graph_for(kb), model, log=log)
    parsed = parser.parse("chop four logs, then make planks")
    assert [str(s) for s in parsed.steps] == ["mine 4 logs", "craft 1 planks"]
    rows = log.recent(None)
    assert [(r.goal, r.verdict, r.reply) for r in rows] == [
        ("parse: chop 4 logs", "accepted", "mine 4 logs"),
        ("parse: make planks", "accepted", "craft 1 planks"),
    ]
    assert rows[0].messages == model.calls[0].messages and rows[0].grammar == model.calls[0].grammar
    assert (rows[0].prompt_tokens, rows[0].completion_tokens) == (40, 3)
    stats = parsed.stats
    assert isinstance(stats, LLMStats) and parsed.calls == stats.llm_calls == 2
    assert (stats.prompt_tokens, stats.evaluated_prompt_tokens, stats.completion_tokens) == (80, 80, 6)
    assert stats.evaluations == 8 and stats.backend_errors == 0 and stats.llm_seconds > 0


def test_a_planner_and_the_step_scorer_count_in_one_counters_type(kb):
    """The same replies count the same way whoever asked: a plan's stats and the scorer's are both LLMStats."""
    symbolic = SymbolicDecomposer(kb, prefer=kb.prefer)

    def answer(call):
        count, _, item = asked(call.last_user_message).partition(" ")
        goal = layer_goal(int(item)) if count == "layer" else Goal(item=item, count=int(count))
        return reply(render_reply(symbolic.decompose(goal, PlanContext(kb, EXAMPLE_ROOT))))

    planner = make_planner("bar", kb, backend=ScriptedLLM([answer] * 30), log=False)
    planned = planner.plan(Goal(item="stone_pickaxe"))
    scorer = LLMStepScorer(ScriptedLLM([reply("7"), reply("9"), BackendTimeoutError]), log=False)
    steps = [Step(type=StepType.MINE, item="logs", count=1), Step(type=StepType.CRAFT, item="planks", count=4)]
    assert scorer.score(steps, Goal(item="planks", count=4)) == [7, 9]

    plan_stats, scored = planned.stats.llm, scorer.stats
    assert type(plan_stats) is type(scored) is LLMStats
    for stats in (plan_stats, scored):
        assert stats.llm_calls >= 2 and stats.backend_errors == 0
        calls = stats.llm_calls
        assert (stats.prompt_tokens, stats.evaluated_prompt_tokens) == (40 * calls, 40 * calls)
        assert (stats.completion_tokens, stats.evaluations) == (3 * calls, 4 * calls)
    assert scorer.score(steps, Goal(item="planks", count=4)) == [7, 9]  # the cache answers: reused, not called
    assert (scored.llm_calls, scored.reused_replies) == (2, 2)
    # the scorer's counters write and read back as a plan's do; a plan's JSON has no key it did not have
    assert LLMStats.from_dict(scored.to_dict()).reused_seconds == round(scored.reused_seconds, 3)
    assert "reused_seconds" not in plan_stats.to_dict()
    assert PlanStats.from_dict(planned.stats.to_dict()).llm == LLMStats.from_dict(plan_stats.to_dict())


def test_a_failed_short_call_is_counted_as_a_call_and_an_error_and_logged(tmp_path):
    """As a planner's failed call is: one call, one backend error, the problem kept; two in a row: down."""
    log = CallLog(tmp_path / "logs.db")
    scorer = LLMStepScorer(ScriptedLLM([BackendTimeoutError, BackendTimeoutError]), log=log)
    steps = [Step(type=StepType.MINE, item="logs", count=1)] * 3
    assert scorer.score(steps, Goal(item="logs", count=3)) == [None, None, None]
    stats = scorer.stats
    assert (stats.llm_calls, stats.backend_errors, len(stats.problems)) == (2, 2, 2) and scorer.down
    assert [r.verdict for r in log.recent(None)] == ["backend-error", "backend-error"]


def test_every_call_of_a_deps_plan_is_a_row_of_the_call_log(kb, tmp_path):
    """DEPS' explanations are logged as its plans are (they were the one kind of call the log left out)."""
    no_table = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 wooden_pickaxe\ndone"
    good = "mine 3 logs\ncraft 9 planks\ncraft 2 stick\ncraft 1 crafting_table\ncraft 1 wooden_pickaxe\ndone"
    why = "Crafting a wooden_pickaxe needs a crafting_table."
    log = CallLog(tmp_path / "logs.db")
    backend = ScriptedLLM([no_table, why, good], LLMOptions(n_ctx=4096))
    graph = graph_for(kb)
    options = {"graph": graph, "log": log, "facts": True, "feedback_world": "deterministic"}
    planner = DepsPlanner(kb, PlannerSpec.of("deps", options), backend)
    result = planner.plan(Goal(item="wooden_pickaxe"))
    rows = log.recent(None)
    assert [r.reply for r in rows] == [no_table, why, good] and len(backend.calls) == 3
    assert [r.grammar for r in rows] == [c.grammar for c in backend.calls]
    assert [r.verdict for r in rows] == ["accepted"] * 3
    assert result.stats.llm.llm_calls == 3  # plans and explanation, one counters type
