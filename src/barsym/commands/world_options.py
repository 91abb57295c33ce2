"""``--world``, ``--runs``, ``--world-seed`` and ``--budget``: the execution world of ``execute`` and ``eval``.

The options are :class:`~barsym.sim.options.ExecutionOptions`' fields; every bad value (``--runs 0``,
``--runs x``, an absurd ``--budget``, an unknown ``--world``) is one line and exit status 2 before
any run starts.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..kb import KnowledgeBase, Rules
from ..sim.options import MAX_RUNS, WORLDS, ExecutionOptions
from ..sim.world import World
from .common import UsageError
from .options import add_model, read_model

__all__ = ["MAX_RUNS", "WORLDS", "WorldOptions", "add_world_arguments", "world_from_args"]


@dataclass(frozen=True)
class WorldOptions:
    world: World
    runs: int
    seed: int
    budget: int | None  # None: the world's budget for each plan


def add_world_arguments(parser: argparse.ArgumentParser, default_world: str | None = "stochastic",
                        old_seed: bool = False) -> None:
    """``old_seed``: ``--seed`` was this command's world seed, and still is for a release."""
    add_model(parser, ExecutionOptions, "execution world", defaults={"world": default_world or "no execution"},
              deprecated={"--seed": "world_seed"} if old_seed else None)
    parser.set_defaults(default_world=default_world)


def world_from_args(kb: KnowledgeBase, rules: Rules, args: argparse.Namespace) -> WorldOptions | None:
    """The world and run settings the options name; None when no world was asked for."""
    options = read_model(args, ExecutionOptions, world=args.default_world)
    if options.world is None:
        for name in ("runs", "budget"):
            if name in options.model_fields_set:
                raise UsageError(f"--{name} needs --world deterministic or --world stochastic")
        return None
    return WorldOptions(WORLDS[options.world](kb, rules), options.episodes, options.world_seed, options.budget)
