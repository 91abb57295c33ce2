"""The model's step scores: BAR's 1-10 rating, read from the model in one of four ways.

BAR asks the model to rate every step of a plan: 1 means the next few steps
starting from it are likely wrong, 10 that they are completely accurate.
One generated digit says little: the embedded 135M model wrote 10 for all
223 steps it was asked about. So the scorer has methods (:class:`ScoreMethod`):

- ``digit``: the paper's, one greedy digit under a grammar that admits 1-10;
- ``expected``: the same prompt, the expected value of the model's
  distribution over the ten answers (``"1"`` alone is ``P("1") - P("10")``:
  "10" is two tokens here);
- ``yes``: "can step N be done right after the steps before it?", scored
  ``1 + 9 P(yes)`` with P(yes) read from the first token ("yes"/"Yes" against
  "no"/"No");
- ``yes-facts``: the same question with the facts a player would look at: the
  inventory and layer the step is played from (the simulator's, the steps
  before it played as written) and what the step needs (the rule book's action
  schema). The model still has to compare them -- "needs 3 cobblestone" with
  "2 cobblestone" -- which is counting, not copying.
- ``yes-state``: the facts alone -- what the player has, the step, what it
  needs -- without the task and the numbered plan, which the facts make
  redundant (the state already is the steps before, played). Its prompt is a
  fifth of ``yes-facts``' and the same for a step wherever it stands, which is
  what makes teaching it affordable on this CPU (``barsym distill``, kind
  ``yes-state``; docs/step-scores.md). Tools are named by their lowest serving
  tier ("a wooden_pickaxe or golden_pickaxe or better").
- ``yes-recall``: the task, the steps so far, the state they leave and the
  next step -- never what the step needs. The model must know that (the
  recipe, the station, the tool, the layer) and compare it with the state,
  so its verdict is its own, a cross-check of the simulator's (the design's
  "cross-checking them against LLM scores"); in every other method with
  facts, a rule that compares the printed needs with the printed state
  scores as well as the model (docs/step-scores.md).
- ``yes-needs``: ``yes-facts`` with each need written beside what the player
  has of it ("4 logs (have 2)", "a stone_pickaxe or better (have
  wooden_pickaxe)", "being on layer 1 or deeper (on layer 0)"). Why: the
  taught ``yes-facts`` scorer ranked steps mostly by their kind (every
  ``craft planks`` alike, short of logs or not; a count cut in half scored
  AUC 0.67 against 0.91-0.97 for the other faults): finding the slot's item in
  the inventory line and comparing counts is two hops for a 135M model. Here
  the two numbers stand side by side; the model still compares them and the
  tool tiers (docs/step-scores.md).
- ``recall-check``: the model is asked what the step needs in the decomposer's
  own question without facts (``Goal: 4 stick``), and the state is compared with
  its reply by arithmetic (:mod:`.recall_check`): the knowledge is the model's,
  the comparison is not left to one yes/no token.

The probability methods need :meth:`~barsym.llm.LLMBackend.continuation_logprobs`
(the in-process model); :meth:`LLMStepScorer.raw` gives their unrounded values
(what an AUC is computed from), :meth:`LLMStepScorer.score` the 1-10 integers
anchors are chosen from. Which method is the default was decided by measuring
all of them on a labelled step set (``bench/bench_step_scores.py``,
docs/step-scores.md).

**Cost.** Everything up to the step number is the same for every step of a
plan, so the prefix cache evaluates the plan once and each further call only
the ~10-40 tokens that name the step. Scores are cached per (goal, plan) in the
process. A backend failure leaves that step without a score (None); after two
in a row the scorer stops calling for the rest of the process.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ...consistency.anchors import SCORE_METHOD_KEY
from ...consistency.config import DEFAULT_SCORE_METHOD as DEFAULT_METHOD
from ...consistency.config import ScoreMethod
from ...kb import Rules
from ...llm import LLMBackend
from ...model import Goal, Plan, Step
from ...planner.stats import LLMStats
from ...sim import State
from ...validation import Validator
from ..calls.model_calls import ModelGateway
from .recall_check import RecallCheck
from .step_needs import needs_beside_have, needs_text

__all__ = [
    "DEFAULT_METHOD",
    "LLMStepScorer",
    "ScoreMethod",
    "default_method",
    "gives_probabilities",
    "needs_beside_have",
    "needs_text",
    "parse_score",
    "task_text",
]

SCORE_GRAMMAR = 'root ::= "10" | [1-9]\n'
SYSTEM = (
    "You check Minecraft plans step by step. Rate one step of the plan with a number from 1 to 10: "
    "1 means the next few steps starting from this step are likely wrong; 10 means they are completely "
    "accurate. Reply with the number only."
)
YES_SYSTEM = (
    "You check Minecraft plans step by step. Say whether one step can be done right after the steps "
    "before it. Reply yes or no."
)
RECALL_SYSTEM = (
    "You check Minecraft plans step by step. From the steps so far and what the player has now, say whether "
    "the next step can be done now. Reply yes or no."
)
YES_STATE_SYSTEM = (
    "You check Minecraft plans step by step. Given what the player has and what one step needs, say whether "
    "the step can be done now. Reply yes or no."
)
DIGITS = [str(d) for d in range(1, 11)]
YES, NO = ("yes", "Yes"), ("no", "No")


def numbered(steps: Sequence[Step]) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start=1))


def task_text(goal: Goal, steps: Sequence[Step]) -> str:
    return f"Task: obtain {goal.count} {goal.item}.\nPlan:\n{numbered(steps)}"


def parse_score(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and 1 <= int(text) <= 10 else None


def default_method(backend: LLMBackend) -> tuple[ScoreMethod, str]:
    """The method to read ``backend``'s scores with when none is given, and why: ``"card"`` (the shipped
    adapter's card names the method measured best with it), ``"model"`` (the model
    file declares it under :data:`SCORE_METHOD_KEY`), ``"default"`` (:data:`DEFAULT_METHOD`, the
    in-process model) or ``"server"`` (``digit``: a server gives no probabilities).

    Why the model decides: a distilled scorer was taught its prompts (``yes-facts`` scored AUC
    0.82-0.85 where ``expected`` scored 0.50 with it), the embedded model scores best with
    ``expected`` (0.61, ``yes-facts`` 0.34). A declared method the backend cannot serve, or one this version does not
    know, is ignored rather than trusted."""
    if not gives_probabilities(backend):
        return ScoreMethod.DIGIT, "server"
    measured = _card_method(backend)
    if measured is not None:
        return measured, "card"
    declared = backend.model_metadata(SCORE_METHOD_KEY)
    if declared in {m.value for m in ScoreMethod}:
        return ScoreMethod(declared), "model"
    return DEFAULT_METHOD, "default"


def _card_method(backend: LLMBackend) -> ScoreMethod | None:
    """The method the shipped adapter's card names as measured best with it (``default_score_method``), where
    ``backend`` runs that adapter. Why not the method it was taught: a taught method becomes the default only
    when it wins (the adapter of 2026-12-06 was taught ``yes-recall``, which scored below a two-line rule)."""
    from ...llm.llamacpp.adapter import SHIPPED, read_card

    path = getattr(backend, "adapter_path", None)
    if path is None or Path(path).resolve() != SHIPPED.resolve():
        return None
    name = (read_card() or {}).get("default_score_method")
    return ScoreMethod(name) if name in {m.value for m in ScoreMethod} else None


class LLMStepScorer:
    """Rates every step of a plan with the model (see the module docstring).

    ``rules`` is needed by ``yes-facts``, ``yes-state`` and ``yes-needs`` only (the facts come
    from the rule book and the simulator).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        seed: int = 0,
        temperature: float = 0.0,
        max_failures: int = 2,
        log=True,
        method: ScoreMethod | str | None = ScoreMethod.DIGIT,
        rules: Rules | None = None,
    ):
        """``method`` None: :func:`default_method` (the model's declared method, else :data:`DEFAULT_METHOD`
        for the in-process model, ``digit`` for an HTTP server); :attr:`method_source` says which."""
        self.backend, self.seed, self.temperature = backend, seed, temperature
        self.method_source = "given"
        if method is None:
            method, self.method_source = default_method(backend)
        self.method = ScoreMethod(method)
        if self.method.needs_probabilities and not gives_probabilities(backend):
            raise ValueError(
                f"the {self.method.value} step scores need token probabilities, which "
                f"{type(backend).__name__} does not give; use the digit method"
            )
        if self.method.needs_rules and rules is None:
            raise ValueError(f"the {self.method.value} step scores need the rule book (rules=...)")
        self.rules = rules
        self.validator = Validator(rules.kb, rules) if rules is not None else None
        self.stats = LLMStats()  # every call of this scorer, and the scores replayed from its cache
        self.gateway = ModelGateway(
            backend, seed=seed, temperature=temperature, max_failures=max_failures, log=log, stats=self.stats
        )
        self._cache: dict[tuple, tuple[list[float | None], int, float]] = {}
        self.recall = RecallCheck(rules, self.gateway) if self.method is ScoreMethod.RECALL_CHECK and rules else None

    # ---- prompts ------------------------------------------------------------------------
    @property
    def method_text(self) -> str:
        """The method and why it was chosen, as a report names it ("yes-facts, declared by the model")."""
        why = {
            "given": "",
            "card": ", measured best with the shipped adapter (its card)",
            "model": ", declared by the model",
            "default": ", the default",
            "server": ", a server's",
        }
        return self.method.value + why[self.method_source]

    def messages(self, goal: Goal, steps: Sequence[Step], number: int) -> list[dict[str, str]]:
        if self.recall is not None:
            asked = self.recall.asked(steps[number - 1], self._before(steps, number))
            return self.recall.messages(asked) if asked is not None else []
        if self.method in (ScoreMethod.DIGIT, ScoreMethod.EXPECTED):
            question = f"Rate step {number}: {steps[number - 1]}"
            return [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"{task_text(goal, steps)}\n\n{question}"},
            ]
        if self.method is ScoreMethod.YES_RECALL:
            return [
                {"role": "system", "content": RECALL_SYSTEM},
                {"role": "user", "content": self._recall_question(goal, steps, number)},
            ]
        if self.method is ScoreMethod.YES_STATE:
            return [
                {"role": "system", "content": YES_STATE_SYSTEM},
                {"role": "user", "content": self._state_question(steps, number)},
            ]
        question = f"Can step {number} ({steps[number - 1]}) be done right after the steps before it?"
        return [
            {"role": "system", "content": YES_SYSTEM},
            {"role": "user", "content": f"{task_text(goal, steps)}\n\n{self._facts(steps, number)}{question}"},
        ]

    def _facts(self, steps: Sequence[Step], number: int) -> str:
        if self.method not in (ScoreMethod.YES_FACTS, ScoreMethod.YES_NEEDS):
            return ""
        assert self.rules is not None
        before = self._before(steps, number)
        if self.method is ScoreMethod.YES_NEEDS:
            needs = needs_beside_have(self.rules, steps[number - 1], before)
        else:
            needs = needs_text(self.rules, steps[number - 1])
        need = f"Step {number} needs: {needs}.\n" if needs else ""
        return f"Before step {number}: {before.describe(self.rules.kb.layers)}.\n{need}"

    def _state_question(self, steps: Sequence[Step], number: int) -> str:
        assert self.rules is not None
        step = steps[number - 1]
        needs = needs_text(self.rules, step, every_lowest_tool=True) or "unknown"
        return f"Have: {self._state_before(steps, number)}.\nStep: {step}\nNeeds: {needs}.\nCan the step be done now?"

    def _recall_question(self, goal: Goal, steps: Sequence[Step], number: int) -> str:
        """The task, the steps before ``number``, the state they leave and the step: what it needs is left to
        the model (``yes-recall``). The text up to the steps so far is shared by the plan's later steps."""
        so_far = numbered(steps[: number - 1]) or "(none)"
        return (
            f"Task: obtain {goal.count} {goal.item}.\nSteps so far:\n{so_far}\n"
            f"Have: {self._state_before(steps, number)}.\nNext step: {steps[number - 1]}\nCan it be done now?"
        )

    def _before(self, steps: Sequence[Step], number: int) -> State:
        """The state step ``number`` is played from (the steps before it played as written)."""
        assert self.validator is not None
        return self.validator.validate(Plan(steps=tuple(steps[: number - 1])), goal=None).final_state

    def _state_before(self, steps: Sequence[Step], number: int) -> str:
        """The inventory and layer step ``number`` is played from, in words."""
        assert self.rules is not None
        return self._before(steps, number).describe(self.rules.kb.layers)

    # ---- scores -------------------------------------------------------------------------
    def raw(self, plan: Sequence[Step], goal: Goal) -> list[float | None]:
        """Each step's score before rounding: in [1, 10], higher = the step looks right (None: no answer)."""
        steps = tuple(plan)
        key = (goal.item, goal.count, steps)
        if key in self._cache and self.temperature == 0:
            scores, calls, seconds = self._cache[key]
            self.stats.reused_replies += calls
            self.stats.reused_seconds += seconds
            return list(scores)
        calls, seconds = self.stats.llm_calls, self.stats.llm_seconds
        scores = [self.step(goal, steps, i) for i in range(1, len(steps) + 1)]
        self._cache[key] = (scores, self.stats.llm_calls - calls, self.stats.llm_seconds - seconds)
        return list(scores)

    def score(self, plan: Sequence[Step], goal: Goal) -> list[int | None]:
        """BAR's 1-10 integer score of each step (None where the model gave no answer)."""
        return [None if value is None else max(1, min(10, round(value))) for value in self.raw(plan, goal)]

    @property
    def down(self) -> str | None:
        return self.gateway.down

    def step(self, goal: Goal, steps: tuple[Step, ...], number: int) -> float | None:
        """Step ``number``'s raw score (one model call, not cached; ``recall-check`` caches its question)."""
        if self.recall is not None:
            return self.recall.score(steps[number - 1], self._before(steps, number))
        messages = self.messages(goal, steps, number)
        about = f"score step {number} of {goal.count} {goal.item}" + (
            "" if self.method is ScoreMethod.DIGIT else f" ({self.method.value})"
        )
        if self.method is ScoreMethod.DIGIT:
            text = self.gateway.ask(messages, SCORE_GRAMMAR, 3, about, lambda t: parse_score(t) is not None)
            return None if text is None else float(parse_score(text) or 0)
        if self.method is ScoreMethod.EXPECTED:
            found = self.gateway.weigh(messages, DIGITS, about)
            return None if found is None else expected_digit(found)
        found = self.gateway.weigh(messages, [*YES, *NO], about)
        return None if found is None else 1.0 + 9.0 * yes_share(found[: len(YES)], found[len(YES) :])


def gives_probabilities(backend: LLMBackend) -> bool:
    """Whether ``backend`` answers :meth:`~barsym.llm.LLMBackend.continuation_logprobs`."""
    return bool(getattr(backend, "gives_probabilities", False))


def expected_digit(logprobs: Sequence[float]) -> float:
    """E[d] over 1..10 from the log-probabilities of "1".."10" (P("1" alone) = P("1") - P("10"))."""
    p = [math.exp(value) for value in logprobs]
    p[0] = max(0.0, p[0] - p[9])
    total = sum(p)
    if total <= 0:
        return 5.5
    return sum((d + 1) * share for d, share in enumerate(p)) / total


def yes_share(yes: Sequence[float], no: Sequence[float]) -> float:
    """P(yes) / (P(yes) + P(no)), each summed over its spellings."""
    a, b = sum(math.exp(v) for v in yes), sum(math.exp(v) for v in no)
    return 0.5 if a + b <= 0 else a / (a + b)
