"""DEPS and chain-of-thought with the real embedded SmolLM2-135M: what holds whatever the model answers.

llama.cpp accepts both plan grammars, every reply is read into steps of the
game's vocabulary, DEPS' trace has one entry per executed plan and an
explanation between them, and greedy decoding repeats itself. How good the
plans are is measured by bench/bench_planners.py and bench/bench_deps.py, not
asserted here. About a minute on 2 cores.
"""

from __future__ import annotations

import pytest

from barsym.model import Goal
from barsym.planner import make_planner

pytestmark = pytest.mark.llm


@pytest.fixture
def backend(real_backend):
    """The session's real model (loaded once per run, tests/conftest.py), its KV cache empty."""
    return real_backend


def test_deps_runs_its_rounds_with_the_real_model(backend, kb):
    # no deadline in effect: a plan cut by the clock on a loaded machine would differ from the next one
    planner = make_planner(
        "deps", kb, backend=backend, deps_rounds=1, feedback_world="deterministic", log=False, deadline=86400
    )
    result = planner.plan(Goal(item="wooden_pickaxe"))
    trace = result.trace
    assert 1 <= len(trace.rounds) <= 2 and result.stats.llm.llm_calls == 2 * len(trace.rounds) - 1
    assert result.plan.steps == trace.rounds[-1].steps
    for r in trace.rounds[:-1]:
        assert r.success or (r.description and r.explanation is not None)
    assert all(kb.is_known(s.item) for s in result.plan.steps if s.item)
    again = planner.plan(Goal(item="wooden_pickaxe"))
    assert again.plan.steps == result.plan.steps  # greedy: the same dialogue, the same plan


def test_cot_reasons_first_then_writes_a_plan_with_the_real_model(backend, kb):
    """Without facts (the default) the grammar holds the reply to the reasoning lines, then the plan after the
    mark; the plan has no inventories to compare (``written`` is for the facts format)."""
    from barsym.reasoning.planners.forward.cot_needs import REASONING_LINES

    result = make_planner("cot", kb, backend=backend, log=False).plan(Goal(item="stick"))
    assert result.plan.steps and 1 <= len(result.trace.reasoning) <= REASONING_LINES
    assert result.trace.written == [] and not result.trace.unreadable
    assert all(kb.is_known(s.item) for s in result.plan.steps if s.item)
