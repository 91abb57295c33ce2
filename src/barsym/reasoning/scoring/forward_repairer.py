"""The LLM repairer: the model proposes each next step of a window, forward over the real state.

This is BAR's forward generation between anchors, with barsym's simulator
under it. At every point of the walk (:mod:`.forward`) the candidates are the
steps that are applicable in the current simulated state *and* serve the
window: the plan's next step, a later step of the window that makes what is
missing, or the first step towards what the first blocked step needs. The
model sees the task, the plan, the window, the steps taken so far and the
current state (layer and inventory), and answers under a grammar that admits
exactly those steps, so every proposal is one the simulator accepts; the
simulator then plays it. A single candidate is taken without a call.

Where the model's walk does not finish the window (the step budget runs out,
or the backend fails), the symbolic repairer redoes the window from its start
when the fallback is on; with it off, the model's partial window is spliced
in and the next round sees what is still wrong.

The prompt is laid out for the prefix cache: the system message, task, plan
and window come first and stay fixed during a window; what changes (steps so
far, state, options) comes last.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...consistency.forward import Candidate, WalkState, Window, WindowRepair, walk
from ...consistency.needs import NeedPlanner
from ...kb import KnowledgeBase
from ...llm import LLMBackend
from ...llm.grammar import gbnf_literal
from ...planner.stats import LLMStats
from ..calls.model_calls import ModelGateway
from .step_scorer import task_text

SYSTEM = (
    "You repair Minecraft plans forward, one step at a time, from the state the agent is really in. "
    "Choose the next step from the options: the one that moves the plan towards the step it must reach. "
    "Reply with the step exactly as written in the options."
)
LABEL = "repaired-llm"


class LLMChooser:
    """Asks the model which candidate comes next (see the module docstring)."""

    label = LABEL

    def __init__(
        self,
        kb: KnowledgeBase,
        backend: LLMBackend,
        stats: LLMStats,
        *,
        seed: int = 0,
        temperature: float = 0.0,
        max_failures: int = 2,
        log=True,
    ):
        self.kb, self.backend, self.stats = kb, backend, stats
        self.gateway = ModelGateway(
            backend, seed=seed, temperature=temperature, max_failures=max_failures, log=log, stats=stats
        )

    @property
    def down(self) -> str | None:
        return self.gateway.down

    def messages(self, window: Window, walk: WalkState, options: Sequence[Candidate]) -> list[dict[str, str]]:
        pair, plan = window.pair, window.plan
        end = (
            f"step {pair.end} ({plan[pair.end - 1]}) and the rest can run"
            if pair.end <= len(plan)
            else f"the plan ends with {window.task.count} {window.task.item}"
        )
        fixed = (
            f"{task_text(window.task, plan)}\n\nSteps {pair.start} to {pair.end - 1} are redone from the state "
            f"before step {pair.start}, so that {end}."
        )
        done = "; ".join(str(s) for s in walk.taken) or "nothing yet"
        listed = "\n".join(f"- {c.text} ({c.why})" for c in options)
        variable = (
            f"Steps taken so far: {done}.\nNow: {walk.state.describe(self.kb.layers)}.\nOptions:\n{listed}\nNext step?"
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"{fixed}\n\n{variable}"}]

    def choose(self, window: Window, walk: WalkState, candidates: Sequence[Candidate]) -> int | None:
        options: list[int] = []
        seen: set[str] = set()
        for i, candidate in enumerate(candidates):  # one option per distinct text, the first kept
            if candidate.text not in seen:
                seen.add(candidate.text)
                options.append(i)
        if len(options) == 1:
            self.stats.graph_forced += 1
            return options[0]
        texts = [candidates[i].text for i in options]
        grammar = "root ::= " + " | ".join(gbnf_literal(t) for t in texts) + "\n"
        about = f"repair steps {window.pair.start}-{window.pair.end - 1} of {window.task.count} {window.task.item}"
        text = self.gateway.ask(
            self.messages(window, walk, [candidates[i] for i in options]), grammar, 24, about, lambda t: t in texts
        )
        return None if text is None else options[texts.index(text)]


class LLMRepairer:
    """The forward walk with the model choosing; the symbolic repairer redoes a window it does not finish."""

    name = "llm"

    def __init__(
        self,
        needs: NeedPlanner,
        backend: LLMBackend,
        *,
        fallback=None,
        seed: int = 0,
        temperature: float = 0.0,
        stats: LLMStats | None = None,
    ):
        self.needs = needs
        self.stats = stats if stats is not None else LLMStats()  # the model's calls of every window repaired
        self.chooser = LLMChooser(needs.kb, backend, self.stats, seed=seed, temperature=temperature)
        self.fallback = fallback
        self.fallbacks = 0

    def repair(self, window: Window) -> WindowRepair:
        done = walk(window, self.needs, self.chooser)
        if done.done or self.fallback is None:
            return done
        self.fallbacks += 1
        redone = self.fallback.repair(window)
        redone.note = f"symbolic fallback: the model's walk stopped ({done.note or 'unfinished'})" + (
            f"; {redone.note}" if redone.note else ""
        )
        return redone
