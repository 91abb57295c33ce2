"""``cot``: forward chain-of-thought, each step followed by the inventory it leaves (DEPS appendix G style).

The chain-of-thought baseline in BAR's and DEPS' tables writes the plan first
step first and keeps track of the state as it goes; DEPS' Minecraft prompts
write the inventory after every step. Here the model writes
``craft 4 planks; inventory: 4 planks`` line by line under a grammar over the
game's vocabulary, then ``done``, in one call. Nothing checks it: the steps
become the plan (the validator's verdict is shown beside it, as for
``llm-only``), and the inventories the model wrote are kept in the trace and
compared with the simulator's, so the report can say how often the model's
bookkeeping was right.

The worked example is the symbolic planner's plan for stone bricks with the
inventories the simulator computes, so it is correct by construction and in
the simulator's own words.

With ``facts`` the goal message carries the knowledge base's facts for every
item of the task, in plan order (:mod:`.plan_facts`), the example's too, so the
model sees how facts become a plan. Without them (the default) the model has
only what it knows, so it first reasons backward, each step with what it takes,
then writes the plan (:mod:`.cot_needs`); that prompt has no worked example,
since any plan's reasoning spells out recipes of BAR's goal trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....kb import KnowledgeBase
from ....llm import LLMBackend
from ....model import Goal, Step
from ....planner.stats import LLMStats
from ....sim import DeterministicWorld, State
from ...grammars.forward_plans import END, MAX_STEPS, ForwardPlanResult
from ...loop_limits import repeated_run
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from . import cot_needs
from .forward_loop import ForwardPlanner, Task
from .stats import CotSummary

EXAMPLE = Goal(item="stone_bricks", count=1)
MARK = "; inventory: "
MAX_ENTRIES = 6
#: ~17 lines of a step and its inventory (up to MAX_ENTRIES items, ~38 tokens a line): BAR's longest
#: plans. Measured on 2026-12-04 with the shipped adapter, 800 tokens changed no plan's verdict or
#: accuracy on BAR's 53 (16 replies ran to the cap either way, all past their goal's step or looping),
#: so the cap stays; where a longer prompt leaves less room in the context, the reply ends there.
COT_TOKENS = 640
COT_STEPS = 20
#: a reply that reasons first (:mod:`.cot_needs`): ~20 tokens a reasoning line, ~10 a plan line, 20 of each at most
REASONING_TOKENS = 30 * COT_STEPS


def inventory_text(state: State) -> str:
    held = ", ".join(f"{n} {item}" for item, n in state.inventory)
    return held or "nothing"


def simulated(kb: KnowledgeBase, steps, start: State | None = None) -> list[str | None]:
    """The inventory after each step in the deterministic world; None from the first step that cannot run."""
    world = DeterministicWorld(kb)
    state = world.reset(0, start or State())
    out: list[str | None] = []
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        if result.failure is not None:
            return out + [None] * (len(steps) - i)
        state = result.state
        out.append(inventory_text(state.state))
    return out


def system_prompt() -> str:
    return (
        "You plan Minecraft tasks forward, step by step. Write one step per line and, after it, the inventory "
        "the step leaves: 'craft 4 planks; inventory: 4 planks'. A step is 'mine N item', 'craft N item', "
        "'smelt N item', 'kill N item', with ' with TOOL' when it needs one, or 'dig down with PICKAXE'. "
        "Logs are on the surface; dig down for cobblestone and coal (layer 1), iron (layer 2), gold, "
        "redstone and diamond (layer 3). End with done."
    )


def goal_message(goal: Goal, start: State | None = None, facts: PlanFacts | None = None) -> str:
    held = f"\nYou start with: {start.describe()}." if start is not None and (start.inventory or start.layer) else ""
    known = facts.text(goal, start) if facts is not None else ""
    return f"Goal: {goal.count} {goal.item}{held}" + (f"\n{known}" if known else "")


def example_turns(kb: KnowledgeBase, symbolic, facts: PlanFacts | None = None) -> list[tuple[str, str]]:
    """The one worked example, as (user, assistant): a plan with the inventory after each step."""
    plan = symbolic.plan(EXAMPLE).plan
    lines = [f"{step}{MARK}{held}" for step, held in zip(plan.steps, simulated(kb, plan.steps))]
    return [(goal_message(EXAMPLE, None, facts), "\n".join(lines) + "\n" + END)]


def split_line(line: str) -> tuple[str, str]:
    """``craft 4 planks; inventory: 4 planks`` -> (``craft 4 planks``, ``4 planks``)."""
    head, _, held = line.partition(MARK.strip(" "))
    return head.strip().rstrip(";").strip(), held.strip(" ;") or "nothing"


def _entries(text: str) -> list[str]:
    return sorted(part.strip() for part in text.split(","))


@dataclass
class CotTrace:
    """The inventories the model wrote after each step, and the simulator's, where the plan could run."""

    written: list[str] = field(default_factory=list)
    actual: list[str | None] = field(default_factory=list)
    unreadable: tuple[str, ...] = ()
    folded: int = 0  # steps dropped because they repeated the step before (:func:`.forward_plans.fold_repeats`)
    stopped: str | None = None  # a repeated step run the model wrote, or the deadline that left no time to ask
    past_goal: int = 0  # lines written after the step that makes the goal, not read (forward_plans.parse_plan_text)
    reasoning: tuple[str, ...] = ()  # the backward reasoning before the plan, as written (:mod:`.cot_needs`)

    @property
    def agreeing(self) -> int:
        """Steps after which the model's inventory is the simulator's (in any order)."""
        return sum(a is not None and _entries(w) == _entries(a) for w, a in zip(self.written, self.actual))

    def to_dict(self) -> dict:
        return {
            "steps": len(self.written),
            "inventory_agreement": self.agreeing,
            "inventories": [{"written": w, "simulator": a} for w, a in zip(self.written, self.actual)],
            "unreadable_lines": list(self.unreadable),
            "folded_repeats": self.folded,
            "past_goal": self.past_goal,
            "stopped": self.stopped,
            "reasoning": list(self.reasoning),
        }

    def lines(self) -> list[str]:
        folded = f" ({self.folded} repeated line(s) folded)" if self.folded else ""
        if self.reasoning and not self.written:
            head = f"chain of thought: {len(self.reasoning)} line(s) of reasoning backward, then the plan{folded}"
        else:
            head = (
                f"chain of thought: the model's inventory agrees with the simulator's after {self.agreeing} of "
                f"{len(self.written)} steps{folded}"
            )
        out = [head]
        if self.stopped:
            out.append(f"  {self.stopped}")
        if self.reasoning:
            out.append(f"  reasoning first, backward from the goal ({len(self.reasoning)} line(s)):")
            out += [f"    {line}" for line in self.reasoning]
        if self.past_goal:
            out.append(f"  the plan ends at the step that makes the goal; {self.past_goal} line(s) after it not read")
        for i, (w, a) in enumerate(zip(self.written, self.actual), start=1):
            mark = (
                "="
                if a is not None and _entries(w) == _entries(a)
                else ("cannot run" if a is None else f"simulator: {a}")
            )
            out.append(f"  {i:>2}. inventory: {w}  [{mark}]")
        return out


class CotPlanner(ForwardPlanner):
    """``cot``: one reply, each step followed by the inventory it leaves; on the forward loop (:mod:`.forward_loop`)."""

    name = "cot"

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend: LLMBackend):
        super().__init__(kb, spec, backend)
        self.reasons = self.facts is None  # no facts: reason backward first, then the plain plan (:mod:`.cot_needs`)
        if self.reasons:
            self.grammar = cot_needs.thought_grammar(self.vocab.plan_grammar("step", COT_STEPS))
        else:
            entries = "entry"
            for _ in range(MAX_ENTRIES - 1):
                entries = f'entry (", " {entries})?'
            self.grammar = (
                self.vocab.plan_grammar("line", COT_STEPS)
                + "\n".join(
                    [f'line ::= step "{MARK}" inv', f'inv ::= "nothing" | {entries}', 'entry ::= count " " item']
                )
                + "\n"
            )

    def system(self, kb: KnowledgeBase) -> str:
        return system_prompt() if self.facts is not None else cot_needs.system_prompt()

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return example_turns(self.kb, symbolic, facts) if facts is not None else []

    def rate(self, task: Task) -> LLMStats:
        """Earlier plans' rate: a plan of one call has measured nothing of its own before it."""
        return self.measured

    def plan(self, goal: Goal, start: State | None = None) -> ForwardPlanResult:
        task = self.begin(goal, start)
        self.say(task, "writing the plan", 1, 1)
        messages = [*self.prefix, {"role": "user", "content": goal_message(goal, start, self.facts)}]
        problem, asked, stopped = None, None, None
        tokens = self.tokens(task, REASONING_TOKENS if self.reasons else COT_TOKENS)
        if self.gateway.down:
            problem = self.gateway.down
        elif not tokens:
            stopped = task.deadline.describe()
        else:
            asked = self.call(task, messages, self.grammar, tokens)
            if asked is None:
                problem = str(self.gateway.last_error)
        self.measure(task)
        reasoning, plan_text = cot_needs.split_reply(asked.text) if asked is not None and self.reasons else ([], "")
        body = (lambda _: plan_text) if self.reasons else None
        # the plan after the reasoning has no inventories; one written anyway (a server without the grammar) is cut off
        written, read, folded = self.read_plan(
            task, messages, self.grammar, asked, split=split_line, goal=goal, body=body
        )
        run = repeated_run(written.steps)
        if run is not None:
            stopped = f"the model wrote '{run[0]}' {run[1]} times in a row (folded into one)"
        steps: tuple[Step, ...] = read.steps[:MAX_STEPS]
        trace = CotTrace(
            written=[] if self.reasons else list(read.notes[: len(steps)]),
            actual=[] if self.reasons else simulated(self.kb, steps, start),
            unreadable=read.unreadable,
            folded=folded,
            stopped=stopped,
            past_goal=read.past_goal,
            reasoning=tuple(reasoning),
        )
        if problem is not None and not steps:
            raise self.no_plan(problem)
        summary = CotSummary(len(steps), trace.agreeing, len(read.unreadable), folded)
        return self.finish(
            task, steps, trace, summary, first_try=bool(steps), unreadable=len(read.unreadable), problem=problem
        )


def cot_planner(kb: KnowledgeBase, spec: PlannerSpec) -> CotPlanner:
    """``cot``: forward chain-of-thought with the inventory after every step; the LLM options apply."""
    from ...calls.backends import backend_for

    return CotPlanner(kb, spec, spec.context.backend or backend_for(spec.llm, progress=spec.context.progress))
