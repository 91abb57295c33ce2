"""Training examples in the planners' own prompts, answered by the symbolic oracle.

Each example is one model call as barsym makes it: the exact messages a
planner sends (system prompt, few-shot turns, the goal, facts, dialogue) and
the reply the oracle gives. The prompts are not re-typed here: every planner
is run for real, against a backend that answers each call with the oracle's
reply and records it (:class:`OracleBackend`). So when a planner's prompt
changes, regenerating the data follows it, and the replies pass the same
grammar and verifier the real model's must.

- ``bar`` / ``bar-nofacts``: BAR's decomposer, one call per goal the graph
  leaves open; the reply is the symbolic decomposer's answer for that goal in
  that plan (:func:`~barsym.reasoning.grammars.reply_grammar.render_reply`).
- ``cot``: the whole plan with the simulator's inventory after every step.
- ``deps``: the plan; and, for a plan with one fault put in, the descriptor's
  words, an explanation naming the failed step, and the repaired plan.
- ``score``: BAR's 1-10 step rating, 10 for a step the simulator can run
  where it stands, 1 for the first step that fails and the ones after it.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from ..llm import Completion, CompletionRequest, LLMBackend, LLMOptions
from ..model import Goal, Plan, Step
from ..planner.decomposer import PlanContext
from ..reasoning.grammars.forward_plans import END, render_plan
from ..reasoning.grammars.reply_grammar import render_reply
from ..reasoning.planners.forward.cot import MARK, MAX_ENTRIES
from ..reasoning.prompts import deps_prompts
from ..reasoning.scoring.step_scorer import LLMStepScorer
from ..sim import DeterministicWorld, State

Example = dict  # {"kind", "goal", "messages", "reply"}


class OracleBackend(LLMBackend):
    """A backend whose every reply is ``answer(messages, grammar)``; it keeps what it was asked and said."""

    def __init__(self, answer: Callable[[list[dict[str, str]], str | None], str | None]):
        super().__init__(LLMOptions(n_ctx=2048))  # the context the shared in-process backend has
        self.answer = answer
        self.calls: list[tuple[list[dict[str, str]], str]] = []
        self.grammars: list[str | None] = []  # the grammar of each recorded call

    def execute(self, request: CompletionRequest) -> Completion:
        messages, grammar = request.messages, request.grammar
        text = self.answer(messages, grammar)
        if text is None:
            text = "?"  # a call the oracle does not answer: the planner treats it as unreadable; not recorded
        else:
            self.calls.append((copy.deepcopy(messages), text))
            self.grammars.append(grammar)
        return Completion(text=text, prompt_tokens=1, completion_tokens=1, finish_reason="stop", model="oracle")


def _example(kind: str, goal: Goal, messages, reply: str) -> Example:
    return {"kind": kind, "goal": goal.item, "count": goal.count, "messages": messages, "reply": reply}


_compiled: dict[str, object] = {}


def admitted(reply: str, grammar: str | None) -> bool:
    """Whether the grammar the planner sent admits the whole reply (so the model can be taught to say it)."""
    if grammar is None:
        return True
    from ..llm.grammar_match import compile_grammar

    if grammar not in _compiled:
        if len(_compiled) > 256:
            _compiled.clear()
        _compiled[grammar] = compile_grammar(grammar)
    state = _compiled[grammar].start().advance(reply)
    return state is not None and state.accepting


def _admitted_calls(backend: "OracleBackend") -> list[tuple[list, str]]:
    return [call for call, grammar in zip(backend.calls, backend.grammars) if admitted(call[1], grammar)]


# ---- bar ---------------------------------------------------------------------------------------
def bar_examples(kb, goal: Goal, *, facts: bool, graph) -> list[Example]:
    """BAR's decomposer on ``goal`` with every open goal answered by the symbolic decomposer."""
    from ..reasoning.planners.backward.llm_planners import bar_planner
    from ..reasoning.spec import PlannerSpec

    asked: list[tuple[Goal, PlanContext]] = []
    answered: list[Goal] = []
    holder: dict = {}

    def answer(messages, grammar):
        sub, context = asked[-1]
        answered.append(sub)
        return render_reply(holder["symbolic"].decompose(sub, context))

    backend = OracleBackend(answer)
    planner = bar_planner(kb, PlannerSpec.of("bar", {"backend": backend, "facts": facts, "graph": graph, "log": False}))
    decomposer = planner.decomposer
    holder["symbolic"] = decomposer.conventions
    converse = decomposer._converse

    def remembered(goal_, sub, grammar, context):
        asked.append((sub, context))
        return converse(goal_, sub, grammar, context)

    decomposer._converse = remembered
    planner.plan(goal)
    stats = decomposer.stats
    if stats.rejected or stats.unreadable or stats.fallbacks:
        return []  # the oracle's answers must pass the verifier as they are; otherwise keep none of this plan
    kind = "bar" if facts else "bar-nofacts"
    return [
        _example(kind, sub, messages, reply)
        for sub, (messages, reply), grammar in zip(answered, backend.calls, backend.grammars)
        if admitted(reply, grammar)
    ]


# ---- cot ---------------------------------------------------------------------------------------
def _inventories(kb, steps, start: State | None) -> list[str] | None:
    world = DeterministicWorld(kb)
    state = world.reset(0, start or State())
    out = []
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        if result.failure is not None:
            return None
        state = result.state
        held = [f"{n} {item}" for item, n in state.state.inventory][:MAX_ENTRIES]  # as many as the grammar admits
        out.append(", ".join(held) or "nothing")
    return out


def cot_examples(kb, goal: Goal, start: State | None, plan: Plan, *, graph, facts: bool = False) -> list[Example]:
    from ..reasoning.planners.forward.cot import cot_planner
    from ..reasoning.planners.forward.cot_needs import reasoned_reply
    from ..reasoning.spec import PlannerSpec

    if facts:
        held = _inventories(kb, plan.steps, start)
        if held is None:
            return []
        reply = "\n".join(f"{step}{MARK}{h}" for step, h in zip(plan.steps, held)) + "\n" + END
    else:  # without facts the reply reasons backward first, then the plain plan (cot_needs)
        reasoned = reasoned_reply(kb, plan.steps, start)
        if reasoned is None:
            return []
        reply = reasoned
    backend = OracleBackend(lambda messages, grammar: reply)
    spec = {"backend": backend, "graph": graph, "log": False, "facts": facts}
    cot_planner(kb, PlannerSpec.of("cot", spec)).plan(goal, start)
    return [_example("cot", goal, messages, text) for messages, text in _admitted_calls(backend)]


# ---- deps --------------------------------------------------------------------------------------
def broken_plan(plan: Plan, rng: random.Random) -> tuple[Step, ...] | None:
    """One fault: a step dropped, or moved to just before the step before it (None: too short)."""
    steps = list(plan.steps)
    if len(steps) < 3:
        return None
    i = rng.randrange(len(steps) - 1)
    if rng.random() < 0.6:
        return tuple(steps[:i] + steps[i + 1 :])
    j = i + 1
    steps[i], steps[j] = steps[j], steps[i]
    return tuple(steps)


def short_plan(plan: Plan, rng: random.Random) -> tuple[Step, ...] | None:
    """The taught model's own commonest faults in a whole plan, one of them: an input made too few times (a step's
    count lowered) or never made (a step that makes one dropped); None when the plan has neither to spoil.

    Its CoT plans on BAR's 53 (stage 6, no facts) that do not run: 14 make an input too few times (sticks, logs,
    planks), 24 never make one (``tools/plan_faults.py``); DEPS' replans of such plans mostly repeat them (``no_change``). So the
    ``deps-repair`` examples start from these faults, where ``deps``' (:func:`broken_plan`) drop or swap any step.
    """
    steps = list(plan.steps)
    counted = [i for i, step in enumerate(steps[:-1]) if step.count and step.count > 1]
    if counted and rng.random() < 0.6:
        i = rng.choice(counted)
        steps[i] = steps[i].model_copy(update={"count": rng.randrange(1, steps[i].count)})
        return tuple(steps)
    makers = [i for i, step in enumerate(steps[:-1]) if step.item is not None]
    if not makers:
        return None
    i = rng.choice(makers)
    return tuple(steps[:i] + steps[i + 1 :])


def explanation(description: str) -> str:
    """One short sentence in the explanation grammar's alphabet (its reply has 32 tokens): the failed step and why."""
    import re

    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,;:_()'-")
    first = re.sub(r"\([^)]*\)", "", description.split(";")[0])
    words = " ".join("".join(c if c in allowed else " " for c in first).split()).rstrip(" ,;:")
    words = " ".join(words.split()[:18]) or "a step could not be done"
    return words[0].upper() + words[1:] + "."


def deps_examples(
    kb,
    goal: Goal,
    start: State | None,
    plan: Plan,
    rng: random.Random,
    *,
    graph,
    symbolic,
    facts: bool = False,
    repair: bool = False,
) -> list[Example]:
    """DEPS round 0 answered right; or round 0 answered with one fault, then the explanation and the repair.

    ``repair``: always the fault, one of the model's own (:func:`short_plan`), and only a fault that fails
    is taught (its explanation and the repaired plan)."""
    from ..reasoning.planners.forward.cot_needs import reasoned_reply
    from ..reasoning.planners.forward.deps import deps_planner
    from ..reasoning.spec import PlannerSpec

    if repair:
        broken = short_plan(plan, rng)
        if broken is None:
            return []
    else:
        broken = broken_plan(plan, rng) if rng.random() < 0.5 else None
    good = render_plan(plan.steps)
    plans = [render_plan(broken), good] if broken is not None else [good]
    if not facts and broken is None:  # without facts round 0 reasons backward first (cot_needs)
        reasoned = reasoned_reply(kb, plan.steps, start)
        if reasoned is None:
            return []
        plans = [reasoned]
    said: list[str] = []

    def answer(messages, grammar):
        if grammar == deps_prompts.EXPLANATION_GRAMMAR:
            failure = messages[-1]["content"]
            return explanation(failure.removeprefix("The plan was executed. "))
        said.append("plan")
        return plans[min(len(said), len(plans)) - 1]

    backend = OracleBackend(answer)
    spec = {
        "backend": backend,
        "graph": graph,
        "log": False,
        "deps_rounds": 1,
        "feedback_world": "deterministic",
        "facts": facts,
    }
    planner = deps_planner(kb, PlannerSpec.of("deps", spec))
    result = planner.plan(goal, start)
    trace = result.trace if hasattr(result, "trace") else None
    rounds = getattr(trace, "rounds", None)
    calls = _admitted_calls(backend)
    if broken is not None:
        wrong = render_plan(broken)
        calls = [c for c in calls if c[1] != wrong]  # never teach the broken plan
        if not rounds or rounds[0].success:
            if repair:
                return []  # a count lowered where the recipe makes more than asked: nothing to repair
            calls = [c for c in calls if c[1] == good]  # the fault did not fail: only the plan
    return [_example("deps", goal, messages, text) for messages, text in calls]


# ---- step scores -------------------------------------------------------------------------------
def score_examples(kb, goal: Goal, plan: Plan, rng: random.Random, *, per_plan: int = 3) -> list[Example]:
    """BAR's step rating on the plan or a broken copy: 10 while the simulator can run it, 1 from the first failure."""
    broken = broken_plan(plan, rng) if rng.random() < 0.6 else None
    steps = tuple(broken or plan.steps)
    world = DeterministicWorld(kb)
    state = world.reset(0, State())
    ok = []
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        if result.failure is not None:
            ok += [False] * (len(steps) - i)
            break
        state = result.state
        ok.append(True)
    scorer = LLMStepScorer(_NO_MODEL, log=False)
    numbers = rng.sample(range(1, len(steps) + 1), min(per_plan, len(steps)))
    if False in ok:
        numbers = sorted(set(numbers) | {ok.index(False) + 1})
    return [_example("score", goal, scorer.messages(goal, steps, n), "10" if ok[n - 1] else "1") for n in numbers]


class _Unused(LLMBackend):
    def execute(self, request: CompletionRequest) -> Completion:  # the scorer only builds messages here
        raise RuntimeError("not called")


_NO_MODEL = _Unused()
