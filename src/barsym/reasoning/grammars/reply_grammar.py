"""The model's reply format, its parser, and the grammars that constrain it.

Every generated token costs ~10 ms on a 2-core laptop, so the model does not
write JSON. It writes one line in BAR's own step notation, then the subgoals::

    craft 1 stone_pickaxe: 3 cobblestone, 2 stick, 1 crafting_table
    mine 3 iron_ore with stone_pickaxe: 1 stone_pickaxe, layer 2
    smelt 3 iron_ingot: 3 iron_ore, 2 planks, 1 furnace
    dig down with wooden_pickaxe: 1 wooden_pickaxe
    mine 3 logs

That is 10-25 tokens where the JSON form takes 40-60. Item names contain no
spaces, so the line parses without ambiguity.

Two grammars constrain the line (GBNF for llama.cpp; rule names use ``-``
because llama.cpp rejects ``_``):

- ``vocab``: any step type, item and tool of the knowledge base's overworld
  vocabulary, counts 1-999, at most ``max_subgoals`` subgoals. The model can
  still say something wrong, only not something unknown.
- ``graph`` (graph-constrained decoding): built per goal from the crafting
  graph. The step must make the goal (its item and count are fixed text), its
  type and tool come from the goal's producers, and each producer's subgoal
  list is fixed in shape: one entry per ingredient slot (any accepted item),
  then the tool, station, fuel (optional) and layer it needs. The model is
  left to choose the producer, the counts, and the slot members where no
  family name covers the slot (coal or charcoal for a torch). Where the game
  allows a choice that BAR's plans settle by convention, the grammar offers
  only the conventional one, taken from the symbolic decomposer: the family
  name of a slot (``planks``, not ``spruce_planks``), the lowest tool tier that
  can mine an item, the pickaxe that digs each layer (one dig down per pickaxe
  tier), and planks as fuel. Without these the model picks valid but odd
  plans (an iron pickaxe made to mine one coal, a stone pickaxe digging to the
  diamond layer), and the verifier refuses them for the same reasons.
  Tools and slot members that would need the goal itself (a stone pickaxe to
  mine cobblestone) are left out, because they can never be part of a plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ... import steps as notation
from ...graph import CraftGraph, item_node
from ...kb import Action, KnowledgeBase, Rules, UnknownItemError
from ...llm.grammar import gbnf_literal, gbnf_word_choice
from ...model import MAX_COUNT, Goal, Step, StepType
from ...planner.decomposer import Decomposition, goal_layer, layer_goal
from ...planner.symbolic import SymbolicDecomposer
from ...steps import DIG, ITEM_VERBS


class ReplyError(ValueError):
    """A reply that cannot be read as a step (the message says why, for the feedback)."""


@dataclass(frozen=True)
class Reply:
    step: Step
    subgoals: tuple[Goal, ...]


def render_goal(goal: Goal) -> str:
    """``3 planks`` or ``layer 2``: how a goal is written in prompts."""
    return notation.render_subgoal(goal.item, goal.count, goal_layer(goal))


def render_reply(decomposition: Decomposition) -> str:
    """A decomposition in the reply format (used to write the few-shot answers)."""
    return notation.render_line(str(decomposition.step), [render_goal(g) for g in decomposition.subgoals])


def parse_reply(text: str, kb: KnowledgeBase) -> Reply:
    """Read one reply line; raise :class:`ReplyError` naming what is wrong.

    Lenient where a server ignored the grammar (extra lines, a final period,
    "nothing" for no subgoals); strict about names and counts, because those
    become plan steps.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise ReplyError("the reply is empty")
    line = lines[0].rstrip(".").strip()
    head, sep, tail = line.partition(":")
    match = notation.read_step(head.strip())
    if match is None:
        raise ReplyError(f"cannot read {head.strip()[:60]!r} as a step like 'craft 4 stick' or 'dig down with ...'")
    tool = match.tool
    if tool is not None:
        _known(kb, tool, "tool")
    if match.verb is None:
        step = Step(type=StepType.DIG_DOWN, tool=tool)
    else:
        if match.verb not in ITEM_VERBS:
            raise ReplyError(f"unknown step type {match.verb!r}; use one of {', '.join(ITEM_VERBS)} or dig down")
        step = Step(
            type=StepType(match.verb), item=_known(kb, match.item, "item"), count=_count(match.count), tool=tool
        )
    subgoals = []
    parts = [p.strip() for p in tail.split(",")] if sep else []
    if parts in (["nothing"], ["none"], [""]):
        parts = []
    for part in parts:
        sub = notation.read_subgoal(part)
        if sub is None:
            raise ReplyError(f"cannot read subgoal {part[:40]!r}; write '2 stick' or 'layer 1'")
        if sub.layer is not None:
            number = sub.layer
            if not 1 <= number <= kb.deepest_layer:
                raise ReplyError(f"layer {number} does not exist (layers 1 to {kb.deepest_layer})")
            subgoals.append(layer_goal(number))
        else:
            subgoals.append(Goal(item=_known(kb, sub.item, "item"), count=_count(sub.count)))
    return Reply(step, tuple(subgoals))


def _known(kb: KnowledgeBase, name: str, what: str) -> str:
    try:
        kb.resolve(name)
    except UnknownItemError as exc:
        raise ReplyError(
            f"unknown {what} {name!r}" + (f" (did you mean {', '.join(exc.suggestions)}?)" if exc.suggestions else "")
        ) from None
    return name


def _count(number: int) -> int:
    if not notation.counts_ok(number):
        raise ReplyError(f"count {number} is out of range 1 to {MAX_COUNT}")
    return number


@dataclass(frozen=True)
class GoalGrammar:
    """A graph-mode grammar; ``forced`` is the only line it admits, when there is just one."""

    text: str
    forced: str | None = None


class GrammarBuilder:
    """Build the vocab grammar once and graph grammars per goal, for one knowledge base."""

    def __init__(
        self, kb: KnowledgeBase, graph: CraftGraph, max_subgoals: int = 6, conventions: SymbolicDecomposer | None = None
    ):
        self.kb = kb
        self.graph = graph
        self.conventions = conventions or SymbolicDecomposer(kb, graph=graph, prefer=kb.prefer)
        self.max_subgoals = max_subgoals
        reach = graph.reachable_nodes
        self.items = sorted(i for i in kb.items if item_node(i) in reach)
        self.rules = conventions.rules if conventions is not None else Rules(kb)
        actions = list(self.rules.every_action())  # what the profile allows, in the rule book's schema
        kinds = self.rules.tiered_kinds
        loose = {a.tool.kind for a in actions if a.tool and a.tool.kind not in kinds}
        self.tools = sorted(t for t in set(self.rules.tool_items) | loose if item_node(t) in reach)
        self.verbs = [v for v in ITEM_VERBS if any(a.kind == v for a in actions)]
        self.can_dig = any(a.kind == "dig_down" for a in actions)
        # graph mode offers the knowledge base's preferred fuels, not all 190 burnable items
        self.fuels = list(self.rules.preferred_fuels)
        self._requires: dict[str, frozenset[str]] = {}
        self._vocab: str | None = None
        self._avoid: frozenset[str] = frozenset()  # the goals above the one a grammar is being built for
        self._held: Callable[[str], int] | None = None  # the start inventory of the plan being built for

    # ---- what an item needs, to keep loops out ---------------------------------------
    def requires(self, name: str) -> frozenset[str]:
        """Items and ``layer:N`` goals the graph's cheapest way of obtaining ``name`` needs."""
        found = self._requires.get(name)
        if found is None:
            layer = goal_layer(Goal(item=name)) if name.startswith("layer:") else None
            if layer is not None:
                need = self.rules.dig(layer).tool
                pickaxe = self._cheapest_tool(need.kind, need.tier)
                found = frozenset({f"layer:{n}" for n in range(layer)} | {pickaxe} | self.requires(pickaxe))
            else:
                sub = self.graph.dependency_subgraph(name)
                data = sub.nodes()
                found = frozenset(
                    d["name"] if d.get("kind") == "item" else n for n, d in data if d.get("kind") in ("item", "layer")
                ) - {name}
            self._requires[name] = found
        return found

    def _cheapest_tool(self, kind: str, tier: int) -> str:
        costs = self.graph.costs
        return self.rules.lowest_tool(kind, tier, lambda name: costs.get(item_node(name), float("inf")))

    def _usable(self, name: str, goal: str, avoid: frozenset[str] = frozenset(), *, tool: bool = False) -> bool:
        """Held at the start, or reachable and not made (by the graph's way) from the goal or a goal waiting on it.

        A held *tool* serves even when a goal further up is to make another of it (two stone pickaxes
        from one held): a tool is not used up, so the held one cannot loop.
        """
        held = self._held is not None and self._held(name) > 0
        if held and name != goal and (tool or name not in avoid):
            return True
        if name == goal or name in avoid or item_node(name) not in self.graph.reachable_nodes:
            return False
        needs = self.requires(name)
        return goal not in needs and not (needs & avoid)

    # ---- grammars ------------------------------------------------------------------------
    def vocab(self) -> str:
        if self._vocab is None:
            layers = " | ".join(gbnf_literal(str(n)) for n in range(1, self.kb.deepest_layer + 1))
            head, verb, tool, count = notation.step_rules("head", self.verbs, dig=self.can_dig)
            self._vocab = _lines(
                "root ::= head tail?",
                head,
                verb,
                tool,
                f'tail ::= ": " {_bounded("sub", self.max_subgoals)}',
                'sub ::= count " " item' + (' | "layer " layer' if self.can_dig else ""),
                count,
                f"layer ::= {layers}",
                f"item ::= {gbnf_word_choice(self.items)}",
                f"toolname ::= {gbnf_word_choice(self.tools)}",
            )
        return self._vocab

    def for_goal(
        self,
        goal: Goal,
        fuel_credit: float = 0.0,
        avoid: frozenset[str] = frozenset(),
        dig_tool: str | None = None,
        held: Callable[[str], int] | None = None,
    ) -> GoalGrammar | None:
        """The graph-mode grammar for ``goal``, or None if the graph admits no producer.

        ``fuel_credit`` is burn time already budgeted for this smelted item: the
        fuel the grammar offers is only what is still missing. ``avoid`` are the
        goals further up the plan: nothing made from them is offered (a loop).
        ``dig_tool`` is the pickaxe this plan digs ``goal``'s layer with (None: any).
        ``held`` counts the start inventory: a tool held is offered, and preferred,
        even where making it would loop (it is not made: an iron pickaxe held digs
        to the stone layer).
        """
        layer = goal_layer(goal)
        self._avoid, self._held = avoid, held
        options = self._dig_options(layer, dig_tool) if layer is not None else self._item_options(goal, fuel_credit)
        options = list(dict.fromkeys(options))
        if not options:
            return None
        root = Choice(tuple(options))
        return GoalGrammar(_lines(f"root ::= {_render((root,))}"), _only((root,)))

    def token_budget(self) -> int:
        """Enough new tokens for the longest line either grammar admits (names take up to ~10 tokens).

        Only a cap: generation ends where the grammar does, typically after 10-25 tokens.
        """
        return 24 + 14 * self.max_subgoals

    # An option is a tuple of parts: literal text, a Choice, or ANY_COUNT.
    def _item_options(self, goal: Goal, credit: float) -> list[tuple]:
        """One option per way the rule book's action schema knows (under this profile) that the graph reaches."""
        item, count = goal.item, goal.count
        reach = self.graph.reachable_nodes
        out = []
        for action in self.rules.ways(item, count):
            if action.node not in reach:
                continue
            station = [f", 1 {action.station}"] if action.station else []
            if action.kind == "craft":
                members = [self._members(slot.accepts, item) for slot in action.needs]
                if not all(members):
                    continue
                option: list = [f"craft {count} {item}: "]
                for n, (slot, names) in enumerate(zip(action.needs, members)):
                    option += ([", "] if n else []) + [_upto(slot.count), " ", Choice(tuple(names))]
                out.append(tuple(option + station))
            elif action.kind == "smelt":
                out += self._smelt_option(action, credit, station)
            else:
                out += self._gather_options(action)
        return out

    def _smelt_option(self, action: Action, credit: float, station: list[str]) -> list[tuple]:
        item, count = action.item or "", action.count
        names = self._members(action.needs[0].accepts, item)
        missing = max(0.0, action.fuel - credit)
        fuels = (
            self._conventional([self.conventions.fuel], [f for f in self.fuels if self._usable(f, item, self._avoid)])
            if missing
            else []
        )
        if not names or (missing > 0 and not fuels):
            return []
        option = [f"smelt {count} {item}: ", _upto(action.needs[0].count), " ", Choice(tuple(names))]
        if missing > 0:  # fuel: any preferred fuel, at most the units that cover what is missing
            option += [", ", Choice(tuple((_upto(self.rules.fuel_units(f, missing)), f" {f}") for f in fuels))]
        return [tuple(option + station)]

    def _gather_options(self, action: Action) -> list[tuple]:
        item = action.item or ""
        head = f"{action.kind} {action.count} {item}"
        used = [f"{slot.count} {slot.accepts[0]}" for slot in action.needs]
        layer = [f"layer {action.layer}"] if action.layer > 0 else []
        if action.tool is None:
            needs = used + layer
            return [(head + (": " + ", ".join(needs) if needs else ""),)]
        usable = sorted(t for t in action.tool.options if self._usable(t, item, self._avoid, tool=True))
        lowest = self.conventions.tool_for(action.tool.kind, action.tool.tier, held=self._held)
        return [
            (f"{head} with {tool}: " + ", ".join(used + [f"1 {tool}"] + layer),)
            for tool in self._conventional([lowest], usable)
        ]

    def _dig_options(self, layer: int, dig_tool: str | None) -> list[tuple]:
        if not self.can_dig or not 1 <= layer <= self.kb.deepest_layer:
            return []
        action = self.rules.dig(layer)
        assert action.tool is not None
        target = f"layer:{layer}"
        usable = [tool for tool in sorted(action.tool.options) if self._usable(tool, target, self._avoid, tool=True)]
        above = f", layer {action.layer}" if action.layer > 0 else ""
        return [
            (f"{DIG} with {tool}: 1 {tool}{above}",)
            for tool in self._conventional([dig_tool] if dig_tool else [], usable)
        ]

    def _members(self, accepts: tuple[str, ...], goal: str) -> list[str]:
        usable = [
            name
            for name in accepts
            if self._usable(name, goal, self._avoid) and (self.rules.generic_names or name not in self.kb.generic)
        ]
        return self._conventional([name for name in usable if name in self.kb.generic], usable)

    @staticmethod
    def _conventional(preferred: list[str], usable: list[str]) -> list[str]:
        """The conventional choices among ``usable``, or all of ``usable`` when none of them is."""
        chosen = [name for name in preferred if name in usable]
        return chosen or usable


@dataclass(frozen=True)
class Choice:
    """Alternatives in a graph-mode option: plain strings, or tuples of parts."""

    options: tuple


ANY_COUNT = notation.COUNT_GBNF  # counts 1-999, used where listing the values is too long
LISTED_COUNTS = 64


def _upto(most: int) -> Choice | object:
    """The counts 1..most: a graph-mode count never asks for more than the step uses."""
    if most > LISTED_COUNTS:
        return _ANY
    return Choice(tuple(str(n) for n in range(1, int(most) + 1)))


_ANY = object()


def _render(parts: tuple) -> str:
    out = []
    for part in parts:
        if part is _ANY:
            out.append(ANY_COUNT)
        elif isinstance(part, str):
            out.append(gbnf_literal(part))
        elif all(isinstance(o, str) for o in part.options):
            out.append(gbnf_word_choice(part.options))
        else:
            out.append("(" + " | ".join(_render(o) for o in part.options) + ")")
    return " ".join(out)


def _only(parts: tuple) -> str | None:
    """The single string ``parts`` admit, or None if there is any choice left."""
    text = ""
    for part in parts:
        if part is _ANY or (isinstance(part, Choice) and len(part.options) != 1):
            return None
        if isinstance(part, Choice):
            inner = part.options[0]
            part = inner if isinstance(inner, str) else _only(inner)
            if part is None:
                return None
        text += part
    return text


def _bounded(rule: str, most: int) -> str:
    """``rule ("," rule (...)?)?`` up to ``most`` times, without {m,n} (older llama.cpp lacks it)."""
    body = rule
    for _ in range(most - 1):
        body = f'{rule} (", " {body})?'
    return body


def _lines(*rules: str) -> str:
    return "\n".join(rules) + "\n"
