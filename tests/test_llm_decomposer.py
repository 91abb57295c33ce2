"""The LLM decomposition loop with a scripted model: no GGUF, no randomness.

Each test scripts the model's replies (ScriptedLLM raises if the code under test
asks for one more than scripted, so the number of calls is asserted too) and
checks what the decomposer made of them: provenance, feedback, fallback, and
the counters that reach PlanResult.stats.
"""

from __future__ import annotations

import re

import pytest

from barsym.eval import load_dataset
from barsym.llm import BackendTimeoutError, BackendUnavailableError, LLMError, ScriptedLLM, lint_gbnf
from barsym.model import Goal
from barsym.planner import (
    Decomposition,
    PlanContext,
    PlanningError,
    SymbolicDecomposer,
    check_decomposition,
    layer_goal,
    make_planner,
)
from barsym.planner.registry import graph_for
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder, ReplyError, parse_reply, render_goal, render_reply
from barsym.reasoning.planners.backward.bar_decomposer import LLMDecomposer
from barsym.reasoning.prompts.few_shot import EXAMPLE_ROOT, FEW_SHOT_GOALS
from barsym.testing.fakes import asked
from testdata import BAR_DIR

GOOD_PICKAXE = "craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table"


@pytest.fixture(scope="module")
def graph(kb):
    return graph_for(kb)


@pytest.fixture(scope="module")
def symbolic(kb, graph):
    return SymbolicDecomposer(kb, graph=graph, prefer=kb.prefer)


def decomposer(kb, graph, replies, **options):
    # The scripted model ignores grammars, so its replies are what vocab mode lets through;
    # graph mode would also answer some goals itself, without a call. Tests that want graph say so.
    options.setdefault("mode", "vocab")
    fake = ScriptedLLM(replies)
    return LLMDecomposer(kb, fake, graph=graph, **options), fake


def ctx(kb, root="diamond_pickaxe"):
    return PlanContext(kb, Goal(item=root))


def oracle(kb, symbolic):
    """A scripted 'model' that answers every goal as the symbolic decomposer would."""

    def answer(call):
        text = asked(call.last_user_message)
        count, _, item = text.partition(" ")
        goal = layer_goal(int(item)) if count == "layer" else Goal(item=item, count=int(count))
        return render_reply(symbolic.decompose(goal, PlanContext(kb, EXAMPLE_ROOT)))

    return answer


# ----------------------------------------------------------------- the conversation


def test_accepted_first_try(kb, graph):
    d, fake = decomposer(kb, graph, [GOOD_PICKAXE])
    answer = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    assert answer.provenance == "llm" and str(answer.step) == "craft 1 stone_pickaxe"
    assert [(g.item, g.count) for g in answer.subgoals] == [("cobblestone", 3), ("stick", 2), ("crafting_table", 1)]
    assert check_decomposition(kb, Goal(item="stone_pickaxe"), answer) == []
    call = fake.calls[0]
    # with facts the question is their line alone, each way as the reply would write it
    assert call.last_user_message == "Known: craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table."
    assert call.temperature == 0
    assert call.messages[0]["role"] == "system" and call.grammar and lint_gbnf(call.grammar) == []
    assert (d.stats.llm_calls, d.stats.accepted_first_try, d.stats.fallbacks) == (1, 1, 0)


def test_feedback_then_acceptance(kb, graph):
    wrong = "craft 1 stone_pickaxe: 1 cobblestone, 2 stick, 1 crafting_table"
    d, fake = decomposer(kb, graph, [wrong, GOOD_PICKAXE])
    answer = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    assert answer.provenance == "llm-after-feedback"
    retry = fake.calls[1].messages
    assert retry[-2] == {"role": "assistant", "content": wrong}
    assert "missing ingredient" in retry[-1]["content"] and "need 3" in retry[-1]["content"]
    assert retry[-1]["content"].endswith("Goal: 1 stone_pickaxe")
    assert retry[:-2] == fake.calls[0].messages  # same prefix: the KV cache is reused
    s = d.stats
    assert (s.llm_calls, s.retries, s.rejected, s.accepted_after_feedback, s.accepted_first_try) == (2, 1, 1, 1, 0)


def test_retry_limit_then_symbolic_fallback(kb, graph, symbolic):
    replies = [f"craft 1 stone_pickaxe: {n} cobblestone, 2 stick, 1 crafting_table" for n in (1, 2, 4)]
    d, fake = decomposer(kb, graph, replies, max_retries=2)
    answer = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    assert answer.provenance == "symbolic-fallback" and "LLM gave up" in answer.note
    assert answer.step == symbolic.decompose(Goal(item="stone_pickaxe"), ctx(kb)).step
    assert (d.stats.llm_calls, d.stats.rejected, d.stats.fallbacks) == (3, 3, 1) and fake.remaining == 0


def test_a_repeated_refused_answer_ends_greedy_retries(kb, graph):
    wrong = "craft 1 stone_pickaxe: 1 cobblestone, 2 stick, 1 crafting_table"
    d, _ = decomposer(kb, graph, [wrong, wrong], max_retries=5, retry_temperature=0)  # a 3rd call: script exhausted
    assert d.decompose(Goal(item="stone_pickaxe"), ctx(kb)).provenance == "symbolic-fallback"
    assert d.stats.llm_calls == 2


def test_retries_sample_with_the_seed_and_may_repeat(kb, graph):
    wrong = "craft 1 stone_pickaxe: 1 cobblestone, 2 stick, 1 crafting_table"
    d, fake = decomposer(kb, graph, [wrong, wrong, GOOD_PICKAXE], seed=5)
    assert d.decompose(Goal(item="stone_pickaxe"), ctx(kb)).provenance == "llm-after-feedback"
    assert [(c.temperature, c.seed) for c in fake.calls] == [(0.0, 5), (0.8, 5), (0.8, 5)]


@pytest.mark.parametrize("replies", [["", "   ", "\n"], ["Sure! Here is a plan:", "craft", "mine many logs"]])
def test_garbage_or_empty_replies_fall_back(kb, graph, replies):
    d, fake = decomposer(kb, graph, replies)
    answer = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    assert answer.provenance == "symbolic-fallback" and d.stats.unreadable >= 2
    assert "Reply on one line like" in fake.calls[1].last_user_message


def test_backend_error_is_retried_without_feedback(kb, graph):
    d, fake = decomposer(kb, graph, [BackendTimeoutError("slow"), GOOD_PICKAXE])
    answer = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    assert answer.provenance == "llm" and d.stats.backend_errors == 1
    assert fake.calls[0].messages == fake.calls[1].messages


def test_backend_down_goes_straight_to_fallback(kb, graph):
    d, fake = decomposer(kb, graph, [BackendUnavailableError("refused"), LLMError("HTTP 500")])
    first = d.decompose(Goal(item="stone_pickaxe"), ctx(kb))
    second = d.decompose(Goal(item="furnace"), ctx(kb))  # no call: the script is empty
    assert first.provenance == second.provenance == "symbolic-fallback"
    assert d.down and "HTTP 500" in d.down and "backend down" in second.note
    assert d.stats.backend_errors == 2 and len(fake.calls) == 2


def test_loops_and_waste_are_refused(kb, graph):
    loop = "mine 3 cobblestone with stone_pickaxe: 1 stone_pickaxe, layer 1"  # a stone pickaxe needs cobblestone
    d, fake = decomposer(kb, graph, [loop], max_retries=0)
    answer = d.decompose(Goal(item="cobblestone", count=3), ctx(kb))
    assert answer.provenance == "symbolic-fallback" and "stone_pickaxe is itself made with cobblestone" in answer.note
    d, fake = decomposer(kb, graph, ["craft 4 stick: 2 planks, 1 crafting_table", "craft 4 stick: 2 planks"])
    assert d.decompose(Goal(item="stick", count=4), ctx(kb)).provenance == "llm-after-feedback"
    assert "fits the 2x2 inventory grid" in fake.calls[1].last_user_message
    d, fake = decomposer(kb, graph, ["craft 1 diamond_pickaxe: 100 diamond, 2 stick, 1 crafting_table"], max_retries=0)
    answer = d.decompose(Goal(item="diamond_pickaxe"), ctx(kb))
    assert answer.provenance == "symbolic-fallback" and "too many ingredients" in answer.note


def test_a_goal_waiting_further_up_is_a_loop(kb, graph):
    context = ctx(kb)
    context.path = (Goal(item="iron_ingot", count=3),)
    d, fake = decomposer(kb, graph, ["craft 1 iron_nugget: 1 iron_ingot"], max_retries=0)
    answer = d.decompose(Goal(item="iron_nugget"), context)
    assert answer.provenance == "symbolic-fallback"
    assert "iron_ingot is already being obtained further up this plan" in answer.note


# ----------------------------------------------------------------- context answers


def test_spare_units_are_answered_from_context(kb, graph):
    context = ctx(kb)
    context.produced["stick"], context.requested["stick"] = 4, 2
    d, fake = decomposer(kb, graph, [])
    answer = d.decompose(Goal(item="stick", count=2), context)
    assert answer.provenance == "context" and answer.yields == 0 and not fake.calls
    assert d.stats.context_answers == 1


def test_partly_spare_asks_only_for_the_rest(kb, graph):
    context = ctx(kb)
    context.produced["planks"], context.requested["planks"] = 4, 2
    d, fake = decomposer(kb, graph, ["craft 3 planks: 1 logs"])
    answer = d.decompose(Goal(item="planks", count=5), context)
    assert fake.calls[0].last_user_message == "Known: craft 3 planks: 1 logs."
    assert str(answer.step) == "craft 5 planks" and answer.yields == 4 and answer.provenance == "llm"
    assert check_decomposition(kb, Goal(item="planks", count=5), answer) == []


def test_budgeted_fuel_is_credited(kb, graph):
    context = ctx(kb)
    context.burn["iron_ingot"], context.smelted["iron_ingot"] = 3.0, 1
    d, _ = decomposer(kb, graph, ["smelt 2 iron_ingot: 2 iron_ore, 1 furnace"])
    answer = d.decompose(Goal(item="iron_ingot", count=2), context)
    assert answer.provenance == "llm" and answer.fuel_credit == 2


def test_graph_mode_answers_forced_goals_without_a_call(kb, graph):
    d, fake = decomposer(kb, graph, [], mode="graph")
    assert str(d.decompose(Goal(item="logs", count=3), ctx(kb)).step) == "mine 3 logs"
    assert d.decompose(layer_goal(1), ctx(kb)).provenance == "graph"
    assert not fake.calls and d.stats.graph_forced == 2


# ----------------------------------------------------------------- whole plans


def test_bar_with_an_oracle_model_reproduces_the_symbolic_plan(kb, symbolic):
    fake = ScriptedLLM([oracle(kb, symbolic)] * 200)
    bar = make_planner("bar", kb, backend=fake)
    result = bar.plan(Goal(item="iron_pickaxe"))
    reference = make_planner("symbolic", kb).plan(Goal(item="iron_pickaxe"))
    assert [str(s) for s in result.plan.steps] == [str(s) for s in reference.plan.steps]
    assert result.validation.valid and result.planner == "bar"
    provenance = {p for i in range(len(result.plan)) for p in result.provenance(i)}
    assert provenance <= {"llm", "context", "graph"} and "llm" in provenance
    stats = result.stats.to_dict()  # the JSON barsym plan --json prints
    assert stats["accepted_first_try"] == stats["llm_goals"] > 0 and stats["fallbacks"] == 0
    assert stats["llm_calls"] + stats["reused_replies"] == stats["llm_goals"]
    # every real call was accepted, and no distinct goal took two accepted calls (reused replies are free)
    assert stats["accepted_calls"] == stats["llm_calls"] and stats["max_accepted_calls_per_goal"] == 1
    assert {"prompt_tokens", "completion_tokens", "evaluated_prompt_tokens", "seconds"} <= set(stats)


def test_each_answer_is_verified_once(kb, symbolic, monkeypatch):
    """The decomposer verifies each reply (the model's feedback); the loop checks only what it did not (issue 36)."""
    import barsym.planner.backward as loop
    import barsym.reasoning.planners.backward.bar_decomposer as asking
    from barsym.planner.verify import check_decomposition as real

    runs = {"decomposer": 0, "loop": 0}

    def counted(where):
        def check(*args, **kwargs):
            runs[where] += 1
            return real(*args, **kwargs)

        return check

    monkeypatch.setattr(asking, "check_decomposition", counted("decomposer"))
    monkeypatch.setattr(loop, "check_decomposition", counted("loop"))
    wrong = "craft 1 stone_pickaxe: 1 cobblestone, 2 stick, 1 crafting_table"
    replies = [wrong] + [oracle(kb, symbolic)] * 50  # one refused answer, then the symbolic ones
    result = make_planner("bar", kb, backend=ScriptedLLM(replies), llm_mode="vocab").plan(Goal(item="stone_pickaxe"))
    stats = result.stats.to_dict()
    assert result.validation.valid and stats["rejected"] == 1 and stats["attempts"] == 1
    answered = stats["accepted_first_try"] + stats["accepted_after_feedback"] + stats["graph_forced"]
    assert runs["decomposer"] == answered + stats["rejected"]  # each reply once, the refused one included
    # the loop checks only what no decomposer verified: spare units answered from the context, and answers
    # widened to a spare batch after the decomposer's check (their step changed: a new decomposition)
    notes = [n.decomposition.note for n in result.nodes if n.decomposition is not None]
    widened = sum("spare from an earlier batch used" in note for note in notes)
    assert stats["context_answers"] > 0 and widened > 0
    assert runs["loop"] == stats["loop_checks"] == stats["context_answers"] + widened
    assert runs["decomposer"] + runs["loop"] == stats["decompositions"] + stats["rejected"] + widened


def test_bar_plan_level_fallback_when_the_answers_do_not_fit_together(kb, symbolic, monkeypatch):
    bar = make_planner("bar", kb, backend=ScriptedLLM([oracle(kb, symbolic)] * 50))

    def broken(goal, start=None):
        raise PlanningError("no_order", "a cycle")

    monkeypatch.setattr(bar.inner, "plan", broken)
    result = bar.plan(Goal(item="stick"))
    assert result.validation.valid and result.stats.plan_fallback == "a cycle"
    assert {p for i in range(len(result.plan)) for p in result.provenance(i)} == {"symbolic-fallback"}


def test_llm_only_passes_wrong_answers_through(kb):
    fake = ScriptedLLM(["craft 1 stick: 1 logs", "mine 1 logs"])
    result = make_planner("llm-only", kb, backend=fake, llm_mode="vocab").plan(Goal(item="stick"))
    assert [str(s) for s in result.plan.steps] == ["mine 1 logs", "craft 1 stick"]
    assert not result.validation.valid and result.validation.errors[0].code == "missing_ingredient"
    assert result.stats.llm_verified is False and result.stats.llm.fallbacks == 0


def test_llm_only_stops_a_branch_it_cannot_read(kb):
    fake = ScriptedLLM(["craft 4 stick: 2 planks", "no idea", "still no idea", "nope"])
    planner = make_planner("llm-only", kb, backend=fake, max_retries=2, llm_mode="vocab")
    result = planner.plan(Goal(item="stick", count=4))
    node = result.nodes[1]
    assert node.goal.item == "planks" and node.unanswered and "unusable reply" in node.unanswered
    assert not result.validation.valid and result.stats.llm.unanswered == 1
    assert "unanswered" in result.tree()["subgoals"][0]


def test_llm_only_with_a_dead_backend_returns_an_empty_invalid_plan(kb):
    fake = ScriptedLLM([BackendUnavailableError("down"), BackendUnavailableError("down")])
    result = make_planner("llm-only", kb, backend=fake, llm_mode="vocab").plan(Goal(item="stick"))
    assert len(result.plan) == 0 and not result.validation.valid and result.nodes[0].unanswered


# ----------------------------------------------------------------- prompts and grammars (no model)


def test_few_shot_examples_are_correct_and_not_task_answers(kb, graph):
    d, _ = decomposer(kb, graph, [])
    prefix = d.prompts.prefix
    assert prefix[0]["role"] == "system" and len(prefix) == 1 + 2 * len(FEW_SHOT_GOALS)
    targets = {t.goal.item for t in load_dataset(BAR_DIR, kb)}
    for goal, (question, answer) in zip(FEW_SHOT_GOALS, zip(prefix[1::2], prefix[2::2])):
        assert asked(question["content"]) == render_goal(goal) and answer["role"] == "assistant"
        reply = parse_reply(answer["content"], kb)
        assert goal.item not in targets
        assert check_decomposition(kb, goal, Decomposition(reply.step, reply.subgoals)) == []
    assert d.prompts.first(Goal(item="stick"))[:-1] == list(prefix)  # fixed prefix, goal last


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "empty"),
        ("craft four stick", "cannot read"),
        ("craft 4 stik: 2 planks", "unknown item 'stik'"),
        ("craft 4 stick: two planks", "cannot read subgoal"),
        ("build 4 stick", "unknown step type"),
        ("mine 3 iron_ore: layer 7", "layer 7 does not exist"),
        ("craft 0 stick", "out of range"),
    ],
)
def test_parse_errors_say_what_is_wrong(kb, text, words):
    with pytest.raises(ReplyError, match=words):
        parse_reply(text, kb)


def test_parse_is_lenient_about_layout(kb):
    reply = parse_reply("  mine 3 logs: nothing.\nextra chatter", kb)
    assert str(reply.step) == "mine 3 logs" and reply.subgoals == ()


def _regex(grammar: str) -> re.Pattern:
    """The (non-recursive) GBNF subset the builders emit, inlined into one regex."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())
    token = re.compile(r'\s*(?:(?P<lit>"(?:\\.|[^"\\])*")|(?P<cls>\[[^\]]*\])|(?P<name>[a-zA-Z0-9-]+)|(?P<op>[()|?]))')

    def expand(name: str) -> str:
        out, pos, body = [], 0, rules[name]
        while pos < len(body):
            m = token.match(body, pos)
            pos = m.end()
            if m["lit"]:
                out.append(re.escape(m["lit"][1:-1].replace('\\"', '"')))
            elif m["cls"]:
                out.append(m["cls"])
            elif m["name"]:
                out.append(f"(?:{expand(m['name'])})")
            else:
                out.append("(?:" if m["op"] == "(" else m["op"])
        return "".join(out)

    return re.compile(expand("root"))


def test_vocab_grammar(kb, graph):
    grammar = GrammarBuilder(kb, graph).vocab()
    assert lint_gbnf(grammar) == [] and "_" not in "".join(line.split("::=")[0] for line in grammar.splitlines())
    rx = _regex(grammar)
    for good in [
        GOOD_PICKAXE,
        "mine 3 logs",
        "dig down with wooden_pickaxe: 1 wooden_pickaxe, layer 2",
        "craft 1 stick: 1 diamond",
    ]:  # wrong, but inside the vocabulary
        assert rx.fullmatch(good), good
    for bad in [
        "craft 1 unobtainium",
        "build 1 stick",
        "craft 1000 stick",
        "mine 3 logs: layer 9",
        "craft 1 stick: " + ", ".join(["1 logs"] * 7),
        "Sure! craft 1 stick",
    ]:
        assert not rx.fullmatch(bad), bad


def test_graph_grammar_only_admits_the_goals_producers(kb, graph):
    builder = GrammarBuilder(kb, graph)
    pickaxe = builder.for_goal(Goal(item="stone_pickaxe"))
    assert lint_gbnf(pickaxe.text) == [] and pickaxe.forced is None
    rx = _regex(pickaxe.text)
    assert rx.fullmatch(GOOD_PICKAXE)
    assert rx.fullmatch("craft 1 stone_pickaxe: 2 cobblestone, 1 stick, 1 crafting_table")  # too few: verifier
    for bad in [
        "craft 1 stone_axe: 3 cobblestone, 2 stick, 1 crafting_table",  # another item
        "craft 2 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table",  # another count
        "mine 1 stone_pickaxe",
        "craft 1 stone_pickaxe: 3 cobblestone, 2 stick",  # no table
        "craft 1 stone_pickaxe: 4 cobblestone, 2 stick, 1 crafting_table",  # more than used
        "craft 1 stone_pickaxe: 3 logs, 2 stick, 1 crafting_table",
        "craft 1 stone_pickaxe: 3 blackstone, 2 stick, 1 crafting_table",
    ]:  # not in the overworld
        assert not rx.fullmatch(bad), bad
    cobble = _regex(builder.for_goal(Goal(item="cobblestone", count=5)).text)
    assert cobble.fullmatch("mine 5 cobblestone with wooden_pickaxe: 1 wooden_pickaxe, layer 1")
    assert not cobble.fullmatch("mine 5 cobblestone with stone_pickaxe: 1 stone_pickaxe, layer 1")  # would loop
    smelt = _regex(builder.for_goal(Goal(item="iron_ingot", count=3)).text)
    assert smelt.fullmatch("smelt 3 iron_ingot: 3 iron_ore, 2 planks, 1 furnace")
    assert not smelt.fullmatch("smelt 3 iron_ingot: 3 iron_ore, 3 planks, 1 furnace")  # 2 planks burn for 3
    credited = _regex(builder.for_goal(Goal(item="iron_ingot", count=3), fuel_credit=3).text)
    assert credited.fullmatch("smelt 3 iron_ingot: 3 iron_ore, 1 furnace")
    assert builder.for_goal(layer_goal(1)).forced == "dig down with wooden_pickaxe: 1 wooden_pickaxe"
    deep = _regex(builder.for_goal(layer_goal(3)).text)
    assert deep.fullmatch("dig down with iron_pickaxe: 1 iron_pickaxe, layer 2")
    assert not deep.fullmatch("dig down with iron_pickaxe: 1 iron_pickaxe")


def test_graph_grammar_offers_only_bars_conventional_choices(kb, graph):
    builder = GrammarBuilder(kb, graph)
    # one dig down per pickaxe tier: the plan's pickaxe for the layer is the only option
    assert (
        builder.for_goal(layer_goal(3), dig_tool="iron_pickaxe").forced
        == "dig down with iron_pickaxe: 1 iron_pickaxe, layer 2"
    )
    # the lowest tier that can mine an item, not an iron pickaxe made for one coal
    assert builder.for_goal(Goal(item="coal")).forced == "mine 1 coal with wooden_pickaxe: 1 wooden_pickaxe, layer 1"
    smelt = _regex(builder.for_goal(Goal(item="iron_ingot", count=3)).text)
    assert not smelt.fullmatch("smelt 3 iron_ingot: 3 iron_ore, 1 coal, 1 furnace")  # fuel is budgeted as planks
    table = _regex(builder.for_goal(Goal(item="crafting_table")).text)
    assert table.fullmatch("craft 1 crafting_table: 4 planks")
    assert not table.fullmatch("craft 1 crafting_table: 4 spruce_planks")  # the family name, as BAR writes
    torch = _regex(builder.for_goal(Goal(item="torch", count=4)).text)  # no family: the model still chooses
    assert torch.fullmatch("craft 4 torch: 1 coal, 1 stick") and torch.fullmatch("craft 4 torch: 1 charcoal, 1 stick")


@pytest.mark.parametrize(
    "goal, reply, objection",
    [
        (Goal(item="coal"), "mine 1 coal with iron_pickaxe: 1 iron_pickaxe, layer 1", "with the wooden_pickaxe"),
        (layer_goal(3), "dig down with stone_pickaxe: 1 stone_pickaxe, layer 2", "layer 3 with the iron_pickaxe"),
        (Goal(item="iron_ingot"), "smelt 1 iron_ingot: 1 iron_ore, 1 coal, 1 furnace", "budget fuel as planks"),
        (Goal(item="crafting_table"), "craft 1 crafting_table: 4 spruce_planks", "family name planks"),
    ],
)
def test_the_verifier_refuses_valid_but_unconventional_answers(kb, graph, goal, reply, objection):
    d, fake = decomposer(kb, graph, [reply], max_retries=0)
    answer = d.decompose(goal, ctx(kb))  # a diamond_pickaxe plan: every layer is dug with its own tier
    assert answer.provenance == "symbolic-fallback" and objection in answer.note


# ----------------------------------------------------------------- process-level plumbing


def test_the_model_is_loaded_once_per_process(kb, monkeypatch, tmp_path):
    from barsym.reasoning.calls import backends

    loads = []
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(backends, "_backends", {})
    monkeypatch.setattr(backends, "make_backend", lambda **kw: loads.append(kw) or ScriptedLLM([]))
    first = make_planner("bar", kb, model=str(model), threads=2)
    second = make_planner("llm-only", kb, model=str(model), threads=2)
    assert len(loads) == 1 and first.decomposer.backend is second.decomposer.backend
    make_planner("bar", kb, model=str(model), threads=1)  # other settings, another backend
    assert len(loads) == 2


def test_progress_line_only_on_a_terminal(kb, monkeypatch):
    import io

    from barsym.commands import progress_line
    from barsym.commands.progress_line import TerminalProgress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress_line, "REFRESH", None)  # each step read by hand, as rich's thread would draw it
    shown, hidden = TerminalProgress(Tty()), TerminalProgress(io.StringIO())
    seen = []
    for progress in (shown, hidden):
        progress.task("task 1/2 stone/stone_axe")
        bar = make_planner(
            "bar",
            kb,
            backend=ScriptedLLM(["craft 4 stick: 2 planks", "craft 2 planks: 1 logs", "mine 1 logs"]),
            progress=lambda event, progress=progress: (progress(event), seen.append(progress.render())),
            llm_mode="vocab",
        )
        bar.plan(Goal(item="stick", count=4))
        progress.clear()
    text = "\n".join(seen)
    assert "task 1/2 stone/stone_axe: preparing the model's few-shot prompt ..." in text
    assert "task 1/2 stone/stone_axe: goal 1 of about 3: 4 stick (0 LLM calls" in text
    assert "goal 3 of about 3: 1 logs (3 LLM calls, 3 accepted, 0 fallbacks)" in text
    assert shown.stream.getvalue().endswith("\x1b[2K") and hidden.stream.getvalue() == ""
