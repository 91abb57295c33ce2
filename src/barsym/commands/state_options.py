"""Where a plan starts and which rules it plays by: options shared by plan, validate and eval.

``--start ITEM=N`` (repeatable), ``--inventory FILE.json`` and ``--layer N``
describe the start state; ``--rules NAME`` picks a rule profile from the
knowledge base (``survival``, ``crafting``). Every bad value is one line and
exit status 2, raised here as :class:`UsageError`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..bar_io import PlanFormatError, loads_json, read_input, shown
from ..kb import KnowledgeBase, Rules, UnknownItemError
from ..model import MAX_COUNT
from ..sim import State
from .common import UsageError

#: the JSON an --inventory file may hold: {"oak_log": 3, ...} or {"inventory": {...}, "layer": N}
INVENTORY_HELP = 'JSON object of item counts, e.g. {"iron_ingot": 3}, or {"inventory": {...}, "layer": N}'


def add_state_arguments(parser: argparse.ArgumentParser, rules: bool = True) -> None:
    group = parser.add_argument_group("start state and rules")
    group.add_argument(
        "--start",
        action="append",
        default=[],
        metavar="ITEM=N",
        help="an item the agent holds at the start (repeatable), e.g. --start stone_pickaxe=1",
    )
    group.add_argument("--inventory", type=Path, metavar="FILE", help=f"start inventory from a file: {INVENTORY_HELP}")
    group.add_argument("--layer", metavar="N", help="the layer the agent starts on (0 = surface, the default)")
    if rules:
        group.add_argument(
            "--rules",
            metavar="NAME",
            help="rule profile: survival (BAR's world, default) or crafting (Plancraft's: nothing is "
            "mined, the 3x3 grid is at hand, smelting needs no furnace or fuel)",
        )


def rules_from_args(kb: KnowledgeBase, args: argparse.Namespace, default: str | None = None) -> Rules:
    return Rules(kb, getattr(args, "rules", None) or default)  # an unknown profile: one line (barsym.cli)


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
        raise UsageError(
            f"{where}: the count of {shown(name)} must be a whole number from 0 to {MAX_COUNT}, got {shown(value)}"
        )
    return value


def _read_inventory(path: Path) -> tuple[dict, object]:
    try:
        text = read_input(path).decode("utf-8")
    except OSError as exc:
        raise UsageError(f"--inventory {path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"--inventory {path}: not UTF-8 text; expected {INVENTORY_HELP}") from None
    try:
        data = loads_json(text, f"--inventory {path}")
    except PlanFormatError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(data, dict):
        raise UsageError(f"--inventory {path}: expected {INVENTORY_HELP}")
    if "inventory" in data:
        extra = set(data) - {"inventory", "layer"}
        if extra or not isinstance(data["inventory"], dict):
            raise UsageError(f"--inventory {path}: expected {INVENTORY_HELP}")
        return data["inventory"], data.get("layer")
    return data, None


def start_from_args(kb: KnowledgeBase, args: argparse.Namespace) -> State:
    """The start state the options describe (empty inventory on the surface by default)."""
    inventory: dict[str, int] = {}
    layer: object = None

    def add(name: object, count: int, where: str) -> None:
        if not isinstance(name, str):
            raise UsageError(f"{where}: item names must be strings, got {shown(name)}")
        try:
            item = kb.resolve(name)
        except UnknownItemError as exc:
            raise UsageError(f"{where}: {exc}") from None
        inventory[item] = inventory.get(item, 0) + count

    if getattr(args, "inventory", None) is not None:
        items, layer = _read_inventory(args.inventory)
        for name, value in items.items():
            add(name, _count(name, value, f"--inventory {args.inventory}"), f"--inventory {args.inventory}")
    for entry in getattr(args, "start", []):
        name, sep, number = entry.partition("=")
        count = ascii_whole(number, 6) if sep else None
        count = -1 if count is None else count
        if not 0 <= count <= MAX_COUNT:
            raise UsageError(
                f"--start {shown(entry)}: expected ITEM=N with N a whole number from 0 to {MAX_COUNT}, "
                "e.g. --start iron_ingot=3"
            )
        add(name, count, "--start")
    if getattr(args, "layer", None) is not None:
        layer = args.layer.strip() if isinstance(args.layer, str) else args.layer
        if isinstance(layer, str):
            layer = ascii_whole(layer, 3)
            if layer is None:
                raise UsageError(
                    f"--layer must be a whole number from 0 to {kb.deepest_layer}, got {shown(args.layer)}"
                )
    if layer is None:
        layer = 0
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= kb.deepest_layer:
        names = ", ".join(f"{n} {name}" for n, name in enumerate(kb.layers))
        raise UsageError(f"the start layer must be one of {names}; got {shown(layer)}")
    return State.start(inventory, layer)
