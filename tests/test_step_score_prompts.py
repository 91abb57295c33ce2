"""The step scorer's prompts, pinned as golden text files (tests/golden/prompts/step-*.txt).

The methods were measured on the labelled step set (docs/step-scores.md) and
``barsym distill`` teaches a model their exact messages: a changed character
changes what was measured and what a distilled model was taught. If a change
is meant, ``BARSYM_UPDATE_GOLDEN=1 pytest tests/test_step_score_prompts.py``
rewrites the files; review them in the commit's diff.
"""

from __future__ import annotations

import pytest
from test_prompt_prefixes import check_golden

from barsym.consistency.config import ScoreMethod
from barsym.kb import Rules
from barsym.llm.fake import ScriptedLLM
from barsym.model import Goal, Step, StepType
from barsym.reasoning.scoring.step_scorer import LLMStepScorer

PLAN = (
    Step(type=StepType.MINE, item="logs", count=3),
    Step(type=StepType.CRAFT, item="planks", count=9),
    Step(type=StepType.CRAFT, item="stick", count=2),
    Step(type=StepType.CRAFT, item="crafting_table", count=1),
    Step(type=StepType.CRAFT, item="wooden_pickaxe", count=1),
    Step(type=StepType.MINE, item="cobblestone", count=1, tool="wooden_pickaxe"),
)


@pytest.mark.parametrize("method", list(ScoreMethod), ids=[m.value for m in ScoreMethod])
def test_the_step_score_prompts_are_unchanged(kb, method):
    scorer = LLMStepScorer(ScriptedLLM([], probabilities=True), method=method, rules=Rules(kb), log=False)
    messages = scorer.messages(Goal(item="cobblestone", count=1), PLAN, 6)  # fails: no dig down before it
    assert [m["role"] for m in messages] == ["system", "user"]
    check_golden(f"step-{method.value}", messages)
