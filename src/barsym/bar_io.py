"""Read and write BAR's plan format: JSON Lines, one step per line.

``{"type": "craft", "obj_name": "planks", "obj_num": 13, "tool": null}``; dig
down is ``{"type": "special", "obj_name": "dig down", "obj_num": null, ...}``.
barsym also accepts ``"type": "kill"`` for mob drops, and on a craft or smelt an
optional ``"recipe": N`` (which of the item's recipes, 0-based: :attr:`Step.recipe`),
written only by a plan that needs one, so every other plan is BAR's format as it
was. Every problem is reported as ``file:line: what was wrong`` so hand-written
plans are easy to fix.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from pathlib import Path

from . import steps as notation
from .atomic_files import write_atomic
from .model import MAX_COUNT, Plan, Step, StepType
from .plain_models import ModelError

_BAR_TYPES = {"mine", "craft", "smelt", "kill", "special"}
_FIELDS = {"type", "obj_name", "obj_num", "tool", "recipe"}
DIG_DOWN_NAME = "dig down"
CLIMB_UP_NAME = "climb up"  # barsym's own special step; BAR's plans never climb


class PlanFormatError(ValueError):
    """The input is not a BAR plan; ``where`` is ``file:line`` when known."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


#: longest rendering of a bad value in a message: the message stays one readable line
_SHOWN = 60


def shown(value: object) -> str:
    """``repr(value)`` cut to a readable length, for quoting bad input back to the user.

    A 4000-digit ``obj_num`` or a list nested 900 deep is legal JSON, and quoting
    it whole would bury the message (or, for the nesting, overflow ``repr``).
    """
    try:
        text = repr(value)
    except RecursionError:
        text = f"<a {type(value).__name__} nested too deeply to show>"
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 15]}... ({len(text)} characters)"


def loads_json(text: str, where: str) -> object:
    """``json.loads`` whose every failure is a one-line :class:`PlanFormatError` naming ``where``.

    Python's parser fails in two ways besides ``JSONDecodeError``: nesting
    deeper than the interpreter's recursion limit raises ``RecursionError``,
    and an integer longer than ``sys.get_int_max_str_digits()`` (4300 digits
    by default) raises a bare ``ValueError``. Both are bad input, not barsym bugs, so every
    JSON file the user gives barsym is read through here. Positions are
    ``column C`` for one line of text (a plan line) and ``line L column C``
    for a whole file.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        position = f"column {exc.colno}" if "\n" not in text.rstrip() else f"line {exc.lineno} column {exc.colno}"
        raise PlanFormatError(where, f"malformed JSON at {position}: {exc.msg}") from None
    except RecursionError:
        raise PlanFormatError(
            where,
            "JSON nested too deeply to read (about a thousand levels or more); "
            "barsym's inputs are nested a few levels at most",
        ) from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion ..."
        raise PlanFormatError(
            where, f"a number has more than {_int_digits()} digits; counts are whole numbers from 1 to {MAX_COUNT}"
        ) from None


def _int_digits() -> int:
    return getattr(sys, "get_int_max_str_digits", lambda: 4300)()  # Python < 3.10.7 has no limit to query


def step_from_record(record: object, where: str) -> Step:
    if not isinstance(record, dict):
        raise PlanFormatError(where, f"expected a JSON object per line, got {type(record).__name__}")
    unknown = set(record) - _FIELDS
    if unknown:
        raise PlanFormatError(where, f"unknown field(s) {shown(sorted(unknown))}; a step has {sorted(_FIELDS)}")
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in _BAR_TYPES:  # a list or object is not hashable: test str first
        raise PlanFormatError(where, f"unknown step type {shown(kind)}; expected one of {sorted(_BAR_TYPES)}")
    name, num, tool = record.get("obj_name"), record.get("obj_num"), record.get("tool")
    if tool is not None and not isinstance(tool, str):
        raise PlanFormatError(where, f"'tool' must be a string or null, got {shown(tool)}")
    recipe = record.get("recipe")
    if recipe is not None and (isinstance(recipe, bool) or not isinstance(recipe, int) or recipe < 0):
        raise PlanFormatError(
            where, f"'recipe' must be a whole number from 0 (which recipe) or null, got {shown(recipe)}"
        )
    if recipe is not None and kind not in ("craft", "smelt"):
        raise PlanFormatError(where, f"only craft and smelt steps name a recipe; this {kind} step names {recipe}")
    if kind == "special":
        special = name.strip().lower().replace("_", " ") if isinstance(name, str) else None
        if special not in (DIG_DOWN_NAME, CLIMB_UP_NAME):
            raise PlanFormatError(
                where, f"unknown special step {shown(name)}; the special steps are 'dig down' and 'climb up'"
            )
        if num not in (None, 1):
            raise PlanFormatError(where, f"'{special}' takes obj_num null, got {shown(num)}")
        if special == CLIMB_UP_NAME:
            return Step(type=StepType.CLIMB_UP, tool=tool)
        return Step(type=StepType.DIG_DOWN, tool=tool)
    if not isinstance(name, str) or not name.strip():
        raise PlanFormatError(where, f"'obj_name' must be a non-empty item name, got {shown(name)}")
    if isinstance(num, bool) or not isinstance(num, int):
        raise PlanFormatError(where, f"'obj_num' must be a whole number from 1 to {MAX_COUNT}, got {shown(num)}")
    if not 1 <= num <= MAX_COUNT:
        raise PlanFormatError(where, f"'obj_num' must be from 1 to {MAX_COUNT}, got {shown(num)}")
    try:
        return Step(type=StepType(kind), item=name, count=num, tool=tool, recipe=recipe)
    except ModelError as exc:  # pragma: no cover - the checks above cover the schema
        raise PlanFormatError(where, exc.errors()[0]["msg"]) from None


def step_to_record(step: Step) -> dict:
    if step.type is StepType.DIG_DOWN:
        return {"type": "special", "obj_name": DIG_DOWN_NAME, "obj_num": None, "tool": step.tool}
    if step.type is StepType.CLIMB_UP:
        return {"type": "special", "obj_name": CLIMB_UP_NAME, "obj_num": None, "tool": step.tool}
    record = {"type": step.type.value, "obj_name": step.item, "obj_num": step.count, "tool": step.tool}
    if step.recipe is not None:
        record["recipe"] = step.recipe
    return record


NOTATION_VERBS = ("mine", "craft", "smelt", "kill")
#: what ``barsym plan`` prints after a step: its provenance in brackets, then what it is for
_ANNOTATION = re.compile(r"\s+\[[^\]]*\](?:\s+for\s.*)?$")
_PLAN_HEADER = "Plan for "  # the first line of ``barsym plan``'s text output
_NUMBERED = re.compile(r"^\s*\d+[.)]\s")


def step_from_text(line: str) -> Step:
    """One step in barsym's notation; ValueError saying what is wrong. Item names are not checked here
    (the validator reports unknown items, as for BAR's records)."""
    text = line.strip().rstrip(".").strip().lower()
    match = notation.read_step(text, numbered=True)  # the one reader of the notation (barsym.steps)
    if match is None:
        raise ValueError(f"not a step: {text[:60]!r}")
    tool = match.tool
    if match.verb == "climb_up":
        return Step(type=StepType.CLIMB_UP, tool=tool)
    if match.verb is None:
        return Step(type=StepType.DIG_DOWN, tool=tool)
    if match.verb not in NOTATION_VERBS:
        raise ValueError(f"unknown action {match.verb!r}")
    count = match.count or 0
    if not notation.counts_ok(count):
        raise ValueError(f"count {count} out of range")
    return Step(type=StepType(match.verb), item=match.item, count=count, tool=tool)


def _reads_as_step(line: str) -> bool:
    try:
        step_from_text(_ANNOTATION.sub("", line))
    except ValueError:
        return False
    return True


def parse_notation(text: str, source: str = "<string>") -> Plan:
    """A plan in barsym's notation, one step a line (``#`` comments and blank lines skipped).

    ``barsym plan``'s whole text output reads as well: after its ``Plan for ...``
    header only the numbered lines are steps (the rest is its commentary), and the
    ``[provenance] for ...`` after each step is dropped.
    """
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if lines and lines[0][1].lstrip().startswith(_PLAN_HEADER):
        lines = [(n, line) for n, line in lines[1:] if _NUMBERED.match(line)]
    steps = []
    for number, line in lines:
        try:
            steps.append(step_from_text(_ANNOTATION.sub("", line)))
        except ValueError as exc:
            raise PlanFormatError(
                f"{source}:{number}",
                f"{exc} (expected a step such as `mine 4 logs`, `craft 1 stick`, `dig down with wooden_pickaxe`)",
            ) from None
    if not steps:
        raise PlanFormatError(source, "empty plan: no steps found")
    return Plan(steps=tuple(steps), source=source)


def parse_plan(text: str, source: str = "<string>") -> Plan:
    """A plan in BAR's JSON Lines, or in barsym's notation (what ``barsym plan`` prints) when it reads as that."""
    first = next((line.lstrip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("#") or (
        first and not first.startswith("{") and (first.startswith(_PLAN_HEADER) or _reads_as_step(first))
    ):
        return parse_notation(text, source)
    steps = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            steps.append(step_from_record(loads_json(line, where), where))
        except PlanFormatError as exc:
            if steps or line.lstrip().startswith("{"):
                raise
            raise PlanFormatError(
                where,
                f"{exc.message} (a plan is BAR JSON Lines, one object a line, or "
                "barsym's steps such as `mine 4 logs`, one a line)",
            ) from None
    if not steps:
        raise PlanFormatError(source, "empty plan: no steps found (expected one JSON object per line)")
    return Plan(steps=tuple(steps), source=source)


#: the most barsym reads of any one input file (plans, inventories, data sets, run files, memory exports)
MAX_INPUT_BYTES = 64 * 2**20


class InputFileError(OSError):
    """An input file barsym refuses to read: too large, or not a regular file. ``strerror`` says why, in words.

    An ``OSError`` so that every reader's ``except OSError`` already turns it
    into its own one-line message naming the file.
    """


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_input(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file: a regular file of at most ``limit`` bytes, else :class:`InputFileError`.

    Why one function for every reader: ``read_bytes()`` on ``/dev/zero`` fills
    memory until the kernel kills the process, on a FIFO nobody writes to it waits
    forever for a writer, and on a 20 GB file it is a ``MemoryError``. Opening
    non-blocking and checking the kind with ``fstat`` before any read refuses the
    devices; reading at most ``limit + 1`` bytes keeps a file that grows while it
    is read (or a pipe that never ends) from getting past the cap.

    A pipe is read: the shell's process substitution, ``barsym validate <(make_plan)``,
    hands over ``/dev/fd/63``, a pipe whose writer is already there. Opened
    non-blocking, a FIFO with no writer at all opens at once and reads as empty,
    which is refused in words rather than waited on.
    """
    path = Path(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        pipe = stat.S_ISFIFO(info.st_mode)
        if not stat.S_ISREG(info.st_mode) and not pipe:
            raise InputFileError(errno.EINVAL, f"{_kind(info.st_mode)}, not a file; give a regular file", str(path))
        too_big = InputFileError(
            errno.EFBIG, f"larger than the {limit // 2**20} MiB barsym reads from one file", str(path)
        )
        if info.st_size > limit:
            raise too_big
        if pipe:  # a writer that is slow to start is waited for; with none at all, the read ends at once
            os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise too_big
        if pipe and not total:
            raise InputFileError(
                errno.ENODATA, "a pipe (FIFO) with nothing written to it; give a regular file, or <(command)", str(path)
            )
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_stream(stream, where: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """At most ``limit`` bytes of a binary stream (standard input); InputFileError past it."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputFileError(errno.EFBIG, f"larger than the {limit // 2**20} MiB barsym reads from one file", where)
    return data


def read_plan(path: str | Path) -> Plan:
    path = Path(path)
    try:
        data = read_input(path)
    except IsADirectoryError:
        raise PlanFormatError(str(path), "is a folder, not a plan file") from None
    except OSError as exc:
        raise PlanFormatError(str(path), f"cannot read file ({exc.strerror})") from None
    return parse_plan(decode_text(data, str(path)), str(path))


def read_plan_or_stdin(path: str) -> Plan:
    """A plan file as a user names it, where ``-`` is standard input (as for prose, :mod:`barsym.reasoning.prose.prose_io`)."""
    if path != "-":
        return read_plan(path)
    try:
        data = read_stream(sys.stdin.buffer, "<stdin>")
    except OSError as exc:
        raise PlanFormatError("<stdin>", exc.strerror) from None
    return parse_plan(decode_text(data, "<stdin>"), "<stdin>")


def decode_text(data: bytes, source: str) -> str:
    if b"\x00" in data:
        raise PlanFormatError(source, "binary file (contains NUL bytes); expected JSON Lines text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanFormatError(source, f"not UTF-8 text (bad byte at offset {exc.start})") from None


def format_plan(plan: Plan) -> str:
    return "".join(json.dumps(step_to_record(step)) + "\n" for step in plan.steps)


def write_plan(plan: Plan, path: str | Path) -> None:
    """``plan`` as BAR JSON Lines into ``path``, replaced all at once (the old file kept on a failure)."""
    write_atomic(path, format_plan(plan))
