"""Where a plan starts and which rules it plays by: options shared by plan, validate and eval.

``--start ITEM=N`` (repeatable), ``--inventory FILE.json`` and ``--layer N`` describe the start
state, read and checked by :func:`barsym.start_state.start_state`; ``--rules NAME`` picks a rule
profile from the knowledge base (``survival``, ``crafting``). Every bad value is one line and exit
status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..kb import KnowledgeBase, Rules
from ..sim import State
from ..start_state import INVENTORY_HELP, StartError, start_state
from .common import UsageError


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


def start_from_args(kb: KnowledgeBase, args: argparse.Namespace) -> State:
    """The start state the options describe (empty inventory on the surface by default)."""
    try:
        return start_state(
            kb, getattr(args, "inventory", None), getattr(args, "start", []), getattr(args, "layer", None)
        )
    except StartError as exc:
        raise UsageError(str(exc)) from None
