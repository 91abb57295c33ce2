"""State consistency with the real embedded SmolLM2-135M: few and small (the session's model, ~10 s).

What must hold whatever the model answers: every score is an integer from 1
to 10 (the grammar), the plan's prefix is served from the KV cache after the
first step, and the LLM repairer's plan is valid because every step it could
choose applies (checked by the simulator). How good the model's scores are is
measured by bench/bench_consistency.py, not asserted here.
"""

from __future__ import annotations

import pytest

from barsym.bar_io import read_plan
from barsym.consistency import ConsistencyConfig
from barsym.consistency.anchors import SCORE_METHOD_KEY
from barsym.consistency.config import DEFAULT_SCORE_METHOD, ScoreMethod
from barsym.model import Plan, StepType
from barsym.reasoning import model_consistency
from barsym.reasoning.scoring.step_scorer import LLMStepScorer, default_method
from testdata import EXPERT_FILES

pytestmark = pytest.mark.llm

PLAN = read_plan(next(p for p in EXPERT_FILES if p.stem == "stone_pickaxe"))


@pytest.fixture
def backend(real_backend):
    """The session's real model (loaded once per run, tests/conftest.py), its KV cache empty."""
    return real_backend


def test_real_scores_are_one_to_ten_and_the_prefix_is_cached(backend):
    scorer = LLMStepScorer(backend)
    scores = scorer.score(PLAN.steps, PLAN.default_goal())
    assert len(scores) == len(PLAN) and all(isinstance(s, int) and 1 <= s <= 10 for s in scores)
    stats = scorer.stats
    assert stats.llm_calls == len(PLAN) and stats.unreadable == 0 and stats.completion_tokens <= 2 * len(PLAN)
    # about one prompt plus short completions: after the first call only the step's own line is new
    assert stats.evaluated_prompt_tokens < stats.prompt_tokens / 3


def test_the_taught_model_declares_the_score_method_it_was_taught_and_reads_it(backend):
    """The shipped adapter declares the method it was taught (its card says which); the base GGUF alone declares
    none. Where the card names another as measured best with it, that one is the default."""
    from barsym.llm.llamacpp.adapter import read_card

    assert backend.model_metadata("general.architecture") == "llama"  # the base's keys, not the adapter's
    taught = read_card()["score_method"]
    assert backend.model_metadata(SCORE_METHOD_KEY) == taught
    measured = read_card().get("default_score_method")
    want = (ScoreMethod(measured), "card") if measured else (ScoreMethod(taught), "model")
    assert default_method(backend) == want
    assert DEFAULT_SCORE_METHOD is ScoreMethod.EXPECTED  # what a model that declares nothing is read with


def test_the_real_llm_repairer_fixes_a_dropped_dig_down(backend, validator):
    dig = next(i for i, s in enumerate(PLAN.steps) if s.type is StepType.DIG_DOWN)
    faulty = Plan(steps=PLAN.steps[:dig] + PLAN.steps[dig + 1 :])
    engine = model_consistency(validator.kb, ConsistencyConfig(repairer="llm", fallback=False), backend=backend)
    result = engine.repair(faulty)
    assert result.valid_after and validator.validate(result.plan).valid
    assert result.stats.symbolic_fallbacks == 0


def test_real_recall_check_asks_once_per_distinct_step_and_scores_in_range(backend, validator):
    """recall-check through the real model: the decomposer's question once per distinct step, a score in 1-10."""
    from barsym.kb import Rules

    scorer = LLMStepScorer(backend, method=ScoreMethod.RECALL_CHECK, rules=Rules(validator.kb), log=False)
    steps = PLAN.steps[:4]  # logs, planks, sticks, a table: four short questions
    raw = scorer.raw(steps, PLAN.default_goal())
    assert len(raw) == len(steps) and all(v is None or 1.0 <= v <= 10.0 for v in raw)
    assert sum(v is not None for v in raw) >= 2  # the vocabulary grammar keeps replies readable
    assert scorer.stats.llm_calls <= len({(s.type, s.item, s.count) for s in steps})
