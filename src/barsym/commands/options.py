"""Command-line options made from the library's option models, so that every range is stated once.

Each option set (the model's, the LLM planners', DEPS', state consistency's, the execution world's)
is a pydantic model on the library side, next to the code that takes it. :func:`add_model` turns a
model's fields into arguments: the flag (the field's name, or ``flag`` in ``json_schema_extra``),
the help (the Field's description and default), the choices of a ``Literal``, and a switch for a
``bool``. Every argument but a switch defaults to ``SUPPRESS``, so the parsed namespace holds what the user
typed and nothing else; :func:`read_model` builds the model from that (``model_fields_set`` is
then what was given) and turns pydantic's complaint into one line naming the flag.

A model may also be a :class:`~barsym.plain_models.PlainModel` (the goal, the start and memory options): it
has the same ``model_fields`` and errors, and this module does not import pydantic, so a command whose
options are all plain (``plan --planner symbolic``, ``validate``) starts without it.
"""

from __future__ import annotations

import argparse
import typing
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..bar_io import shown
from .common import Deprecated, UsageError

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..plain_models import ModelError

    #: a pydantic model or a plain one, read through the attributes both have (``model_fields``' FieldInfo's)
    Model = Any


def flag(model: Model, name: str) -> str:
    extra = model.model_fields[name].json_schema_extra or {}
    return extra.get("flag") or "--" + name.replace("_", "-")


def choices(annotation) -> list[str] | None:
    """The values a ``Literal``/``Enum`` field (optional or not) takes, as typed on the command line."""
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return [str(a) for a in typing.get_args(arg)]
        if isinstance(arg, type) and issubclass(arg, Enum):
            return [str(m.value) for m in arg]
    return None


def _show(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def span(model: Model, name: str) -> str:
    """A field's range in words (``from 1 to 10``, ``at least 0``), from its ``ge``/``le`` constraints."""
    low = high = None
    for m in model.model_fields[name].metadata:
        low, high = getattr(m, "ge", low), getattr(m, "le", high)
    if low is not None and high is not None:
        return f"from {_show(low)} to {_show(high)}"
    return f"at least {_show(low)}" if low is not None else ""


def add_model(
    parser,
    model: Model,
    title: str | None = None,
    *,
    skip=(),
    defaults: dict | None = None,
    helps: dict | None = None,
    deprecated: dict[str, str] | None = None,
) -> None:
    """One argument per field of ``model`` (but ``skip``); ``defaults`` and ``helps`` are shown in the help
    in place of the model's own; ``deprecated`` maps old flags to the field they still set."""
    group = parser.add_argument_group(title) if title else parser
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        extra = field.json_schema_extra or {}
        default = (defaults or {}).get(name, field.get_default(call_default_factory=True))
        text = (helps or {}).get(name) or field.description or ""
        if field.annotation is bool:  # a switch: given when flipped
            kind = {"action": "store_false" if field.default else "store_true", "default": field.default}
        elif field.annotation == bool | None:  # --x/--no-x, unset unless given (the planner's own default)
            kind = {"action": argparse.BooleanOptionalAction, "default": argparse.SUPPRESS}
        else:
            known = choices(field.annotation)
            if known:
                text += f"; one of {', '.join(known)}"
            elif span(model, name):
                text += f"; {span(model, name)}"
            if default not in (None, []) and not field.is_required() and "default" not in text:
                text += f" (default {default.value if isinstance(default, Enum) else _show(default)})"
            repeatable = typing.get_origin(field.annotation) is list
            kind = {"action": "append" if repeatable else "store", "default": argparse.SUPPRESS}
            kind |= {"required": field.is_required(), "metavar": extra.get("metavar", name.upper())}
        group.add_argument(flag(model, name), *extra.get("short", ()), dest=name, help=text, **kind)
    for old, name in (deprecated or {}).items():
        group.add_argument(
            old, dest=name, default=argparse.SUPPRESS, help=argparse.SUPPRESS, action=Deprecated, new=flag(model, name)
        )


def given(args: argparse.Namespace, model: Model, skip=()) -> dict:
    """The fields of ``model`` the command line set (their text, as typed; a switch only when flipped)."""
    fields = model.model_fields
    return {
        n: getattr(args, n)
        for n in fields
        if n not in skip
        and hasattr(args, n)
        and not (fields[n].annotation is bool and getattr(args, n) == fields[n].default)
    }


def read_model(args: argparse.Namespace, model: Model, skip=(), **values):
    """``model`` from what the command line gave (over ``values``); a bad value is one UsageError line."""
    typed = given(args, model, skip)
    try:
        return model(**{**values, **typed})
    except ValueError as exc:  # pydantic's ValidationError and a plain model's ModelError are ValueErrors
        if not callable(getattr(exc, "errors", None)):
            raise
        raise UsageError(message(model, typing.cast("ModelError", exc), typed)) from None


#: what a value must be, by how pydantic's error type begins (int_parsing, greater_than_equal, ...)
MUST_BE = {"int": "a whole number", "finite": "a finite number", "float": "a number", "greater": "", "less": ""}


def message(model: Model, exc: ValidationError | ModelError, typed: dict) -> str:
    """pydantic's first error as the line a user reads: the flag, what it takes, what was given."""
    error = exc.errors()[0]
    if not error["loc"]:  # a check across fields (a model validator): its own words
        return str(error["msg"]).removeprefix("Value error, ")
    name = str(error["loc"][0])
    option, value = flag(model, name), typed.get(name, error.get("input"))
    kind, where = error["type"], span(model, name)
    known = choices(model.model_fields[name].annotation)
    if known:
        return f"{option} must be one of {', '.join(known)}, got {shown(value)}"
    what = next((text for prefix, text in MUST_BE.items() if kind.startswith(prefix)), None)
    if what is not None:
        return f"{option} must be {' '.join(filter(None, (what, where)))}, got {shown(value)}"
    return f"{option}: {str(error['msg']).removeprefix('Value error, ').removeprefix(f'{option}: ')}"
