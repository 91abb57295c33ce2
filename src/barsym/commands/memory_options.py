"""``--memory PATH``, ``--record`` and ``--no-memory`` (:class:`~barsym.memory.options.MemoryOptions`) for
``plan``, ``eval`` and ``execute``.

With ``--record`` the memory must be writable *before* any planning starts, so a read-only file, a
folder or a path through a file is one line and exit status 2 up front, never a traceback after
minutes of planning.
"""

from __future__ import annotations

import argparse

from ..memory import MemoryFileError, MemoryStore
from ..memory.options import MemoryOptions
from .common import UsageError
from .options import add_model, read_model


def add_memory_arguments(parser: argparse.ArgumentParser, **helps: str) -> None:
    """The memory options; ``helps`` where a command's differ from the model's (``execute`` only records)."""
    add_model(parser, MemoryOptions, "stage memory (BAR module c)", helps=helps)


def open_memory(args: argparse.Namespace) -> MemoryStore | None:
    """The store, opened read-only unless ``--record``; UsageError with one line for any unusable file."""
    options = read_model(args, MemoryOptions)
    if options.path is None:
        return None
    try:
        return MemoryStore(options.path, readonly=not options.record)
    except MemoryFileError as exc:
        raise UsageError(str(exc)) from None
