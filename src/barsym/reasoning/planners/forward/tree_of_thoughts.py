"""``tot``: a breadth-first tree of thoughts over partial plans, the model proposing and rating them.

Tree of Thoughts (Yao et al. 2023) lets a model explore: a *thought* is an
intermediate step, a *generator* proposes several next thoughts from a state,
an *evaluator* -- the model again -- rates each new state, and a search keeps
the most promising. Its breadth-first version keeps the best ``b`` states at
every depth, rating each state ``sure``, ``likely`` or ``impossible`` and
weighing the words 20 / 1 / 0.001. Here a thought is one step of the plan:

- **propose**: for each kept partial plan, one call gives up to ``breadth``
  (``--tot-breadth``) different next steps. The reply starts with the plan so
  far, which the grammar forces word for word (the model writes its next steps
  right after its own plan, the way it writes a plan), then one candidate a
  line; ``done`` is a candidate when the partial plan already makes the goal;
- **value**: each new partial plan is rated in a call of its own, one word;
- **select**: the ``beam`` (``--tot-beam``) best-rated are kept, ties in the
  order they were proposed.

The search ends when the best-rated kept plan is finished (``done``), when no
unfinished plan is left (the best finished one is returned), or at depth
:data:`MAX_DEPTH` -- BAR's longest expert plan has 18 steps -- where the result
says that no complete plan was reached and returns the best partial one. No
simulator or graph takes part: the model's own ratings steer the search.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....kb import KnowledgeBase
from ....llm.grammar import gbnf_literal
from ....model import Step
from ...grammars.forward_plans import END, parse_step
from ...prompts import baseline_prompts as prompts
from ...prompts.deps_prompts import task_message
from ...prompts.plan_facts import PlanFacts
from ...spec import PlannerSpec
from .baseline_loop import BaselinePlanner, BaselineTrace, StopReason, plain
from .forward_loop import Task

DEFAULT_BREADTH = 3
DEFAULT_BEAM = 2
MAX_BREADTH = 8
MAX_BEAM = 8
MAX_DEPTH = 24
VALUE_TOKENS = 4
TOT_CONTEXT = 4096


@dataclass(frozen=True)
class Branch:
    """A partial plan in the tree: its steps, whether it ended with ``done``, its rating."""

    steps: tuple[Step, ...]
    finished: bool = False
    rating: str = ""

    @property
    def value(self) -> float:
        return prompts.RATINGS.get(self.rating, 0.0)


def propose_grammar(planner: BaselinePlanner, steps, breadth: int) -> str:
    """The plan so far, forced, then 1 to ``breadth`` candidates (a step, or ``done``), one a line."""
    so_far = gbnf_literal("".join(f"{s}\n" for s in steps)) + " " if steps else ""
    nested = "cand"
    for _ in range(breadth - 1):
        nested = f'cand ("\\n" {nested})?'
    return (
        "\n".join([f"root ::= {so_far}{nested}", f"cand ::= step | {gbnf_literal(END)}", *planner.vocab.step_rules()])
        + "\n"
    )


class TreeOfThoughtsPlanner(BaselinePlanner):
    name = "tot"

    def __init__(self, kb: KnowledgeBase, spec: PlannerSpec, backend, *, n_ctx: int | None = None):
        breadth, beam = spec.baselines.tot_breadth, spec.baselines.tot_beam
        breadth = DEFAULT_BREADTH if breadth is None else breadth
        beam = DEFAULT_BEAM if beam is None else beam
        if not 1 <= breadth <= MAX_BREADTH:
            raise ValueError(f"--tot-breadth must be from 1 to {MAX_BREADTH}, got {breadth}")
        if not 1 <= beam <= MAX_BEAM:
            raise ValueError(f"--tot-beam must be from 1 to {MAX_BEAM}, got {beam}")
        self.breadth, self.beam, self.depth = breadth, beam, MAX_DEPTH
        super().__init__(kb, spec, backend, n_ctx=n_ctx)

    def system(self, kb: KnowledgeBase) -> str:
        return prompts.tot_system(kb)

    def turns(self, symbolic, facts: PlanFacts | None) -> list[tuple[str, str]]:
        return prompts.tot_turns(symbolic, facts)

    def budget(self) -> str:
        return f"depth {self.depth}, breadth {self.breadth}, beam {self.beam}"

    def spent(self, trace: BaselineTrace) -> str:
        return f"depth {trace.rounds} of {self.depth}, breadth {self.breadth}, beam {self.beam}"

    def _propose(self, task: Task, text: str, steps: tuple[Step, ...], trace: BaselineTrace) -> list[Branch] | None:
        """The next partial plans one call proposes from ``steps``; None when the loop must stop."""
        grammar = propose_grammar(self, steps, self.breadth)
        messages = [*self.prefix, {"role": "user", "content": prompts.propose_message(text, steps, self.breadth)}]
        asked = self.ask(task, messages, grammar, 12 * (len(steps) + self.breadth) + 8, trace)
        if asked is None:
            return None
        self.log_text(task, messages, grammar, asked)
        lines = [line.strip() for line in asked.text.splitlines() if line.strip()]
        if [line for line in lines[: len(steps)]] == [str(s) for s in steps]:
            lines = lines[len(steps) :]  # the plan so far, written again as the grammar makes it
        out: list[Branch] = []
        for line in lines[: self.breadth]:
            if line.lower().rstrip(".") == END:
                branch = Branch(steps, finished=True)
            else:
                try:
                    branch = Branch((*steps, parse_step(line, self.kb)))
                except ValueError:
                    trace.unreadable += 1
                    continue
            if (branch.finished and not steps) or branch in out:
                continue
            out.append(branch)
        return out

    def _rate(self, task: Task, text: str, branch: Branch, trace: BaselineTrace) -> Branch | None:
        message = prompts.value_message(text, branch.steps, branch.finished)
        messages = [*self.prefix, {"role": "user", "content": message}]
        asked = self.ask(task, messages, prompts.VALUE_GRAMMAR, VALUE_TOKENS, trace)
        if asked is None:
            return None
        self.log_text(task, messages, prompts.VALUE_GRAMMAR, asked)
        words = plain(asked.text).lower().split()
        rating = next((w for w in words if w in prompts.RATINGS), "")
        return Branch(branch.steps, branch.finished, rating)

    def run(self, task: Task, trace: BaselineTrace) -> tuple[Step, ...]:
        text = task_message(task.goal, task.start, self.facts)
        frontier = [Branch(())]
        best_finished: Branch | None = None
        for depth in range(1, self.depth + 1):
            trace.rounds = depth
            self.say(task, f"depth {depth}: proposing and rating", depth, self.depth)
            rated: list[Branch] = []
            for branch in frontier:
                proposed = self._propose(task, text, branch.steps, trace)
                if proposed is None:
                    return self._stopped(frontier, best_finished)
                for candidate in proposed:
                    if any(candidate.steps == r.steps and candidate.finished == r.finished for r in rated):
                        continue
                    scored = self._rate(task, text, candidate, trace)
                    if scored is None:
                        return self._stopped(frontier, best_finished)
                    rated.append(scored)
            kept = sorted(rated, key=lambda b: -b.value)[: self.beam]  # stable: ties in proposal order
            trace.add(
                f"depth {depth}",
                "\n".join(f"{_last(b)} = {b.rating or '?'}" for b in rated),
                ("kept: " + "; ".join(_last(b) for b in kept)) if kept else "nothing proposed",
            )
            if not kept:  # no readable proposal from any kept plan: the search cannot go on
                trace.stopped = StopReason.UNFINISHED
                return self._stopped(frontier, best_finished)
            for b in kept:
                if b.finished and (best_finished is None or b.value > best_finished.value):
                    best_finished = b
            if kept and kept[0].finished:
                trace.stopped = StopReason.FINISHED
                return kept[0].steps
            frontier = [b for b in kept if not b.finished]
            if not frontier:
                break
        if best_finished is not None:
            trace.stopped = StopReason.FINISHED
            return best_finished.steps
        trace.stopped = StopReason.DEPTH_USED
        return frontier[0].steps

    @staticmethod
    def _stopped(frontier: list[Branch], best_finished: Branch | None) -> tuple[Step, ...]:
        """The plan to return when a call could not be made: the best finished one seen, else the best partial."""
        if best_finished is not None:
            return best_finished.steps
        return frontier[0].steps if frontier else ()


def _last(branch: Branch) -> str:
    if branch.finished:
        return END
    return str(branch.steps[-1]) if branch.steps else "(start)"


def tot_planner(kb: KnowledgeBase, spec: PlannerSpec) -> TreeOfThoughtsPlanner:
    """``tot``: options ``tot_breadth`` (1..8, default 3), ``tot_beam`` (1..8, default 2) and the LLM options."""
    from ...calls.backends import backend_for

    backend = spec.context.backend or backend_for(spec.llm, n_ctx=TOT_CONTEXT, progress=spec.context.progress)
    return TreeOfThoughtsPlanner(kb, spec, backend, n_ctx=TOT_CONTEXT)
