"""BAR's decomposition by a language model, checked by the crafting graph.

For each goal the model is asked for the one step that makes it and the
sub-goals that step needs (:mod:`.prompts`), under a grammar (:mod:`.reply_grammar`).
With ``verify=True`` (the ``bar`` planner) every answer is checked before the
planner sees it: :func:`check_decomposition` plus two loop checks the local
check cannot make (a sub-goal that a goal further up is waiting for, or one the
graph makes from the goal itself: a stone pickaxe to mine cobblestone), then
BAR's conventions where the game allows a choice and no waste (the verifier's
:mod:`barsym.planner.conventions`). A
rejected answer goes back to the model with the problems in words, and the
retry samples at ``retry_temperature`` (seeded) rather than greedily, since a
greedy model answers the same again; after ``max_retries`` rejections the
symbolic decomposer answers that goal. With
``verify=False`` (``llm-only``) answers pass unchecked; an answer that is not
even a step leaves the goal unanswered, and the plan shows it. So does a goal
that the model's own answers lead back to (a loop would never end otherwise).

Not every goal needs the model. What the plan so far makes deterministic is
answered from the context, without a call:

- spare units of an earlier craft batch cover the goal -> a zero-yield step
  (provenance ``context``); if they cover part of it, the model is asked only
  for the rest and the step is widened to the goal's count afterwards;
- fuel already budgeted for the same smelted item is credited to the step
  (``fuel_credit``), as the symbolic decomposer does;
- tools, stations and layers already planned never reach a decomposer: the
  planner covers them.

In ``graph`` mode a goal whose grammar admits a single line (one producer, no
count to choose: ``mine 3 logs``, ``dig down with wooden_pickaxe``) is answered
by that line without a call (provenance ``graph``).

Each goal's message carries the knowledge base's facts about it (the ways to
make it with the counts for this goal, computed by the rule book:
:mod:`barsym.reasoning.prompts.facts`); ``facts=False`` asks as before. Over BAR's 53
tasks that raised first-try acceptance from 46.5 % to the figure in the
README's benchmark table.

Everything around a call -- priming the backend with the few-shot prefix,
reusing greedy replies to identical prompts, counters, treating the backend
as down after two failures in a row, the SQLite call log -- is
:class:`~barsym.reasoning.calls.model_calls.ModelGateway`'s.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

from ....graph import CraftGraph
from ....kb import KnowledgeBase, Rules, rules_for
from ....llm import FatalBackendError, GrammarError, LLMBackend, LLMError
from ....model import Goal, Step, StepType
from ....planner.conventions import conventions, waste
from ....planner.decomposer import Decomposition, PlanContext, Unanswered, goal_layer
from ....planner.stats import LLMStats
from ....planner.symbolic import SymbolicDecomposer
from ....planner.verify import check_decomposition
from ...calls.call_log import CallLog, Verdict
from ...calls.model_calls import ModelGateway
from ...calls.progress import Phase, Progress, ProgressEvent, goal_words
from ...grammars.reply_grammar import GrammarBuilder, ReplyError, render_goal, render_reply
from ...options import DEFAULT_MODE, MODES, RETRY_TEMPERATURE
from ...prompts.facts import FactBook
from ...prompts.few_shot import FEW_SHOT_GOALS, GRAPH_FACTS_GOALS, PromptBook, feedback_message, unreadable_message
from .replies import LLM, ReplyReader

AFTER_FEEDBACK, FALLBACK, CONTEXT, GRAPH = "llm-after-feedback", "symbolic-fallback", "context", "graph"
#: (goal, plan so far) -> worked examples (goal, its decomposition) to show the model before that goal
Examples = Callable[[Goal, PlanContext], Sequence[tuple[Goal, Decomposition]]]
__all__ = ["DEFAULT_MODE", "Examples", "LLMDecomposer", "LLMStats", "MODES", "RETRY_TEMPERATURE"]


class LLMDecomposer:
    """Decomposer that asks a language model (see the module docstring)."""

    def __init__(
        self,
        kb: KnowledgeBase,
        backend: LLMBackend,
        *,
        mode: str = DEFAULT_MODE,
        max_retries: int = 2,
        verify: bool = True,
        fallback=SymbolicDecomposer,
        graph: CraftGraph | None = None,
        temperature: float = 0.0,
        retry_temperature: float = RETRY_TEMPERATURE,
        seed: int = 0,
        max_calls: int = 300,
        max_backend_failures: int = 2,
        progress: Progress | None = None,
        facts: bool = True,
        log: CallLog | None = None,
        examples: Examples | None = None,
        rules: Rules | str | None = None,
    ):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.kb, self.backend, self.mode, self.verify = kb, backend, mode, verify
        self.max_retries, self.temperature, self.seed = max_retries, temperature, seed
        self.retry_temperature = retry_temperature
        self.max_calls, self.progress = max_calls, progress
        self.rules = rules_for(kb, rules if rules is not None else getattr(graph, "rules", None))
        self.graph = graph or CraftGraph(kb, self.rules)
        symbolic = SymbolicDecomposer(kb, graph=self.graph, prefer=kb.prefer, rules=self.rules)
        self.conventions = symbolic  # BAR's conventions where the game allows a choice (see planner.conventions)
        self.fallback = symbolic if fallback is SymbolicDecomposer else fallback
        if isinstance(self.fallback, type):
            self.fallback = self.fallback(kb, graph=self.graph, rules=self.rules)
        self.grammars = GrammarBuilder(kb, self.graph, conventions=symbolic)
        self.reader = ReplyReader(kb, self.rules, self.grammars)  # a reply as a decomposition (.replies)
        self.facts = (
            FactBook(self.rules, self.graph, choose=symbolic.choose, tool_for=symbolic.tool_for, fuel=symbolic.fuel)
            if facts
            else None
        )
        # Without facts the prompt holds no worked answer (a few-shot turn is a recipe): the model answers from
        # what it knows, which is what BAR's decomposer asks of it; with facts, the turns show facts becoming replies.
        shots = (GRAPH_FACTS_GOALS if mode == "graph" else FEW_SHOT_GOALS) if facts else ()
        self.prompts = PromptBook(kb, symbolic, shots, facts=self._facts if facts else None)
        self.caller = ModelGateway(
            backend,
            self.prompts.prefix,
            seed=seed,
            max_tokens=self.grammars.token_budget(),
            max_failures=max_backend_failures,
            log=log,
            progress=progress,
        )
        self.name = f"llm-{mode}"
        self.examples = examples  # extra few-shot turns for a goal, e.g. remembered close goals (memory.examples)
        self.start_plan()

    @property
    def down(self) -> str | None:
        """Why the backend is considered down (for the whole process), or None."""
        return self.caller.down

    def start_plan(self, estimate: int | None = None) -> None:
        """Reset the per-plan counters and the reply cache (the LLM planners call this).

        ``estimate`` is about how many goals the plan has, for the progress line.
        """
        self.stats = LLMStats()
        self.caller.start_plan(self.stats)
        self.estimate = estimate
        self._accepted_calls: Counter[str] = Counter()  # distinct goal -> accepted answers from real calls

    def start_attempt(self) -> None:
        """BAR's loop plans the task again: per-goal counters restart (they describe the plan returned, as its
        tags do); calls, tokens and time add up (the reply cache answers goals asked before without a call)."""
        self.stats.restart_decisions()
        self._accepted_calls.clear()

    def _facts(self, goal: Goal, context: PlanContext) -> str:
        """What the knowledge base knows about ``goal`` (all counts from the rule book, see reasoning.facts)."""
        layer = goal_layer(goal)
        if layer is not None:
            digs = 1 <= layer <= self.kb.deepest_layer
            tool = self.conventions.dig_tool(layer, context.root.item, context) if digs else None
            return self.facts.for_layer(layer, tool).as_replies()
        if not self.kb.is_known(goal.item):
            return ""
        item = self.kb.resolve(goal.item)
        credit = min(context.fuel_left(item), float(goal.count))
        return self.facts.for_item(item, goal.count, credit, context.held_counts()).as_replies()

    # ---- the one public question -------------------------------------------------------
    def decompose(self, goal: Goal, context: PlanContext) -> Decomposition:
        self.stats.goals += 1
        self._tell(Phase.GOAL, goal)
        try:
            return self._decompose(goal, context)
        finally:
            self._tell(Phase.DONE, goal)

    def _tell(self, phase: Phase, goal: Goal) -> None:
        if self.progress is not None:
            self.progress(
                ProgressEvent(
                    phase,
                    goal_words(self.kb, goal),
                    self.stats.goals,
                    max(self.estimate or 0, self.stats.goals) or None,
                    self.stats,
                )
            )

    def _decompose(self, goal: Goal, context: PlanContext) -> Decomposition:
        if not self.verify and self.reader.name(goal) in {self.reader.name(g) for g in context.path}:
            # unchecked answers can loop (planks from sticks from planks): cut the branch, as BAR's depth limit does
            self.stats.loops_cut += 1
            raise Unanswered(f"{goal.item} is already being obtained further up: the model's answers loop")
        asked = goal
        if goal_layer(goal) is None:
            item = self.kb.resolve(goal.item)
            spare = context.surplus(item)
            if spare >= goal.count:
                self.stats.context_answers += 1
                step = Step(type=StepType.CRAFT, item=item, count=goal.count)
                return Decomposition(
                    step, (), CONTEXT, yields=0, note=f"{goal.count} of {spare} spare from an earlier batch"
                )
            asked = Goal(item=item, count=goal.count - spare)
        grammar, forced = self._grammar(asked, context)
        if forced is not None:
            self.stats.graph_forced += 1
            return self._forced(goal, asked, forced, context)
        if self.down:
            return self._give_up(goal, context, f"LLM backend down: {self.down}")
        if self.stats.llm_calls >= self.max_calls:
            return self._give_up(goal, context, f"LLM call budget of {self.max_calls} per plan used up")
        return self._converse(goal, asked, grammar, context)

    # ---- the conversation with the model -------------------------------------------------
    def _converse(self, goal: Goal, asked: Goal, grammar: str, context: PlanContext) -> Decomposition:
        self.stats.llm_goals += 1
        messages = self.prompts.first(asked, context)
        if self.examples is not None:  # just before the question: after the fixed, KV-cached prefix
            messages[-1:-1] = [
                turn
                for g, d in self.examples(asked, context)
                for turn in (
                    {"role": "user", "content": self.prompts.goal_message(g, PlanContext(self.kb, context.root))},
                    {"role": "assistant", "content": render_reply(d)},
                )
            ]
        feedback = False
        problems: list[str] = []
        refused: set[str] = set()
        shown = render_goal(asked)
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.stats.retries += 1
            temperature = self.retry_temperature if attempt else self.temperature
            try:
                reply = self.caller.call(messages, grammar, temperature)
            except GrammarError as exc:
                problems = [f"grammar refused by the backend: {exc}"]
                self.stats.backend_errors += 1
                self.stats.problems.append(str(exc))
                self.caller.record(
                    shown, attempt + 1, messages, grammar, None, Verdict.BACKEND_ERROR, problems, temperature
                )
                break
            except FatalBackendError:
                raise  # refused credentials, a URL that is not the API, NaN: no fallback, the user must fix it
            except LLMError as exc:
                problems = [f"backend error: {exc}"]
                self.caller.record(
                    shown, attempt + 1, messages, grammar, None, Verdict.BACKEND_ERROR, problems, temperature
                )
                if self.caller.failed(exc):
                    break
                continue
            text = reply.text
            if text in refused and not (attempt and self.retry_temperature):  # greedy decoding repeats itself
                problems.append("the model repeated a refused answer")
                self.caller.record(
                    shown, attempt + 1, messages, grammar, reply, Verdict.REPEATED, problems, temperature
                )
                break
            refused.add(text)
            try:
                decomposition = self.reader.build(goal, asked, text, context)
            except ReplyError as exc:
                self.stats.unreadable += 1
                problems = [f"unusable reply {text[:80]!r}: {exc}"]
                self.caller.record(
                    shown, attempt + 1, messages, grammar, reply, Verdict.UNREADABLE, [str(exc)], temperature
                )
                messages = self.prompts.follow_up(messages, text, unreadable_message(asked, str(exc)))
                feedback = True
                continue
            if self.verify:
                problems = self._check(asked, decomposition, context)
                if problems:
                    self.stats.rejected += 1
                    self.caller.record(
                        shown, attempt + 1, messages, grammar, reply, Verdict.REFUSED, problems, temperature
                    )
                    messages = self.prompts.follow_up(messages, text, feedback_message(asked, problems))
                    feedback = True
                    continue
            self.caller.record(shown, attempt + 1, messages, grammar, reply, Verdict.ACCEPTED, [], temperature)
            if feedback:
                self.stats.accepted_after_feedback += 1
            else:
                self.stats.accepted_first_try += 1
            if not reply.reused:
                self._count_accepted_call(asked)
            note = f"accepted after {attempt} refused or failed attempt(s)" if attempt else ""
            answer = dataclasses.replace(
                decomposition, provenance=AFTER_FEEDBACK if feedback else LLM, note=note, verified=self.verify
            )
            return self.reader.widen(goal, asked, answer)
        return self._give_up(goal, context, "; ".join(problems[:3]) or "no answer")

    def _count_accepted_call(self, asked: Goal) -> None:
        key = f"{asked.count} {self.reader.name(asked)}"
        self._accepted_calls[key] += 1
        self.stats.accepted_calls += 1
        self.stats.max_accepted_calls_per_goal = max(self.stats.max_accepted_calls_per_goal, self._accepted_calls[key])

    # ---- turning a reply into a decomposition ---------------------------------------------
    def _grammar(self, asked: Goal, context: PlanContext) -> tuple[str, str | None]:
        if self.mode == "graph":
            layer = goal_layer(asked)
            credit = context.fuel_left(asked.item) if layer is None else 0.0
            avoid = frozenset(self.reader.name(g) for g in context.path)
            digs = layer is not None and 1 <= layer <= self.kb.deepest_layer
            dig_tool = self.conventions.dig_tool(layer, context.root.item, context) if digs else None
            built = self.grammars.for_goal(
                asked, min(credit, float(asked.count)), avoid, dig_tool, context.held_counts()
            )
            if built is not None:
                return built.text, built.forced
        return self.grammars.vocab(), None

    def _check(self, asked: Goal, decomposition: Decomposition, context: PlanContext) -> list[str]:
        problems = check_decomposition(self.kb, asked, decomposition, self.rules)
        problems += self.reader.loops(asked, decomposition, context) + waste(self.rules, decomposition)
        return problems or conventions(self.conventions, asked, decomposition, context.root.item, context)

    # ---- answers without the model -------------------------------------------------------
    def _forced(self, goal: Goal, asked: Goal, line: str, context: PlanContext) -> Decomposition:
        decomposition = self.reader.build(goal, asked, line, context)
        problems = self._check(asked, decomposition, context) if self.verify else []
        if problems:
            return self._give_up(goal, context, "the only answer the graph admits is refused: " + "; ".join(problems))
        return self.reader.widen(
            goal,
            asked,
            dataclasses.replace(
                decomposition, provenance=GRAPH, note="the only step the graph admits", verified=self.verify
            ),
        )

    def _give_up(self, goal: Goal, context: PlanContext, reason: str) -> Decomposition:
        if self.fallback is None:
            self.stats.unanswered += 1
            raise Unanswered(reason)
        self.stats.fallbacks += 1
        answer = self.fallback.decompose(goal, context)
        note = f"LLM gave up ({reason})" + (f"; {answer.note}" if answer.note else "")
        return dataclasses.replace(answer, provenance=FALLBACK, note=note)
