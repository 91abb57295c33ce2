"""Where a plan starts and which rules it plays by: options shared by plan, validate, execute, score, repair.

``--start ITEM=N`` (repeatable), ``--inventory FILE.json`` and ``--layer N`` describe the start
state and ``--rules NAME`` picks a rule profile (``survival``, ``crafting``): the fields of
:class:`barsym.start_state.StartOptions`, read and checked there. Every bad value is one line and
exit status 2.
"""

from __future__ import annotations

import argparse

from ..kb import KnowledgeBase, Rules
from ..sim import State
from ..start_state import StartError, StartOptions
from .common import UsageError
from .options import add_model, read_model


def add_state_arguments(parser: argparse.ArgumentParser) -> None:
    add_model(parser, StartOptions, "start state and rules")


def rules_from_args(kb: KnowledgeBase, args: argparse.Namespace, default: str | None = None) -> Rules:
    return Rules(kb, getattr(args, "rules", None) or default)  # an unknown profile: one line (barsym.cli)


def start_from_args(kb: KnowledgeBase, args: argparse.Namespace) -> State:
    """The start state the options describe (empty inventory on the surface by default)."""
    try:
        return read_model(args, StartOptions, skip=("rules",)).state(kb)
    except StartError as exc:
        raise UsageError(str(exc)) from None
