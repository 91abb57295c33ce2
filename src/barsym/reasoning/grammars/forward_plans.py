"""Plans the model writes forward, whole: their line format, grammar, parser and result.

DEPS and chain-of-thought do not decompose goal by goal as BAR does; the model
writes the whole plan at once, first step first. Both baselines share what is
here:

- the **line format** is BAR's step notation, one step a line (``mine 4 logs``,
  ``craft 1 wooden_pickaxe``, ``dig down with wooden_pickaxe``, ``mine 3
  iron_ore with stone_pickaxe``), the same words the BAR decomposer's replies
  use, so a small model meets one notation everywhere;
- the **grammar** admits any step over the game's vocabulary (the reachable
  items and tools of the crafting graph), and nothing checks the steps before
  they run: that is what these baselines are. A bounded number of lines, then
  ``done``, so a reply always ends;
- a **lenient parser** for servers that ignore the grammar: unreadable lines
  are skipped and counted, never fatal;
- **a plan ends at its goal**: the parser stops at the first step whose text
  makes the goal (``craft 1 iron_pickaxe`` for 1 iron pickaxe). A small model
  often writes on past its goal (cobblestone, then a furnace it cannot build);
  in BAR's and DEPS' settings an episode ends once the goal is in the
  inventory, so the lines after it are never played there either. The cut
  reads the text only (no simulator); the call log keeps the whole reply;
- :class:`ForwardPlanResult`, the :class:`~barsym.planner.result.PlanResult`
  of such a plan: one goal node, no tree, every step's provenance ``llm``, and
  the planner's own trace (DEPS' rounds, chain-of-thought's inventories).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ... import steps as notation
from ...bar_io import step_from_text
from ...graph import CraftGraph, item_node
from ...kb import KnowledgeBase, UnknownItemError
from ...llm.grammar import gbnf_literal, gbnf_word_choice
from ...model import Goal, Plan, Step
from ...planner.result import GoalNode, PlanResult
from ...planner.stats import PlanStats
from ...sim import State
from ...validation import Validator

VERBS = ("mine", "craft", "smelt", "kill")  # the grammar's order (ITEM_VERBS' differs: the grammar text is pinned)
END = "done"
MAX_STEPS = 30  # BAR's longest expert plan has 18 steps


def render_step(step: Step) -> str:
    """A step in the line format (``str(Step)`` is already BAR's notation)."""
    return str(step)


def render_plan(steps) -> str:
    return "".join(f"{render_step(s)}\n" for s in steps) + END


@dataclass(frozen=True)
class ReadPlan:
    """What a reply says: the steps read, and the lines that could not be read (with why)."""

    steps: tuple[Step, ...]
    unreadable: tuple[str, ...] = ()
    ended: bool = False  # the reply reached ``done``
    notes: tuple[str, ...] = ()  # per step read, what ``split`` cut off its line (CoT's inventory)
    past_goal: int = 0  # lines the model wrote after the step that makes the goal (not read)


def parse_step(line: str, kb: KnowledgeBase) -> Step:
    """One line as a step (:func:`barsym.bar_io.step_from_text`, the one notation reader), its names
    known to the knowledge base; ValueError saying what is wrong."""
    step = step_from_text(line)
    for name in filter(None, (step.item, step.tool)):
        try:
            kb.resolve(name)
        except UnknownItemError:
            raise ValueError(f"unknown item {name!r}") from None
    return step


def makes_goal(step: Step, goal: Goal, kb: KnowledgeBase) -> bool:
    """Whether the step's own words obtain the goal: its item counts as the goal's, at least as many."""
    return (
        not step.type.moves
        and step.item is not None
        and (step.count or 0) >= goal.count
        and step.item in kb.acceptable(goal.item)
    )


def parse_plan_text(text: str, kb: KnowledgeBase, split=None, goal: Goal | None = None) -> ReadPlan:
    """Read a reply line by line up to ``done``, or up to the step that makes ``goal`` (see the module's doc).

    ``split(line) -> (step text, note)`` cuts what is not the step off a line
    (CoT's inventory); the notes of the steps read come back aligned with them.
    """
    steps, bad, notes, ended, past = [], [], [], False, 0
    lines = [raw.strip() for raw in text.splitlines()]
    for at, line in enumerate(lines):
        if not line:
            continue
        if line.lower().rstrip(".") == END:
            ended = True
            break
        head, note = split(line) if split is not None else (line, "")
        try:
            steps.append(parse_step(head, kb))
        except ValueError as exc:
            bad.append(str(exc))
            continue
        notes.append(note)
        if goal is not None and makes_goal(steps[-1], goal, kb):
            rest = [x.lower().rstrip(".") for x in lines[at + 1 :] if x]
            past = rest.index(END) if END in rest else len(rest)
            ended = True
            break
        if len(steps) >= MAX_STEPS:
            break
    return ReadPlan(tuple(steps), tuple(bad), ended, tuple(notes), past)


def fold_repeats(read: ReadPlan) -> tuple[ReadPlan, int]:
    """``read`` without the steps that repeat the step right before them, and how many were dropped.

    Why: the small model's chain of thought falls into loops (``craft 1
    crafting_table`` written again and again to the step cap); no expert plan of
    BAR's repeats a step at once, since two equal steps in a row are one step
    with the sum of their counts, or waste. Folding a loop into its first line
    stops it spoiling the rest of the plan's score; the call log keeps what the
    model wrote. Moves (dig down, climb up) are kept: two in a row go two layers.
    """
    steps: list[Step] = []
    notes: list[str] = []
    for i, step in enumerate(read.steps):
        if steps and step == steps[-1] and not step.type.moves:
            continue
        steps.append(step)
        if i < len(read.notes):
            notes.append(read.notes[i])
    folded = len(read.steps) - len(steps)
    return ReadPlan(tuple(steps), read.unreadable, read.ended, tuple(notes), read.past_goal), folded


class Vocabulary:
    """The names the forward grammars admit: reachable items (and the generic families), tools, verbs."""

    def __init__(self, kb: KnowledgeBase, graph: CraftGraph):
        reach = graph.reachable_nodes
        names = {i for i in kb.items if item_node(i) in reach} | set(kb.generic)
        self.items = sorted(names)
        self.tools = sorted(t for t in graph.rules.tool_items if item_node(t) in reach)

    def step_rules(self) -> list[str]:
        """GBNF rules ``step``, ``count``, ``item``, ``toolname`` (rule names use ``-``, never ``_``)."""
        return [
            *notation.step_rules("step", VERBS),
            f"item ::= {gbnf_word_choice(self.items)}",
            f"toolname ::= {gbnf_word_choice(self.tools)}",
        ]

    def plan_grammar(self, line: str = "step", max_steps: int = MAX_STEPS) -> str:
        """``line`` then a newline, 1 to ``max_steps`` times, then ``done``."""
        body = f'{line} "\\n"'
        nested = body
        for _ in range(max_steps - 1):
            nested = f"{body} ({nested})?"
        return "\n".join([f"root ::= {nested} {gbnf_literal(END)}", *self.step_rules()]) + "\n"


@dataclass
class ForwardPlanResult(PlanResult):
    """A plan written forward by the model: no decomposition tree; ``trace`` is the planner's own record."""

    trace: object | None = None  # DepsTrace or CotTrace: to_dict() and lines()

    def provenance(self, position: int) -> list[str]:
        return ["llm"]

    def serves(self, position: int) -> list[str]:
        return ["goal"] if position == len(self.plan) - 1 else []


def forward_result(
    kb: KnowledgeBase,
    goal: Goal,
    steps,
    start: State | None,
    planner: str,
    stats: PlanStats,
    trace: object | None,
    rules=None,
) -> ForwardPlanResult:
    """The result of a forward plan, with the validator's verdict (the plan is not changed by it)."""
    plan = Plan(steps=tuple(steps), source=f"{planner}:{goal.item}")
    validation = Validator(kb, rules).validate(plan, goal=goal, start=start)
    return ForwardPlanResult(
        goal=goal,
        plan=plan,
        nodes=[GoalNode(0, goal, "goal")],
        sources=[[] for _ in plan.steps],
        needs=[],
        raw_steps=plan.steps,
        validation=validation,
        planner=planner,
        decomposer="llm-forward",
        stats=stats,
        trace=trace,
    )


@dataclass
class ContextBudget:
    """How many prompt tokens a call may take: the model's context, less the reply and a margin.

    Counted with the backend's own tokenizer when it has one (the in-process
    model), else estimated at one token per three characters, which
    over-counts English and item names, so an estimate errs on the safe side.
    """

    n_ctx: int
    reply_tokens: int
    counter: object | None = None
    margin: int = 48
    per_message: int = 6  # chat-template tokens around each message
    _cache: dict = field(default_factory=dict)

    @property
    def limit(self) -> int:
        return self.n_ctx - self.reply_tokens - self.margin

    def tokens(self, messages: list[dict[str, str]]) -> int:
        total = 0
        for m in messages:
            text = m["content"]
            n = self._cache.get(text)
            if n is None:
                try:
                    n = int(self.counter(text)) if self.counter is not None else -(-len(text) // 3)
                except Exception:  # noqa: BLE001 - a backend whose tokenizer fails: estimate instead
                    n = -(-len(text) // 3)
                self._cache[text] = n
            total += n + self.per_message
        return total

    def fits(self, messages: list[dict[str, str]]) -> bool:
        return self.tokens(messages) <= self.limit
