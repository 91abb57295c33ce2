"""State consistency, part 2: forward repair between anchors, on every expert plan and with a scripted model.

Four faults are injected into every executable expert plan (a dropped dig
down, the crafting table moved after its first use, a dropped furnace, a
count cut in half); the repaired plan must validate and lie within 2 edits
(BAR's EditDistanceHard) of the expert plan. The model's side (scores, the
LLM repairer, its fallback, bar-sc) runs against the scripted fake.
"""

from __future__ import annotations

import pytest

from barsym.bar_io import read_plan
from barsym.consistency import CannotRepair, ConsistencyConfig, Provenance, StateConsistency
from barsym.consistency.stats import RepairStats
from barsym.llm import BackendTimeoutError, ScriptedLLM
from barsym.metrics import as_records, edit_distance
from barsym.model import Goal, Plan, Step, StepType
from barsym.reasoning import model_consistency
from barsym.reasoning.planners.backward.bar_sc import ModelNeeds
from barsym.reasoning.scoring.forward_repairer import SYSTEM as REPAIR_SYSTEM
from barsym.reasoning.scoring.step_scorer import SCORE_GRAMMAR, LLMStepScorer
from barsym.reasoning.scoring.step_scorer import SYSTEM as SCORE_SYSTEM
from barsym.testing.fakes import asked
from barsym.testing.faults import repair_faults
from testdata import EXPERT_FILES

PLANS = {p.stem: read_plan(p) for p in EXPERT_FILES}


@pytest.fixture(scope="module")
def engine(kb):
    return StateConsistency(kb)


@pytest.fixture(scope="module")
def executable(validator):
    return {name: plan for name, plan in PLANS.items() if validator.validate(plan).valid}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_injected_faults_are_repaired_within_two_edits(name, engine, executable, validator):
    plan = executable.get(name)
    if plan is None:
        pytest.skip("the expert plan itself is invalid (note_block)")
    goal = plan.default_goal()
    cases = 0
    for _, fault, steps in repair_faults(plan, validator):
        faulty = Plan(steps=tuple(steps))
        if validator.validate(faulty, goal=goal).valid:
            continue  # e.g. a cut count the plan's spare units still cover
        cases += 1
        result = engine.repair(faulty, goal=goal)
        assert result.valid_after, f"{fault}: {result.after.errors[0].message}"
        assert validator.validate(result.plan, goal=goal).valid
        distance = edit_distance(as_records(result.plan), as_records(plan))
        assert distance <= 2, f"{fault}: {distance} edits from the expert plan: {[str(s) for s in result.plan]}"
    assert cases > 0


def test_a_valid_plan_comes_back_unchanged(engine):
    for name in ("iron_pickaxe", "stone_axe", "diamond_pickaxe"):
        plan = PLANS[name]
        result = engine.repair(plan)
        assert result.plan.steps == plan.steps and not result.rounds and not result.changed
        assert result.provenance == [Provenance.KEPT] * len(plan)


def test_provenance_marks_exactly_the_new_steps(engine, kb):
    plan = PLANS["iron_pickaxe"]
    dig = next(i for i, s in enumerate(plan.steps) if s.type is StepType.DIG_DOWN)
    faulty = Plan(steps=plan.steps[:dig] + plan.steps[dig + 1 :])
    result = engine.repair(faulty)  # one step dropped: the smallest repair puts it back, no rounds
    assert result.plan.steps == plan.steps and not result.rounds
    assert result.edit == f"insert {plan.steps[dig]} before step {dig + 1}"
    assert [i for i, p in enumerate(result.provenance) if p is not Provenance.KEPT] == [dig]
    assert result.provenance[dig] is Provenance.REPAIRED_SYMBOLIC
    assert result.stats.repaired_steps == 1 and result.stats.valid_after
    windows = StateConsistency(kb, ConsistencyConfig(anchors="sliding-window", k=3, rounds=6)).repair(faulty)
    record = windows.rounds[0].to_dict()  # the same fault through BAR's rounds: windows, each repaired
    assert record["windows"] and record["repairs"] and windows.edit is None and windows.valid_after
    assert [i for i, p in enumerate(windows.provenance) if p is not Provenance.KEPT]


def test_a_plan_that_skips_the_way_gets_its_raw_materials_in_one_go(engine, validator):
    # llm-only's plan for the stone pickaxe (the 135M model without facts): it names the goal but
    # not the sticks, pickaxe and cobblestone on the way. The repair mines every log they take at
    # the start, as the expert does, rather than one log now and two more before the pickaxe.
    craft = StepType.CRAFT
    broken = Plan(
        steps=tuple(
            Step(type=craft, item=item, count=n)
            for item, n in (("logs", 3), ("planks", 4), ("crafting_table", 1), ("stone_pickaxe", 1))
        )
    )
    result = engine.repair(broken, goal=Goal(item="stone_pickaxe"))
    assert validator.validate(result.plan, goal=Goal(item="stone_pickaxe")).valid
    logs = [s for s in result.plan.steps if s.item == "logs"]
    assert [(s.type, s.count) for s in logs] == [(StepType.MINE, 3)]
    assert result.plan.steps[0] == logs[0]
    assert as_records(result.plan)[0] == as_records(PLANS["stone_pickaxe"])[0]  # the expert's first step


def test_a_goal_nothing_makes_cannot_be_repaired(engine):
    plan = Plan(steps=PLANS["iron_pickaxe"].steps)
    with pytest.raises(CannotRepair, match="nether_star"):
        engine.repair(plan, goal=Goal(item="beacon"))
    with pytest.raises(CannotRepair):
        engine.repair(plan, goal=Goal(item="unobtainium"))


def test_a_start_inventory_is_repaired_from(kb, validator):
    from barsym.sim import State

    start = State.start({"wooden_pickaxe": 1, "crafting_table": 1, "stick": 2})
    plan = Plan(steps=tuple(s for s in PLANS["stone_pickaxe"].steps[5:] if s.type is not StepType.DIG_DOWN))
    result = StateConsistency(kb).repair(plan, goal=Goal(item="stone_pickaxe"), start=start)
    assert result.valid_after and validator.validate(result.plan, goal=Goal(item="stone_pickaxe"), start=start).valid


def test_configurations_are_checked(kb):
    for bad in ({"t": 0}, {"t": 11}, {"k": 0}, {"rounds": 0}, {"anchors": "random"}):
        with pytest.raises(ValueError):
            ConsistencyConfig(**bad)
    with pytest.raises(ValueError, match="needs a language model"):
        StateConsistency(kb, ConsistencyConfig(scores="llm"))
    with pytest.raises(ValueError, match="needs a language model"):
        StateConsistency(kb, ConsistencyConfig(repairer="llm"))
    with pytest.raises(ValueError, match="needs a language model"):
        model_consistency(kb, ConsistencyConfig(scores="both"))  # the model side, without a model
    assert model_consistency(kb).llm_repairer is None  # simulator scores, symbolic repairer: no model


# ---- the model's side, scripted ------------------------------------------------------------


def test_llm_scores_use_bar_wording_a_grammar_and_one_prefix():
    llm = ScriptedLLM(["9", "2", "10"])
    scorer = LLMStepScorer(llm)
    plan = PLANS["stone_axe"].steps[:3]
    assert scorer.score(plan, Goal(item="stone_axe")) == [9, 2, 10]
    assert all(c.grammar == SCORE_GRAMMAR for c in llm.calls)
    assert "1 means the next few steps starting from this step are likely wrong" in llm.calls[0].messages[0]["content"]
    assert "10 means they are completely accurate" in SCORE_SYSTEM
    prompts = [c.messages[-1]["content"] for c in llm.calls]
    prefix = prompts[0][: prompts[0].index("Rate step")]
    assert all(p.startswith(prefix) for p in prompts) and "Task: obtain 1 stone_axe." in prefix
    assert [p.rsplit("\n", 1)[-1] for p in prompts] == [f"Rate step {i + 1}: {s}" for i, s in enumerate(plan)]
    assert scorer.score(plan, Goal(item="stone_axe")) == [9, 2, 10] and len(llm.calls) == 3  # cached
    assert scorer.stats.reused_replies == 3 and scorer.stats.llm_calls == 3


def test_llm_scores_survive_a_failing_backend():
    llm = ScriptedLLM([BackendTimeoutError, BackendTimeoutError, "5"])
    scorer = LLMStepScorer(llm)
    assert scorer.score(PLANS["stone_axe"].steps[:3], Goal(item="stone_axe")) == [None, None, None]
    assert scorer.down and len(llm.calls) == 2  # two failures in a row: no more calls


def test_llm_scores_pick_the_anchors(kb):
    plan = PLANS["iron_pickaxe"]
    dig = next(i for i, s in enumerate(plan.steps) if s.type is StepType.DIG_DOWN)
    faulty = Plan(steps=plan.steps[:dig] + plan.steps[dig + 1 :])
    n = len(faulty)
    scores = ["10"] * n
    scores[dig] = "2"  # the model flags the step after the dropped dig down
    engine = model_consistency(kb, ConsistencyConfig(scores="llm", rounds=1), backend=ScriptedLLM(scores))
    result = engine.repair(faulty)
    assert result.rounds[0].pairs[0].start == dig + 1 and result.rounds[0].llm[dig] == 2
    assert result.valid_after and result.plan.steps == plan.steps
    assert result.stats.scoring_llm_calls == n


def test_llm_scores_that_flag_nothing_repair_nothing(kb):
    faulty = Plan(steps=PLANS["iron_pickaxe"].steps[1:])
    engine = model_consistency(kb, ConsistencyConfig(scores="llm"), backend=ScriptedLLM(["10"] * 40))
    result = engine.repair(faulty)
    assert not result.valid_after and not result.changed and result.rounds[0].windows == []


def test_both_takes_the_lower_score(kb):
    faulty = Plan(steps=PLANS["iron_pickaxe"].steps[:5] + PLANS["iron_pickaxe"].steps[6:])
    engine = model_consistency(kb, ConsistencyConfig(scores="both", rounds=1), backend=ScriptedLLM(["1"] + ["10"] * 40))
    sim, llm = engine.scores(faulty, faulty.default_goal())
    chosen = engine.chosen(sim, llm)
    assert chosen[0] == 1 and chosen == [min(s.score, v) for s, v in zip(sim, llm)]


def first_option(call) -> str:
    """A scripted repairer that always takes the first option the grammar offers."""
    grammar = call.grammar
    return grammar.split('"')[1]


def test_the_llm_repairer_chooses_among_applicable_steps(kb, validator):
    plan = PLANS["iron_pickaxe"]
    table = next(i for i, s in enumerate(plan.steps) if s.item == "crafting_table")
    faulty = Plan(steps=plan.steps[:table] + plan.steps[table + 1 :])  # no crafting table at all
    llm = ScriptedLLM([first_option] * 40)
    engine = model_consistency(kb, ConsistencyConfig(repairer="llm", fallback=False), backend=llm)
    result = engine.repair(faulty)
    assert result.valid_after and validator.validate(result.plan).valid
    assert Provenance.REPAIRED_LLM in result.provenance and Provenance.REPAIRED_SYMBOLIC not in result.provenance
    for call in llm.calls:  # every call offers steps under a grammar of exactly those options
        assert call.messages[0]["content"] == REPAIR_SYSTEM and call.grammar.startswith("root ::= ")
        assert "Options:" in call.messages[-1]["content"] and "Now: layer" in call.messages[-1]["content"]
    assert result.stats.repair_llm_calls == len(llm.calls)


def test_the_llm_repairer_falls_back_to_the_symbolic_one(kb):
    plan = PLANS["iron_pickaxe"]
    table = next(i for i, s in enumerate(plan.steps) if s.item == "crafting_table")
    faulty = Plan(steps=plan.steps[:table] + plan.steps[table + 1 :])
    engine = model_consistency(kb, ConsistencyConfig(repairer="llm"), backend=ScriptedLLM([BackendTimeoutError] * 10))
    result = engine.repair(faulty)
    assert result.valid_after and result.stats.symbolic_fallbacks >= 1
    assert Provenance.REPAIRED_SYMBOLIC in result.provenance
    alone = model_consistency(
        kb, ConsistencyConfig(repairer="llm", fallback=False, rounds=1), backend=ScriptedLLM([BackendTimeoutError] * 10)
    )
    assert not alone.repair(faulty).valid_after  # no fallback: the unfinished window stays as it was left


def test_bar_sc_plans_with_the_scripted_model(kb, validator):
    """bar-sc = llm-only's decomposition (here the symbolic answers, scripted) and then state consistency."""
    from barsym.planner import make_planner

    goal = Goal(item="stone_pickaxe")
    # a wrong answer: too few planks for the sticks, which state consistency repairs
    reply = _scripted_decomposer(kb, goal, {"stick": "craft 2 stick: 1 planks"})
    llm = ScriptedLLM([reply] * 200)
    planner = make_planner("bar-sc", kb, backend=llm)
    result = planner.plan(goal)
    assert result.planner == "bar-sc" and result.validation.valid
    assert validator.validate(result.plan, goal=goal).valid
    c = result.stats.section(RepairStats)
    assert c.valid_before is False and c.valid_after is True and c.repaired_steps >= 1
    labels = {p for i in range(len(result.plan)) for p in result.provenance(i)}
    assert "kept" in labels and labels & {"repaired-llm", "repaired-symbolic"}


def test_consistency_on_any_planner(kb):
    from barsym.planner import make_planner

    planner = make_planner("symbolic", kb, consistency=True)
    result = planner.plan(Goal(item="iron_pickaxe"))
    assert planner.name == "symbolic+sc" and result.validation.valid
    assert result.stats.section(RepairStats).valid_before and result.stats.section(RepairStats).rounds == 0
    assert all("kept" in result.provenance(i) for i in range(len(result.plan)))


def _scripted_decomposer(kb, goal, wrong: dict[str, str]):
    """Replies of a scripted model: the symbolic decomposer's answers, ``wrong`` ones for some items, 10 to
    every score, the first option to every repair question."""
    from barsym.planner.decomposer import PlanContext
    from barsym.planner.symbolic import SymbolicDecomposer
    from barsym.reasoning.grammars.reply_grammar import render_reply

    symbolic = SymbolicDecomposer(kb)

    def reply(call) -> str:
        system = call.messages[0]["content"]
        if system == SCORE_SYSTEM:
            return "10"
        if system == REPAIR_SYSTEM:
            return first_option(call)
        question = asked(call.last_user_message)
        if "layer" in question:
            return "dig down with wooden_pickaxe: 1 wooden_pickaxe"
        count, item = question.split(" ", 1)
        if item in wrong:
            return wrong[item]
        return render_reply(symbolic.decompose(Goal(item=item, count=int(count)), PlanContext(kb, goal)))

    return reply


def test_repair_needs_model_plans_what_is_missing_with_the_model(kb, validator):
    """--repair-needs model: what a window misses is planned by the model's own decomposition from the state
    there (llm-only's, no fallback); the simulator plays it. The plan's wrong stick answer (too few planks) is
    repaired by steps the model planned, and the repair counts the model's calls for them."""
    from barsym.planner import make_planner

    goal = Goal(item="stone_pickaxe")
    llm = ScriptedLLM([_scripted_decomposer(kb, goal, {"stick": "craft 2 stick: 1 planks"})] * 400)
    planner = make_planner("bar-sc", kb, backend=llm, needs="model", fallback=False, llm_mode="vocab")
    result = planner.plan(goal)
    c = result.stats.section(RepairStats)
    assert c.valid_before is False and c.valid_after is True and validator.validate(result.plan, goal=goal).valid
    assert c.needs_llm_calls and c.needs_llm_calls > 0 and c.symbolic_fallbacks == 0
    assert (
        "planning needs" in " ".join(c.lines())
        and "needs planned by the model" in planner.consistency.config.describe()
    )
    assert isinstance(planner.consistency.needs.planner, ModelNeeds)


def test_repair_needs_model_uses_no_plan_of_the_graph(kb):
    """With the model's needs, a window's missing crafting table comes from the model or not at all: here its
    backend is down, nothing is planned, and the plan stays invalid; the graph's needs repair the same plan."""
    from barsym.planner import make_planner

    plan = PLANS["iron_pickaxe"]
    table = next(i for i, s in enumerate(plan.steps) if s.item == "crafting_table")
    faulty = Plan(steps=plan.steps[:table] + plan.steps[table + 1 :])  # no crafting table at all
    dead = make_planner("llm-only", kb, backend=ScriptedLLM([BackendTimeoutError] * 40), llm_mode="vocab")
    alone = model_consistency(kb, ConsistencyConfig(needs="model"), need_planner=dead).repair(faulty)
    assert not alone.valid_after and alone.stats.needs_llm_calls is not None
    new = [s for s, p in zip(alone.plan.steps, alone.provenance) if p is not Provenance.KEPT]
    assert all(s.item != "crafting_table" for s in new)
    assert model_consistency(kb, ConsistencyConfig()).repair(faulty).valid_after  # the graph plans it


def test_repair_needs_model_needs_a_model(kb):
    with pytest.raises(ValueError, match="needs a language model"):
        model_consistency(kb, ConsistencyConfig(needs="model"))
    assert ConsistencyConfig(needs="model").uses_llm
    engine = model_consistency(kb, ConsistencyConfig(needs="model"), backend=ScriptedLLM(["x"]))  # barsym repair's
    decomposer = engine.needs.planner.planner.decomposer
    assert (decomposer.mode, decomposer.verify, engine.needs.planner.planner.name) == ("vocab", False, "repair-needs")
