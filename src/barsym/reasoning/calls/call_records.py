"""One logged model call as it is read back: every stored field checked, and shown as ``barsym logs`` shows it.

A row of the call log may be damaged (a file edited by hand, a disk fault,
another program's table of the same name): each field is checked before it
becomes a :class:`CallRecord`, so a bad row is skipped and named rather than
shown wrong or crashing the reader (:meth:`~barsym.reasoning.calls.call_log.CallLog.readable`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class CallRecord:
    """One logged call as ``barsym logs`` shows it."""

    id: int
    at: float
    run: int | None
    command: str
    goal: str
    attempt: int
    messages: list[dict[str, str]]  # the whole prompt, prefix included
    grammar: str
    reply: str | None
    verdict: str
    problems: list[str]
    seconds: float
    temperature: float
    prompt_tokens: int | None
    evaluated_tokens: int | None
    completion_tokens: int | None
    evaluations: int | None
    model: str | None = None  # its run's model: GGUF and adapter with their SHA-256 (barsym.llm.provenance)

    def to_text(self, full: bool = False) -> str:
        """The call as ``barsym logs`` shows it: when, the goal's message (every message with ``full``), the reply,
        the verdict, what it cost, the grammar (its size, or in full)."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.at))
        # a call made outside a planning run (a score, a repair, a parse) has no run; an old run no command
        origin = f"run {self.run}: {self.command or '(command not recorded)'}" if self.run is not None else "no run"
        lines = [f"#{self.id}  {when}  {origin}"]
        if self.model:
            lines.append(f"  model: {self.model}")
        lines.append(f"  goal {self.goal}, attempt {self.attempt}, temperature {self.temperature:g}")
        asked = self.messages if full else self.messages[-1:]
        for message in asked:
            text = message["content"].replace("\n", "\n    ")
            lines.append(f"  {message['role']}: {text}")
        lines.append(f"  reply: {self.reply if self.reply is not None else '(none)'}")
        verdict = self.verdict + (": " + "; ".join(self.problems) if self.problems else "")
        lines.append(f"  verdict: {verdict}")
        cost = f"  {self.seconds:.2f} s"
        if self.prompt_tokens is not None:  # a server may not say what it evaluated, or in how many steps
            evaluated = f" ({self.evaluated_tokens} evaluated)" if self.evaluated_tokens is not None else ""
            reply = f", reply {self.completion_tokens} tokens" if self.completion_tokens is not None else ""
            steps = f" in {self.evaluations} model evaluations" if self.evaluations is not None else ""
            cost += f"; prompt {self.prompt_tokens} tokens{evaluated}{reply}{steps}"
        lines.append(cost)
        if full:
            lines.append("  grammar:\n    " + self.grammar.rstrip("\n").replace("\n", "\n    "))
        else:
            lines.append(
                f"  grammar: {self.grammar.count('::=')} rule(s), {len(self.grammar)} characters (--full shows it)"
            )
        return "\n".join(lines) + "\n\n"


def damaged_summary(damaged: list[tuple[int, str]]) -> str:
    """The damaged records a read skipped, in one line: how many, the first few ids, why the first is damaged."""
    first_id, why = damaged[0]
    ids = ", ".join(f"#{i}" for i, _ in damaged[:5]) + (", ..." if len(damaged) > 5 else "")
    return f"{len(damaged)} damaged call record(s) skipped ({ids}; #{first_id}: {why})"


def _number(value, name: str, whole: bool = False, optional: bool = False):
    if value is None and optional:
        return None
    kinds = (int,) if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value != value:
        raise TypeError(f"{name} is {value!r:.40}, not a {'whole ' if whole else ''}number")
    return value


def _text_field(value, name: str, optional: bool = False):
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} is {value!r:.40}, not text")
    return value


def _messages(text) -> list[dict[str, str]]:
    messages = json.loads(_text_field(text, "messages"))
    if not isinstance(messages, list):
        raise TypeError("messages is not a list")
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise TypeError("a message has no role")
        if not isinstance(message.get("content"), str):
            raise TypeError(f"a {message['role'][:20]} message has no text content")
    return messages


def record_from_row(row: tuple) -> CallRecord:
    """One row of :meth:`CallLog.readable`'s query as a record, every field checked (TypeError/ValueError if not)."""
    (
        id_,
        at,
        run,
        command,
        goal,
        attempt,
        head,
        tail,
        grammar,
        reply,
        verdict,
        problems,
        seconds,
        temperature,
        prompt,
        evaluated,
        completion,
        evaluations,
        *rest,
    ) = row
    model = rest[0] if rest else None  # a query without the run's model (older callers) leaves it out
    problem_list = json.loads(_text_field(problems, "problems"))
    if not isinstance(problem_list, list) or not all(isinstance(p, str) for p in problem_list):
        raise TypeError("problems is not a list of texts")
    return CallRecord(
        _number(id_, "id", True),
        _number(at, "at"),
        _number(run, "run", True, True),
        _text_field(command, "command"),
        _text_field(goal, "goal"),
        _number(attempt, "attempt", True),
        (_messages(head) if head else []) + _messages(tail),
        _text_field(grammar, "grammar", True) or "",
        _text_field(reply, "reply", True),
        _text_field(verdict, "verdict"),
        problem_list,
        _number(seconds, "seconds"),
        _number(temperature, "temperature"),
        _number(prompt, "prompt_tokens", True, True),
        _number(evaluated, "evaluated_tokens", True, True),
        _number(completion, "completion_tokens", True, True),
        _number(evaluations, "evaluations", True, True),
        _text_field(model, "model", True),
    )
