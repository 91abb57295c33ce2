"""The model's step scores: BAR's 1-10 rating, one short completion per step.

BAR asks the model to rate every step of a plan: 1 means the next few steps
starting from it are likely wrong, 10 that they are completely accurate. The
prompt is the task and the whole numbered plan, then the one step to rate;
the reply is constrained by a grammar that admits only an integer from 1 to 10.

**Cost.** Everything up to the step number is the same for every step of a
plan, so llama.cpp's prefix cache evaluates the plan once and each further
call only the ~10 tokens that name the step; a 20-step plan costs about one
prompt plus 20 completions of one or two tokens. Scores are cached per
(goal, plan) in the process: with greedy decoding the model would answer the
same, and the repair rounds and the ablation's configurations re-score the
same plans.

A backend failure leaves that step without a score (None); after two in a
row the scorer stops calling for the rest of the process.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..llm import LLMBackend, LLMError
from ..model import Goal, Step

SCORE_GRAMMAR = 'root ::= "10" | [1-9]\n'
SYSTEM = ("You check Minecraft plans step by step. Rate one step of the plan with a number from 1 to 10: "
          "1 means the next few steps starting from this step are likely wrong; 10 means they are completely "
          "accurate. Reply with the number only.")


@dataclass
class LLMUse:
    """What the model cost: calls, tokens, time, failures (scoring and repair alike)."""

    calls: int = 0
    forced: int = 0  # choices with a single option, taken without a call
    prompt_tokens: int = 0
    evaluated_prompt_tokens: int = 0
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0
    unreadable: int = 0
    replayed_calls: int = 0  # scores served from the cache: the calls a run of its own would make
    replayed_seconds: float = 0.0  # ... and the time they took when they were made
    problems: list[str] = field(default_factory=list)

    def record(self, reply, started: float) -> None:
        self.calls += 1
        self.seconds += time.perf_counter() - started
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        evaluated = reply.evaluated_prompt_tokens
        self.evaluated_prompt_tokens += reply.prompt_tokens if evaluated is None else evaluated
        self.cached_prompt_tokens += reply.cached_prompt_tokens or 0

    def add(self, other: "LLMUse") -> None:
        for name, value in asdict(other).items():
            if name == "problems":
                self.problems.extend(other.problems)
            else:
                setattr(self, name, getattr(self, name) + value)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["replayed_seconds"] = round(self.replayed_seconds, 3)
        out["problems"] = list(dict.fromkeys(self.problems))[:3]
        return out


def numbered(steps: Sequence[Step]) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start=1))


def task_text(goal: Goal, steps: Sequence[Step]) -> str:
    return f"Task: obtain {goal.count} {goal.item}.\nPlan:\n{numbered(steps)}"


def parse_score(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and 1 <= int(text) <= 10 else None


class LLMStepScorer:
    """Rates every step of a plan with the model (see the module docstring)."""

    def __init__(self, backend: LLMBackend, *, seed: int = 0, temperature: float = 0.0,
                 max_failures: int = 2):
        self.backend, self.seed, self.temperature = backend, seed, temperature
        self.max_failures = max_failures
        self.use = LLMUse()
        self.down: str | None = None
        self._failures = 0
        self._cache: dict[tuple, tuple[list[int | None], int, float]] = {}

    def messages(self, goal: Goal, steps: Sequence[Step], number: int) -> list[dict[str, str]]:
        question = f"Rate step {number}: {steps[number - 1]}"
        return [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"{task_text(goal, steps)}\n\n{question}"}]

    def score(self, plan: Sequence[Step], goal: Goal) -> list[int | None]:
        steps = tuple(plan)
        key = (goal.item, goal.count, steps)
        if key in self._cache and self.temperature == 0:
            scores, calls, seconds = self._cache[key]
            self.use.replayed_calls += calls
            self.use.replayed_seconds += seconds
            return list(scores)
        calls, seconds = self.use.calls, self.use.seconds
        scores = [self._one(goal, steps, i) for i in range(1, len(steps) + 1)]
        self._cache[key] = (scores, self.use.calls - calls, self.use.seconds - seconds)
        return list(scores)

    def _one(self, goal: Goal, steps: tuple[Step, ...], number: int) -> int | None:
        if self.down:
            return None
        started = time.perf_counter()
        try:
            reply = self.backend.complete(self.messages(goal, steps, number), grammar=SCORE_GRAMMAR, max_tokens=3,
                                          temperature=self.temperature, seed=self.seed)
        except LLMError as exc:
            self.use.errors += 1
            self.use.problems.append(str(exc))
            self._failures += 1
            if self._failures >= self.max_failures:
                self.down = f"{self._failures} failures in a row, last: {exc}"
            return None
        self._failures = 0
        self.use.record(reply, started)
        value = parse_score(reply.text)
        if value is None:
            self.use.unreadable += 1
        return value
