"""Read and write BAR's plan format: JSON Lines, one step per line.

``{"type": "craft", "obj_name": "planks", "obj_num": 13, "tool": null}``; dig
down is ``{"type": "special", "obj_name": "dig down", "obj_num": null, ...}``.
barsym also accepts ``"type": "kill"`` for mob drops. Every problem is
reported as ``file:line: what was wrong`` so hand-written plans are easy to fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from .model import MAX_COUNT, Plan, Step, StepType

_BAR_TYPES = {"mine", "craft", "smelt", "kill", "special"}
_FIELDS = {"type", "obj_name", "obj_num", "tool"}
DIG_DOWN_NAME = "dig down"


class PlanFormatError(ValueError):
    """The input is not a BAR plan; ``where`` is ``file:line`` when known."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


def step_from_record(record: object, where: str) -> Step:
    if not isinstance(record, dict):
        raise PlanFormatError(where, f"expected a JSON object per line, got {type(record).__name__}")
    unknown = set(record) - _FIELDS
    if unknown:
        raise PlanFormatError(where, f"unknown field(s) {sorted(unknown)}; a step has {sorted(_FIELDS)}")
    kind = record.get("type")
    if kind not in _BAR_TYPES:
        raise PlanFormatError(where, f"unknown step type {kind!r}; expected one of {sorted(_BAR_TYPES)}")
    name, num, tool = record.get("obj_name"), record.get("obj_num"), record.get("tool")
    if tool is not None and not isinstance(tool, str):
        raise PlanFormatError(where, f"'tool' must be a string or null, got {tool!r}")
    if kind == "special":
        if not isinstance(name, str) or name.strip().lower().replace("_", " ") != DIG_DOWN_NAME:
            raise PlanFormatError(where, f"unknown special step {name!r}; the only special step is 'dig down'")
        if num not in (None, 1):
            raise PlanFormatError(where, f"'dig down' takes obj_num null, got {num!r}")
        return Step(type=StepType.DIG_DOWN, tool=tool)
    if not isinstance(name, str) or not name.strip():
        raise PlanFormatError(where, f"'obj_name' must be a non-empty item name, got {name!r}")
    if isinstance(num, bool) or not isinstance(num, int):
        raise PlanFormatError(where, f"'obj_num' must be a whole number from 1 to {MAX_COUNT}, got {num!r}")
    if not 1 <= num <= MAX_COUNT:
        raise PlanFormatError(where, f"'obj_num' must be from 1 to {MAX_COUNT}, got {num}")
    try:
        return Step(type=StepType(kind), item=name, count=num, tool=tool)
    except ValidationError as exc:  # pragma: no cover - the checks above cover the schema
        raise PlanFormatError(where, exc.errors()[0]["msg"]) from None


def step_to_record(step: Step) -> dict:
    if step.type is StepType.DIG_DOWN:
        return {"type": "special", "obj_name": DIG_DOWN_NAME, "obj_num": None, "tool": step.tool}
    return {"type": step.type.value, "obj_name": step.item, "obj_num": step.count, "tool": step.tool}


def parse_plan(text: str, source: str = "<string>") -> Plan:
    steps = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PlanFormatError(where, f"malformed JSON at column {exc.colno}: {exc.msg}") from None
        steps.append(step_from_record(record, where))
    if not steps:
        raise PlanFormatError(source, "empty plan: no steps found (expected one JSON object per line)")
    return Plan(steps=tuple(steps), source=source)


def read_plan(path: str | Path) -> Plan:
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise PlanFormatError(str(path), "is a folder, not a plan file") from None
    except OSError as exc:
        raise PlanFormatError(str(path), f"cannot read file ({exc.strerror})") from None
    return parse_plan(decode_text(data, str(path)), str(path))


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
    Path(path).write_text(format_plan(plan), encoding="utf-8")
