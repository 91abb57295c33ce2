"""Small typed records checked as pydantic's lax models check them, without importing pydantic.

Why: ``barsym plan ITEM --planner symbolic`` is meant to start in 0.2 s of CPU (issue 54), and importing
pydantic alone takes about 0.08 s of that, its first model another 0.02 s. The types on that path -- the
step, goal and plan (:mod:`barsym.model`), the start options (:mod:`barsym.start_state`) and the memory
options (:mod:`barsym.memory.options`) -- are therefore :class:`PlainModel` records: the same attribute
names, equality, hashing (the frozen ones), ``repr``, JSON shape and the pydantic methods barsym calls
(``model_validate``, ``model_copy``, ``model_dump``, ``model_fields``), and a bad value is a
:class:`ModelError` (a ValueError) whose ``errors()`` has pydantic's shape (``type``, ``loc``, ``msg``,
``input``), so :mod:`barsym.commands.options` words it as it words a pydantic model's. A pydantic model
may still hold one as a field (the memory's rows hold a step and goals): :meth:`PlainModel.__get_pydantic_core_schema__`
builds the equivalent pydantic model then, when pydantic is loaded anyway, so its errors read as before.

The values are converted as pydantic's lax mode does for the kinds used here (whole numbers from numbers
and strings, strings, enums, paths, lists, nested records); ``tests/test_plain_models.py`` holds them to
pydantic on generated input.
"""

from __future__ import annotations

import enum
import math
import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any, ClassVar

_MISSING: Any = object()
_WHOLE = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")
#: what pydantic strips around a number: Unicode's White_Space (Python's ``str.strip`` also takes \x1c-\x1f)
_BLANKS = "".join(c for c in map(chr, range(0x3001)) if c.isspace() and c not in "\x1c\x1d\x1e\x1f")


class ModelError(ValueError):
    """A value a record refuses, with pydantic's error records (``errors()``) and a like message."""

    def __init__(self, title: str, errors: list[dict]):
        super().__init__(title, errors)
        self.title, self._errors = title, errors

    def errors(self) -> list[dict]:
        return [dict(e) for e in self._errors]

    def __str__(self) -> str:
        lines = [f"{len(self._errors)} validation error{'s' if len(self._errors) > 1 else ''} for {self.title}"]
        for e in self._errors:
            lines += [".".join(map(str, e["loc"])) or self.title, f"  {e['msg']} [type={e['type']}]"]
        return "\n".join(lines)


class _Bad(Exception):
    """One field's problem on the way out of a converter (made a ModelError by the record)."""

    def __init__(self, kind: str, msg: str, value: Any, loc: tuple = ()):
        self.record = {"type": kind, "loc": loc, "msg": msg, "input": value}


class Field:
    """A field as :mod:`barsym.commands.options` reads one (pydantic's ``FieldInfo`` attributes it uses)."""

    def __init__(
        self,
        annotation: Any,
        default: Any = _MISSING,
        *,
        ge: int | float | None = None,
        le: int | float | None = None,
        description: str | None = None,
        json_schema_extra: dict | None = None,
    ):
        self.annotation, self.default, self.ge, self.le = annotation, default, ge, le
        self.description = description
        self.json_schema_extra: Any = json_schema_extra  # typed as pydantic's is read: a dict or None
        self.metadata = [types.SimpleNamespace(**{k: v}) for k, v in (("ge", ge), ("le", le)) if v is not None]

    def is_required(self) -> bool:
        return self.default is _MISSING

    def get_default(self, call_default_factory: bool = False) -> Any:
        return list(self.default) if isinstance(self.default, list) else self.default


def _whole(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Bad("finite_number", "Input should be a finite number", value)
        if value != int(value):
            raise _Bad("int_from_float", "Input should be a valid integer, got a number with a fractional part", value)
        if abs(value) > 2**63:
            raise _Bad("int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", value)
        return int(value)
    if isinstance(value, (str, bytes)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        text = text.strip(_BLANKS)
        if not _WHOLE.fullmatch(text):
            raise _Bad("int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)
        try:
            return int(text.split(".")[0])
        except ValueError:  # more digits than Python reads (4300), where pydantic stops too
            raise _Bad(
                "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", value
            ) from None
    raise _Bad("int_type", "Input should be a valid integer", value)


def _string(value: Any) -> str:
    if isinstance(value, enum.Enum) and isinstance(value, str):  # a StepType: its value, as pydantic takes it
        return str(value.value)
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad(
                "string_unicode", "Input should be a valid string, unable to parse raw data as a unicode string", value
            ) from None
    raise _Bad("string_type", "Input should be a valid string", value)


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, (str, bytes)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        if text.lower() in _TRUTH:
            return _TRUTH[text.lower()]
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())  # False for inf and nan
    if (whole and abs(value) < 2**63) or isinstance(value, (str, bytes)):
        raise _Bad("bool_parsing", "Input should be a valid boolean, unable to interpret input", value)
    raise _Bad("bool_type", "Input should be a valid boolean", value)


_TRUTH = {w: True for w in ("1", "on", "t", "true", "y", "yes")} | {
    w: False for w in ("0", "off", "f", "false", "n", "no")
}


def _convert(annotation: Any, value: Any) -> Any:
    """``value`` as a field of type ``annotation`` holds it (pydantic's lax conversions), else _Bad."""
    options = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        if value is None and type(None) in options:
            return None
        (kind,) = [o for o in options if o is not type(None)]
        return _convert(kind, value)
    if annotation is int:
        return _whole(value)
    if annotation is str:
        return _string(value)
    if annotation is bool:
        return _boolean(value)
    if annotation is Path:
        if isinstance(value, Path):
            return value
        if isinstance(value, str):
            return Path(_string(value))
        raise _Bad("path_type", "Input is not a valid path for <class 'pathlib.Path'>", value)
    if typing.get_origin(annotation) in (list, tuple):
        if not isinstance(value, (list, tuple)):
            kind = "list" if typing.get_origin(annotation) is list else "tuple"
            raise _Bad(f"{kind}_type", f"Input should be a valid {kind}", value)
        items = []
        for i, item in enumerate(value):
            try:
                items.append(_convert(options[0], item))
            except _Bad as bad:
                bad.record["loc"] = (i, *bad.record["loc"])
                raise
        return items if typing.get_origin(annotation) is list else tuple(items)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        try:
            return annotation(value)
        except ValueError:
            known = [repr(m.value) for m in annotation]
            expected = f"{', '.join(known[:-1])} or {known[-1]}"
            raise _Bad("enum", f"Input should be {expected}", value) from None
    if isinstance(annotation, type) and issubclass(annotation, PlainModel):
        try:
            return annotation.model_validate(value)
        except ModelError as exc:
            first = exc.errors()[0]
            raise _Bad(first["type"], first["msg"], first["input"], first["loc"]) from None
    raise TypeError(f"no conversion to {annotation!r}")  # pragma: no cover - a field type added without one


class PlainModel:
    """A record with typed fields (:attr:`model_fields`), checked when made, as a pydantic model with
    ``extra="forbid"`` (``frozen`` too unless :attr:`frozen` is False). Subclasses set ``model_fields``,
    ``__slots__`` (the field names) and may define ``_check`` (a check across fields: its ValueError's text
    is the message, as pydantic's ``model_validator`` gives it) and ``_dumped`` (the dict written out)."""

    __slots__ = ()
    model_fields: ClassVar[dict[str, Field]] = {}
    frozen: ClassVar[bool] = True

    def __init__(self, **values: Any):
        name = type(self).__name__
        for field, spec in self.model_fields.items():
            given = values.get(field, _MISSING)
            if given is _MISSING:
                if spec.is_required():
                    raise ModelError(
                        name, [{"type": "missing", "loc": (field,), "msg": "Field required", "input": values}]
                    )
                object.__setattr__(self, field, spec.get_default())
                continue
            try:
                value = _convert(spec.annotation, given)
                if value is not None and spec.ge is not None and value < spec.ge:
                    raise _Bad("greater_than_equal", f"Input should be greater than or equal to {spec.ge}", given)
                if value is not None and spec.le is not None and value > spec.le:
                    raise _Bad("less_than_equal", f"Input should be less than or equal to {spec.le}", given)
            except _Bad as bad:
                raise ModelError(name, [{**bad.record, "loc": (field, *bad.record["loc"])}]) from None
            object.__setattr__(self, field, value)
        extra = [k for k in values if k not in self.model_fields]
        if extra:
            first = extra[0]
            raise ModelError(
                name,
                [
                    {
                        "type": "extra_forbidden",
                        "loc": (first,),
                        "msg": "Extra inputs are not permitted",
                        "input": values[first],
                    }
                ],
            )
        try:
            self._check()
        except ValueError as exc:
            raise ModelError(
                name, [{"type": "value_error", "loc": (), "msg": f"Value error, {exc}", "input": values}]
            ) from None

    def _check(self) -> None:
        """A check across fields (none by default); raise ValueError with the message."""

    # ---- pydantic's methods, as barsym calls them ------------------------------------------------------------
    @classmethod
    def model_validate(cls, obj: Any):
        """``obj`` (a record of this type, kept as it is, or a mapping of its fields) as a record."""
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
            return cls(**obj)
        raise ModelError(
            cls.__name__,
            [
                {
                    "type": "model_type",
                    "loc": (),
                    "msg": f"Input should be a valid dictionary or instance of {cls.__name__}",
                    "input": obj,
                }
            ],
        )

    def model_copy(self, update: dict | None = None):
        """A copy with ``update``'s fields replaced, unchecked (as pydantic's ``model_copy``)."""
        copy = object.__new__(type(self))
        for field in self.model_fields:
            object.__setattr__(copy, field, (update or {}).get(field, getattr(self, field)))
        return copy

    def model_dump(self, mode: str = "python", include=None, exclude=None, exclude_none: bool = False) -> dict:
        out = {}
        for field in self.model_fields:
            if (include is not None and field not in include) or (exclude is not None and field in exclude):
                continue
            value = _dump(getattr(self, field), mode)
            if not (exclude_none and value is None):
                out[field] = value
        return self._dumped(out)

    def _dumped(self, data: dict) -> dict:
        return data

    # ---- a value ------------------------------------------------------------------------------------------------
    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.model_fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        if not self.frozen:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash((type(self), self._values()))

    def __setattr__(self, name: str, value: Any) -> None:
        if self.frozen:
            raise ModelError(
                type(self).__name__,
                [{"type": "frozen_instance", "loc": (name,), "msg": "Instance is frozen", "input": value}],
            )
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__repr_fields__(', ')})"

    def __str__(self) -> str:
        return self.__repr_fields__(" ")

    def __repr_fields__(self, sep: str) -> str:
        return sep.join(f"{f}={getattr(self, f)!r}" for f in self.model_fields)

    def __reduce__(self):
        return _restore, (type(self), self._values())

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """The record as a pydantic field: checked by the pydantic model with the same fields and check (so a
        bad nested value reads as it did when this was a pydantic model), kept as this record, dumped by
        :meth:`model_dump`. Called only where a pydantic model holds one, with pydantic loaded anyway."""
        from pydantic import ConfigDict, PlainSerializer, WrapValidator, create_model, model_validator
        from pydantic import Field as PydanticField

        fields = {
            name: (spec.annotation, PydanticField(... if spec.is_required() else spec.default, ge=spec.ge, le=spec.le))
            for name, spec in cls.model_fields.items()
        }

        def check(model):
            cls._check(model)  # reads the same attributes
            return model

        shape = create_model(  # type: ignore[call-overload]
            cls.__name__,
            __config__=ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True),
            __validators__={"_check": model_validator(mode="after")(check)},
            **fields,
        )

        def to_record(value, validate):
            if isinstance(value, cls):
                return value
            checked = validate(value)
            return _restore(cls, tuple(getattr(checked, f) for f in cls.model_fields))

        def dumped(value, info):
            return value.model_dump(mode=info.mode)

        return handler.generate_schema(Annotated[shape, WrapValidator(to_record), PlainSerializer(dumped)])


def _restore(cls: type[PlainModel], values: tuple) -> PlainModel:
    """A record from its field values, unchecked (a copy, an unpickled record, one pydantic has checked)."""
    record = object.__new__(cls)
    for field, value in zip(cls.model_fields, values):
        object.__setattr__(record, field, value)
    return record


def _dump(value: Any, mode: str) -> Any:
    if isinstance(value, PlainModel):
        return value.model_dump(mode=mode)
    if isinstance(value, (tuple, list)):
        items = [_dump(v, mode) for v in value]
        return items if mode == "json" or isinstance(value, list) else tuple(items)
    if mode == "json":
        if isinstance(value, enum.Enum):
            return value.value
        if isinstance(value, Path):
            return str(value)
    return value
