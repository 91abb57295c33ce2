"""Options that pick an execution world and how often to run: shared by ``barsym execute`` and ``barsym eval``.

Every bad value (``--runs 0``, ``--runs -3``, ``--runs x``, an absurd
``--budget``, an unknown ``--world``) is one line and exit status 2, raised
here as :class:`UsageError` before any run starts. Values are read as text and
checked here rather than by argparse, whose errors print the usage too.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..bar_io import shown
from ..kb import KnowledgeBase, Rules
from ..sim.stochastic import StochasticWorld
from ..sim.world import SEED_MASK, DeterministicWorld, World
from .common import UsageError, number_option

WORLDS = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}
MAX_RUNS = 100_000
#: BAR's longest episode limit is 16,000 ticks (13 min); a million (14 hours of game time) is far past any task
MAX_BUDGET = 1_000_000
DEFAULT_RUNS = {"deterministic": 1, "stochastic": 100}


@dataclass(frozen=True)
class WorldOptions:
    world: World
    runs: int
    seed: int
    budget: int | None  # None: the world's budget for each plan


def add_world_arguments(parser: argparse.ArgumentParser, seed_option: str = "--seed",
                        default_world: str | None = "stochastic") -> None:
    group = parser.add_argument_group("execution world")
    default = f" (default {default_world})" if default_world else " (default: no execution)"
    group.add_argument("--world", metavar="NAME", default=default_world,
                       help=f"deterministic (the simulator: valid plans always work) or stochastic (break times, "
                            f"tool wear, search times, controller failures, an episode budget){default}")
    group.add_argument("--runs", metavar="N",
                       help="episodes per plan (default 100 in the stochastic world, 1 in the deterministic one)")
    group.add_argument(seed_option, dest="world_seed", default="0", metavar="S",
                       help="seed of the runs: the same seed gives the same results in any process (default 0)")
    group.add_argument("--budget", metavar="TICKS",
                       help="episode budget in ticks (20 per second) for every plan (default: the world's budget "
                            "for the deepest layer the plan works on; the deterministic world has none)")
    parser.set_defaults(world_seed_option=seed_option)  # so that messages name the option as the user typed it


def world_from_args(kb: KnowledgeBase, rules: Rules, args: argparse.Namespace) -> WorldOptions | None:
    """The world and run settings the options name; None when no world was asked for."""
    name = args.world
    if name is None:
        for option in ("runs", "budget"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option} needs --world deterministic or --world stochastic")
        return None
    if name not in WORLDS:
        raise UsageError(f"--world must be one of {', '.join(WORLDS)}, got {shown(name)}")
    runs = number_option(args.runs, "--runs", int, 1, MAX_RUNS)
    seed = number_option(args.world_seed, args.world_seed_option, int, 0, SEED_MASK)
    budget = number_option(args.budget, "--budget", int, 1, MAX_BUDGET)
    return WorldOptions(WORLDS[name](kb, rules), DEFAULT_RUNS[name] if runs is None else runs, seed, budget)

