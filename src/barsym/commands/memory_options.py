"""``--memory PATH``, ``--record`` and ``--no-memory``: the stage memory options of ``plan``, ``eval`` and ``execute``.

Why one module: the three commands must agree on where the memory is and on
what bad input looks like. The file is ``--memory PATH``, else
``$BARSYM_MEMORY`` (so a user can keep one memory for every run), and
``--no-memory`` ignores the variable for one run. Without ``--record`` the
file is opened read-only: a memory that is only consulted is never created,
migrated or touched. With ``--record`` it must be writable *before* any
planning starts, so a read-only file, a folder or a path through a file is one
line and exit status 2 up front, never a traceback after minutes of planning.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..memory import MemoryFileError, MemoryStore
from .common import UsageError

ENV_VAR = "BARSYM_MEMORY"


def add_memory_arguments(parser: argparse.ArgumentParser, reads: bool = True) -> None:
    """The memory options; ``reads=False`` for ``execute``, which only records (it plans nothing)."""
    group = parser.add_argument_group("stage memory (BAR module c)")
    what = "answer goals from this stage memory first" if reads else "the stage memory to record into"
    group.add_argument("--memory", type=Path, metavar="PATH", help=f"{what} (default ${ENV_VAR} if set)")
    group.add_argument("--record", action="store_true",
                       help="also record into the memory: " + ("each plan's decompositions (and with --world, "
                                                               "its executions)" if reads else
                                                               "each plan's executions, for the plan in memory "
                                                               "with the same steps"))
    group.add_argument("--no-memory", action="store_true", help=f"ignore ${ENV_VAR} for this run")


def memory_path(args: argparse.Namespace) -> Path | None:
    """The memory file the options (or the environment) name, or None for no memory."""
    if args.no_memory:
        if args.memory is not None or args.record:
            raise UsageError("--no-memory cannot be combined with --memory or --record")
        return None
    if args.memory is not None:
        return args.memory
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env)
    if args.record:
        raise UsageError(f"--record needs --memory PATH (or ${ENV_VAR})")
    return None


def open_memory(args: argparse.Namespace) -> MemoryStore | None:
    """The store, opened read-only unless ``--record``; UsageError with one line for any unusable file."""
    path = memory_path(args)
    if path is None:
        return None
    try:
        return MemoryStore(path, readonly=not args.record)
    except MemoryFileError as exc:
        raise UsageError(str(exc)) from None
