"""The LLM decomposer's per-plan counters (``PlanResult.stats`` gets them as a dict).

Typed, so the report, the progress line and the benchmark read the same
fields; ``to_dict`` is the one place they become the JSON the CLI prints.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

__all__ = ["LLMStats"]


@dataclass
class LLMStats:
    """Per-plan counters of one LLM decomposer."""

    goals: int = 0  # goals this decomposer was asked about
    context_answers: int = 0
    graph_forced: int = 0
    llm_goals: int = 0  # goals put to the model
    llm_calls: int = 0  # real backend calls (retries included)
    reused_replies: int = 0  # identical prompts answered from this plan's earlier replies
    retries: int = 0  # attempts after a goal's first
    accepted_first_try: int = 0
    accepted_after_feedback: int = 0
    accepted_calls: int = 0  # accepted answers that took a real call (not a reused reply)
    max_accepted_calls_per_goal: int = 0  # over the distinct goals put to the model (issue 4: at most 1)
    rejected: int = 0  # answers the verifier refused
    unreadable: int = 0  # replies that were not a step
    backend_errors: int = 0
    fallbacks: int = 0
    unanswered: int = 0  # llm-only: goals left without a step (unusable replies, dead backend)
    loops_cut: int = 0  # llm-only: goals the model's own answers led back to, left open
    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated_prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    evaluations: int = 0  # model evaluations (batches) per call, prompt included: 1 + reply tokens token by token
    drafted_tokens: int = 0  # reply tokens appended from the grammar's forced text
    prefix: str = ""  # how the few-shot prefix was made ready: disk, evaluated, memory ("" not primed)
    prefix_seconds: float = 0.0
    llm_seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # backend errors, for the report

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["llm_seconds"] = round(self.llm_seconds, 3)
        out["prefix_seconds"] = round(self.prefix_seconds, 3)
        out["problems"] = list(dict.fromkeys(self.problems))[:5]
        return out
