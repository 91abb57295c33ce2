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

from collections.abc import Sequence

from ..llm import LLMBackend
from ..model import Goal, Step
from .short_calls import LLMUse, ShortCalls

SCORE_GRAMMAR = 'root ::= "10" | [1-9]\n'
SYSTEM = ("You check Minecraft plans step by step. Rate one step of the plan with a number from 1 to 10: "
          "1 means the next few steps starting from this step are likely wrong; 10 means they are completely "
          "accurate. Reply with the number only.")


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
                 max_failures: int = 2, log=True):
        self.backend, self.seed, self.temperature = backend, seed, temperature
        self.use = LLMUse()
        self.calls = ShortCalls(backend, self.use, seed=seed, temperature=temperature, max_failures=max_failures,
                                log=log)
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

    @property
    def down(self) -> str | None:
        return self.calls.down

    def _one(self, goal: Goal, steps: tuple[Step, ...], number: int) -> int | None:
        text = self.calls.ask(self.messages(goal, steps, number), SCORE_GRAMMAR, 3,
                              f"score step {number} of {goal.count} {goal.item}", lambda t: parse_score(t) is not None)
        return None if text is None else parse_score(text)
