"""A plan in prose read from a file, and what ``barsym parse`` shows of it: the steps, the skipped clauses, the verdict.

The reading refuses, with a reason, what cannot be a plan in words (a folder,
a binary or non-UTF-8 file, an empty one) before any model is asked; the text
and the record are those of :class:`~barsym.reasoning.prose.parser.ParsedPlan` with
the validator's result, so a script parsing prose through the library shows
what the command shows.
"""

from __future__ import annotations

import sys

from ...bar_io import MAX_INPUT_BYTES, PlanFormatError, read_stream
from ...model import Plan
from ...steps import clip
from ...validation import ValidationResult
from .parser import ParsedPlan, ProseLimitError, ProseParser


def read_text(path: str) -> str:
    """The prose in ``path`` ('-': stdin); PlanFormatError for a file that is missing, empty, binary or not UTF-8."""
    where = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = read_stream(sys.stdin.buffer, where)
        else:
            with open(path, "rb") as handle:
                data = read_stream(handle, where, MAX_INPUT_BYTES)
    except IsADirectoryError:
        raise PlanFormatError(where, "is a directory; give a text file") from None
    except OSError as exc:
        raise PlanFormatError(where, f"cannot read it: {exc.strerror}") from None
    if b"\x00" in data:
        raise PlanFormatError(where, "binary file (contains NUL bytes); expected the plan as text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanFormatError(where, f"not UTF-8 text (bad byte at offset {exc.start})") from None
    if not text.strip():
        raise PlanFormatError(where, "empty; write the plan in words, e.g. 'chop four logs, then make planks'")
    return text


def parse_prose(kb, text: str, where: str, backend, seed: int = 0, log: bool = True) -> tuple[ParsedPlan, Plan]:
    """The steps the model reads in ``text``, and them as a plan; a PlanFormatError when no clause gave one.
    Each call goes to the call log (``barsym logs``) unless ``log`` is False, as the planners' calls do."""
    from ...planner.registry import graph_for

    try:
        parsed = ProseParser(kb, graph_for(kb), backend, seed=seed, log=log).parse(text)
    except ProseLimitError as exc:
        raise PlanFormatError(where, str(exc)) from None
    if not parsed.steps:
        raise PlanFormatError(
            where, "no step found (no clause names an item barsym knows); write e.g. 'mine 3 logs, then craft planks'"
        )
    return parsed, parsed.plan(where)


def parsed_record(parsed: ParsedPlan, where: str, made_by: str, result: ValidationResult) -> dict:
    """The parse as plain data: each step with the clause it came from and the model's reply, the skipped
    clauses, the validation."""
    return {
        "file": where,
        "parsed_by": made_by,
        "calls": parsed.calls,
        "steps": [
            {"step": str(s), "from": src, "reply": rep}
            for s, src, rep in zip(parsed.steps, parsed.sources, parsed.replies)
        ],
        "skipped": parsed.skipped,
        "unread": parsed.unread,
        "complete": parsed.complete,
        "validation": result.to_dict(),
    }


def parsed_text(parsed: ParsedPlan, where: str, made_by: str, result: ValidationResult) -> str:
    """The parse as ``barsym parse`` prints it: the steps beside their clauses, the skipped ones, the verdict."""
    clauses = len(parsed.steps) + len(parsed.skipped) + len(parsed.unread)
    lines = [f"{where}: {len(parsed.steps)} steps from {clauses} clauses ({made_by}, {parsed.calls} calls)"]
    width = max(len(str(s)) for s in parsed.steps)
    for i, (step, source) in enumerate(zip(parsed.steps, parsed.sources), 1):
        lines.append(f"  {i:>2}. {str(step):<{width}}  <- {clip(source)}")
    lines += [f"  skipped (no step): {clip(source)}" for source in parsed.skipped]
    lines += [
        f"  could not read: {clip(source)!r} (no item barsym knows is near its words)" for source in parsed.unread
    ]
    if not parsed.complete:
        lines.append(f"incomplete: {len(parsed.unread)} clause(s) could not be read; the plan has a gap for each")
    goal_text = f"goal {result.goal.count} {clip(result.goal.item)}" if result.goal else "no goal"
    lines.append(f"verdict: {result.verdict.value} ({goal_text})")
    for error in result.errors:
        if error.caused_by is None:
            lines.append(f"  step {error.step}: {error.message}" if error.step else f"  {error.message}")
    return "\n".join(lines) + "\n"
