"""The training-data rule, checked on examples: teach knowledge, hold out tasks (:mod:`.goals` states it).

:func:`problems` reads one example as the trainer will see it -- its messages and reply, not the
generator's intentions -- and names every way it breaks the rule:

1. a whole plan (``cot``, ``deps``: the reply is a plan, or a plan the dialogue built) for an
   evaluation item from the empty start, or from a start whose plan is near its evaluation plan
   (:func:`~.goals.far_from`); a chained BAR conversation is one call per example, and a call's
   reply is one step (knowledge), so ``bar``/``bar-nofacts``/``know`` examples pass on this rule;
2. a sentence of the evaluation prose (``tests/data/paraphrases.json``'s texts, cut into clauses
   by the parser's own splitter) as a parse example's clause;
3. a plan of the labelled step-score set (BAR's expert plans and their faulty variants) in a
   verdict example, or a verdict asked about an evaluation item's plan at all.

``tests/test_distill_rule.py`` runs it over data regenerated from the shipped adapter's card.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..model import Goal, Plan
from ..sim import State
from .goals import far_from, held_out_items, is_evaluation_task

PLAN_KINDS = ("cot", "deps")
_GOAL = re.compile(r"^Goal: (\d+) ([a-z0-9_]+)(?:\nYou start with: (.*))?", re.S)
_TASK = re.compile(r"^Task: obtain (\d+) ([a-z0-9_]+)\.")


@dataclass
class Evaluation:
    """What must not be taught: the evaluation's items and their plans, its prose, its labelled plans."""

    held: frozenset[str]
    plans: dict[tuple[str, int], Plan]  # (item, count) -> the symbolic plan from the empty start
    clauses: frozenset[str]  # the evaluation prose, clause by clause, as the parser shows it to the model
    labelled: frozenset[tuple[str, tuple[str, ...]]]  # each labelled step: its goal, its plan up to the step

    @classmethod
    def of(cls, kb, paraphrases: Path | None = None) -> Evaluation:
        from ..consistency.step_set import labelled_steps
        from ..eval.dataset import load_dataset, resolve_dataset
        from ..planner.registry import graph_for, symbolic_planner
        from ..reasoning.prose.clauses import split_clauses
        from ..validation import Validator

        symbolic = symbolic_planner(kb, graph=graph_for(kb))
        held = held_out_items(kb)
        plans = {(item, n): symbolic.plan(Goal(item=item, count=n)).plan for item in held for n in range(1, 5)}
        clauses: set[str] = set()
        if paraphrases is not None:
            from ..reasoning.prose.parser import ProseParser
            from .oracle import _NO_MODEL

            parser = ProseParser(kb, graph_for(kb), _NO_MODEL)
            for entry in json.loads(paraphrases.read_text(encoding="utf-8"))["plans"]:
                clauses |= {parser.clause(c).shown for c in split_clauses(entry["text"])}
        path, dialect = resolve_dataset("bar")
        steps = labelled_steps(load_dataset(path, kb, dialect), Validator(kb))
        labelled = frozenset((step.goal.item, tuple(str(s) for s in step.steps[: step.number])) for step in steps)
        return cls(held, plans, frozenset(clauses), labelled)


def problems(example: dict, evaluation: Evaluation, kb) -> list[str]:
    """Every way ``example`` breaks the rule, in words ([] when it keeps it)."""
    kind = example.get("kind", "")
    users = [m["content"] for m in example["messages"] if m["role"] == "user"]
    out: list[str] = []
    if kind in PLAN_KINDS:
        out += _plan_problems(users, example, evaluation, kb)
    if kind == "parse":
        sentence = users[-1].split("\n")[0].removeprefix("Sentence: ")
        if sentence in evaluation.clauses and not _generic(sentence):
            out.append(f"parse: the clause {sentence!r} is a sentence of the evaluation prose")
    if kind.startswith("yes-") or kind == "score":
        out += _verdict_problems(users[-1], evaluation)
    return out


def _plan_problems(users: list[str], example: dict, evaluation: Evaluation, kb) -> list[str]:
    from ..reasoning.grammars.forward_plans import parse_plan_text
    from ..reasoning.planners.forward.cot import split_line
    from ..reasoning.planners.forward.cot_needs import split_reply

    found = [m for m in (_GOAL.match(u) for u in users) if m]
    asked = found[-1] if found else None  # the task's question, after the few-shot turns
    if asked is None:
        return []
    goal = Goal(item=asked.group(2), count=int(asked.group(1)))
    start = _start(asked.group(3))
    if is_evaluation_task(evaluation.held, goal, start):
        return [
            f"{example['kind']}: a whole plan for {goal.count} {goal.item} from the empty start, an evaluation task"
        ]
    if goal.item not in evaluation.held:
        return []
    split = split_line if example["kind"] == "cot" else None
    reply = split_reply(example["reply"])[1]  # the plan after any reasoning (cot's, deps' round 0)
    taught = Plan(steps=parse_plan_text(reply, kb, split=split, goal=goal).steps)
    near = evaluation.plans.get((goal.item, goal.count))
    if near is not None and taught.steps and not far_from(taught, near):
        return [
            f"{example['kind']}: the plan for {goal.count} {goal.item} from {asked.group(3)} is near its evaluation plan"
        ]
    return []


def _verdict_problems(question: str, evaluation: Evaluation) -> list[str]:
    found = _TASK.match(question)
    if found is None:
        return []
    out = []
    if found.group(2) in evaluation.held:
        out.append(f"a step verdict on a plan for {found.group(2)}, an evaluation item")
    listed = tuple(re.findall(r"^\d+\. (.+)$", question, re.M))
    step = re.search(r"^(?:Next step|Step): (.+)$", question, re.M)
    asked = listed + ((step.group(1),) if step else ())
    if (found.group(2), asked) in evaluation.labelled or any(
        (found.group(2), asked[:n]) in evaluation.labelled for n in range(1, len(asked) + 1)
    ):
        out.append("a step verdict on a plan of the labelled step set")
    return out


_NOTATION = re.compile(r"^(?:(?:mine|craft|smelt|kill) \d+ [a-z ]+|dig down(?: with [a-z ]+)?)$")


def _generic(clause: str) -> bool:
    """A clause any plan told in words has: two words or fewer ("descend", "dig down"), or the step notation
    itself with spaces for underscores ("craft 1 wooden pickaxe") -- not a sentence of the evaluation's."""
    return len(clause.split()) <= 2 or bool(_NOTATION.match(clause))


def _start(text: str | None) -> State | None:
    """The start a ``You start with: layer N; inventory: 3 logs, ...`` line names (None: none given)."""
    if not text:
        return None
    first = text.split("\n")[0]
    layer = re.search(r"layer (\d+)", first)
    inventory = {name: int(n) for n, name in re.findall(r"(\d+) ([a-z0-9_]+)", first.split("inventory:", 1)[-1])}
    return State.start(inventory, int(layer.group(1)) if layer else 0)
