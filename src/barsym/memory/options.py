"""Where the stage memory is and whether a run records into it, as one model (``--memory``, ``--record``,
``--no-memory`` are generated from it). What ``memory build`` plans and what ``memory prune`` deletes are
:mod:`.run_options`' (pydantic models: this one is a plain record, so ``barsym plan`` loads no pydantic).

The file is ``memory``, else ``$BARSYM_MEMORY`` (one memory for every run), and ``no_memory`` ignores
the variable for one run. Without ``record`` the file is opened read-only: a memory that is only
consulted is never created, migrated or touched.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..plain_models import Field, PlainModel

ENV_VAR = "BARSYM_MEMORY"


class MemoryOptions(PlainModel):
    __slots__ = ("memory", "record", "no_memory")
    frozen = False
    model_fields = {
        "memory": Field(
            Path | None,
            None,
            description=f"answer goals from this stage memory first (default ${ENV_VAR} if set)",
            json_schema_extra={"metavar": "PATH"},
        ),
        "record": Field(bool, False, description="also record into the memory: each plan's decompositions"),
        "no_memory": Field(bool, False, description=f"ignore ${ENV_VAR} for this run"),
    }
    memory: Path | None
    record: bool
    no_memory: bool

    def _check(self) -> None:
        if self.no_memory and (self.memory is not None or self.record):
            raise ValueError("--no-memory cannot be combined with --memory or --record")
        if self.record and self.path is None:
            raise ValueError(f"--record needs --memory PATH (or ${ENV_VAR})")

    def open(self):
        """The :class:`~barsym.memory.store.MemoryStore` these options name, read-only unless ``record``; None
        for no memory. A file that cannot be used is a one-line :class:`~barsym.memory.store.MemoryFileError`."""
        if self.path is None:
            return None  # without loading the store's modules: planning without a memory starts lighter
        from .store import MemoryStore

        return MemoryStore(self.path, readonly=not self.record)

    @property
    def path(self) -> Path | None:
        """The memory file these options (or the environment) name, or None for no memory."""
        if self.no_memory:
            return None
        env = os.environ.get(ENV_VAR, "").strip()
        return self.memory if self.memory is not None else Path(env) if env else None
