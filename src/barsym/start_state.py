"""Where a plan starts, read from what a user wrote: ``ITEM=N`` entries, an inventory file, a layer.

``barsym plan``, ``validate``, ``execute``, ``score``, ``repair`` and ``parse`` take the same start
(``--start``, ``--inventory``, ``--layer``), so it is read and checked here once, against the
knowledge base: item names resolved (with a suggestion), counts from 0 to ``MAX_COUNT``, the layer
one the world has. Every bad value is a :class:`StartError` whose text is the one line to show.
:class:`StartOptions` is those options (and ``--rules``) as typed; the command line is made from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .bar_io import PlanFormatError, loads_json, read_input, shown
from .kb import KnowledgeBase, UnknownItemError
from .model import MAX_COUNT
from .plain_models import Field, PlainModel
from .sim import State

#: the JSON an inventory file may hold: {"oak_log": 3, ...} or {"inventory": {...}, "layer": N}
INVENTORY_HELP = 'JSON object of item counts, e.g. {"iron_ingot": 3}, or {"inventory": {...}, "layer": N}'


class StartError(ValueError):
    """A start state that cannot be: its message names the option or file and what it takes."""


def ascii_whole(text: str, digits: int | None = None) -> int | None:
    """``text`` as a whole number written in ASCII digits only (at most ``digits`` of them), else None.

    Why not ``isdigit()`` or ``int()`` alone: ``'²'.isdigit()`` is true and
    ``int('²')`` raises, while ``int('٣')`` reads an Arabic-Indic digit as 3;
    a number on barsym's command line is ``0-9`` and nothing else.
    """
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit() or (digits is not None and len(text) > digits):
        return None
    return int(text)


def _count(name: str, value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise StartError(
            f"{where}: the count of {shown(name)} must be a whole number from 0 to {MAX_COUNT}, got {shown(value)}"
        )
    return value


def read_inventory(path: Path) -> tuple[dict, object]:
    """The item counts of an inventory file and the layer it names (None when it names none)."""
    try:
        text = read_input(path).decode("utf-8")
    except OSError as exc:
        raise StartError(f"--inventory {path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise StartError(f"--inventory {path}: not UTF-8 text; expected {INVENTORY_HELP}") from None
    try:
        data = loads_json(text, f"--inventory {path}")
    except PlanFormatError as exc:
        raise StartError(str(exc)) from None
    if not isinstance(data, dict):
        raise StartError(f"--inventory {path}: expected {INVENTORY_HELP}")
    if "inventory" in data:
        extra = set(data) - {"inventory", "layer"}
        if extra or not isinstance(data["inventory"], dict):
            raise StartError(f"--inventory {path}: expected {INVENTORY_HELP}")
        return data["inventory"], data.get("layer")
    return data, None


def start_state(
    kb: KnowledgeBase, inventory: Path | None = None, entries: Iterable[str] = (), layer: object = None
) -> State:
    """The start an inventory file, ``ITEM=N`` entries and a layer describe (empty, on the surface, by default).

    The entries add to the file's counts; a ``layer`` given (text, as typed) wins over the file's.
    """
    counts: dict[str, int] = {}

    def add(name: object, count: int, where: str) -> None:
        if not isinstance(name, str):
            raise StartError(f"{where}: item names must be strings, got {shown(name)}")
        try:
            item = kb.resolve(name)
        except UnknownItemError as exc:
            raise StartError(f"{where}: {exc}") from None
        counts[item] = counts.get(item, 0) + count

    chosen: object = None
    if inventory is not None:
        items, chosen = read_inventory(inventory)
        for name, value in items.items():
            add(name, _count(name, value, f"--inventory {inventory}"), f"--inventory {inventory}")
    for entry in entries:
        name, sep, number = entry.partition("=")
        count = ascii_whole(number, 6) if sep else None
        if count is None or count > MAX_COUNT:
            raise StartError(
                f"--start {shown(entry)}: expected ITEM=N with N a whole number from 0 to {MAX_COUNT}, "
                "e.g. --start iron_ingot=3"
            )
        add(name, count, "--start")
    if isinstance(layer, str):
        chosen = ascii_whole(layer, 3)
        if chosen is None:
            raise StartError(f"--layer must be a whole number from 0 to {kb.deepest_layer}, got {shown(layer)}")
    elif layer is not None:
        chosen = layer
    chosen = 0 if chosen is None else chosen
    if isinstance(chosen, bool) or not isinstance(chosen, int) or not 0 <= chosen <= kb.deepest_layer:
        names = ", ".join(f"{n} {name}" for n, name in enumerate(kb.layers))
        raise StartError(f"the start layer must be one of {names}; got {shown(chosen)}")
    return State.start(counts, chosen)


class StartOptions(PlainModel):
    """Where a plan starts and which rules it plays by, as the user typed them (read by :meth:`state`)."""

    __slots__ = ("start", "inventory", "layer", "rules")
    frozen = False
    model_fields = {
        "start": Field(
            list[str],
            [],  # each record gets its own copy
            description="an item the agent holds at the start (repeatable), e.g. --start stone_pickaxe=1",
            json_schema_extra={"metavar": "ITEM=N"},
        ),
        "inventory": Field(
            Path | None,
            None,
            description=f"start inventory from a file: {INVENTORY_HELP}",
            json_schema_extra={"metavar": "FILE"},
        ),
        "layer": Field(
            str | None,
            None,
            description="the layer the agent starts on (0 = surface, the default)",
            json_schema_extra={"metavar": "N"},
        ),
        "rules": Field(
            str | None,
            None,
            description="rule profile: survival (BAR's world, default) or crafting (Plancraft's: nothing is "
            "mined, the 3x3 grid is at hand, smelting needs no furnace or fuel)",
            json_schema_extra={"metavar": "NAME"},
        ),
    }
    start: list[str]
    inventory: Path | None
    layer: str | None
    rules: str | None

    def state(self, kb: KnowledgeBase) -> State:
        return start_state(kb, self.inventory, self.start, self.layer)
