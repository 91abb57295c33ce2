"""The ``recall-check`` step score: the model says what a step needs, the state is checked against it.

Why a method of its own. In every step-score prompt that prints the step's needs, a two-line rule
that compares the printed needs with the printed inventory scores as well as the model
(docs/step-scores.md); in ``yes-recall``, whose prompt holds no needs, the taught 135M model must
recall the recipe *and* compare counts in one yes/no token, and scored below a rule that reads only
whether the step's tool is held. What the taught model does well is the one-step knowledge it is asked
by BAR's decomposer (86.9 % of its decompositions without facts are accepted first try on BAR's 53). So
this method asks it exactly that question for the step's item -- the decomposer's own prompt without
facts, ``Goal: 4 stick``, under the vocabulary grammar (any item and count: the grammar knows no recipe)
-- and reads its reply (``craft 4 stick: 2 planks``) as the step's needs. The inventory and layer the
step is played from (the simulator's, the steps before it played as written) are then compared with
those needs by arithmetic. The knowledge is the model's; the prompt holds no recipe; a wrong recall
gives a wrong score, so where this score and the simulator's disagree either the plan or the model's
knowledge is wrong -- the design's "cross-checking them against LLM scores".

The score is ``1 + 9 x`` the least-held need's share (``2 planks`` with 1 held: 0.5; a tool held at a
lower tier, a layer not reached: 0); a step the model makes another way (another step kind or item)
scores half of that, and an unreadable reply gives no score. A need that is fuel (a smelt's burnable
need other than its ingredient) counts as burn time: any fuel held serves, once the ingredient is taken
out as the game takes it (:func:`.step_needs.spare_burn`, which ``yes-needs`` prints too).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...kb import Rules
from ...kb.actions import Slot
from ...model import Goal, Step, StepType
from ...planner.decomposer import goal_layer, layer_goal
from ...planner.symbolic import SymbolicDecomposer
from ...sim import State
from ..calls.model_calls import ModelGateway
from ..grammars.reply_grammar import GrammarBuilder, Reply, ReplyError, parse_reply
from ..prompts.few_shot import PromptBook
from .step_needs import spare_burn

__all__ = ["RecallCheck", "held_share"]


class RecallCheck:
    """Asks the model what a step needs (cached per asked goal) and scores a state against the reply."""

    def __init__(self, rules: Rules, gateway: ModelGateway):
        self.rules, self.gateway = rules, gateway
        kb = rules.kb
        symbolic = SymbolicDecomposer(kb, prefer=kb.prefer, rules=rules)
        self.prompts = PromptBook(kb, symbolic, ())  # no few-shot turns: a turn would be a recipe
        builder = GrammarBuilder(kb, symbolic.graph, conventions=symbolic)
        self.grammar, self.max_tokens = builder.vocab(), builder.token_budget()
        self._replies: dict[tuple[str, int], Reply | None] = {}

    def asked(self, step: Step, before: State) -> Goal | None:
        """The decomposer's question for ``step``: its item and count, or the layer a dig down reaches."""
        if step.type is StepType.DIG_DOWN:
            return layer_goal(before.layer + 1)
        if step.type is StepType.CLIMB_UP or not step.item:
            return None
        return Goal(item=step.item, count=step.count or 1)

    def messages(self, goal: Goal) -> list[dict[str, str]]:
        """The decomposer's conversation for ``goal`` without facts: its system prompt and ``Goal: ...``."""
        return self.prompts.first(goal)

    def recall(self, goal: Goal) -> Reply | None:
        """The model's reply to ``Goal: ...`` (None: no readable reply); one call per goal per process."""
        key = (goal.item, goal.count)
        if key not in self._replies:
            messages = self.messages(goal)
            text = self.gateway.ask(
                messages, self.grammar, self.max_tokens, f"recall {goal.count} {goal.item}", self._readable
            )
            self._replies[key] = None if text is None else parse_reply(text, self.rules.kb)
        return self._replies[key]

    def _readable(self, text: str) -> bool:
        try:
            parse_reply(text, self.rules.kb)
        except ReplyError:
            return False
        return True

    def score(self, step: Step, before: State) -> float | None:
        """``step``'s score in [1, 10] from the state it is played from (None: the model gave no answer)."""
        goal = self.asked(step, before)
        if goal is None:
            return 10.0  # climbing up needs nothing
        reply = self.recall(goal)
        if reply is None:
            return None
        share = held_share(self.rules, reply, before)
        if not _same_way(reply.step, step):
            share /= 2
        return 1.0 + 9.0 * share


def _same_way(recalled: Step, step: Step) -> bool:
    return recalled.type is step.type and (step.type is StepType.DIG_DOWN or recalled.item == step.item)


def held_share(rules: Rules, reply: Reply, have: State) -> float:
    """The least share, over the needs ``reply`` names, that ``have`` holds (1.0 when it names none)."""
    fuel = _fuel_needs(rules, reply)
    shares = [_held(rules, need, have, need in fuel, reply.subgoals) for need in reply.subgoals]
    return min(shares, default=1.0)


def _fuel_needs(rules: Rules, reply: Reply) -> Sequence[Goal]:
    """A smelt's burnable needs other than its first (the ingredient): what the furnace burns."""
    if reply.step.type is not StepType.SMELT:
        return ()
    items = [g for g in reply.subgoals if goal_layer(g) is None]
    return [g for g in items[1:] if rules.fuel_value(g.item) > 0]


def _held(rules: Rules, need: Goal, have: State, is_fuel: bool, needs: Sequence[Goal]) -> float:
    layer = goal_layer(need)
    if layer is not None:
        return 1.0 if have.layer >= layer else 0.0
    tool = rules.tool(need.item)
    if tool is not None:
        return 1.0 if rules.best_held_tool(tool.kind, tool.tier, have.count) is not None else 0.0
    if is_fuel:
        wanted = need.count * rules.fuel_value(need.item)
        ingredient = [Slot(g.item, rules.kb.acceptable(g.item), g.count) for g in needs[:1]]
        return min(1.0, spare_burn(rules, ingredient, have) / wanted) if wanted > 0 else 1.0
    held = have.count_any(rules.kb.acceptable(need.item))
    return min(1.0, held / need.count) if need.count > 0 else 1.0
