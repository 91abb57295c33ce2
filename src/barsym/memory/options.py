"""Where the stage memory is and whether a run records into it, as one model (``--memory``, ``--record``,
``--no-memory`` are generated from it).

The file is ``memory``, else ``$BARSYM_MEMORY`` (one memory for every run), and ``no_memory`` ignores
the variable for one run. Without ``record`` the file is opened read-only: a memory that is only
consulted is never created, migrated or touched.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

ENV_VAR = "BARSYM_MEMORY"


class MemoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory: Path | None = Field(
        None,
        description=f"answer goals from this stage memory first (default ${ENV_VAR} if set)",
        json_schema_extra={"metavar": "PATH"},
    )
    record: bool = Field(False, description="also record into the memory: each plan's decompositions")
    no_memory: bool = Field(False, description=f"ignore ${ENV_VAR} for this run")

    @model_validator(mode="after")
    def _consistent(self) -> "MemoryOptions":
        if self.no_memory and (self.memory is not None or self.record):
            raise ValueError("--no-memory cannot be combined with --memory or --record")
        if self.record and self.path is None:
            raise ValueError(f"--record needs --memory PATH (or ${ENV_VAR})")
        return self

    def open(self):
        """The :class:`~barsym.memory.store.MemoryStore` these options name, read-only unless ``record``; None
        for no memory. A file that cannot be used is a one-line :class:`~barsym.memory.store.MemoryFileError`."""
        from .store import MemoryStore

        return None if self.path is None else MemoryStore(self.path, readonly=not self.record)

    @property
    def path(self) -> Path | None:
        """The memory file these options (or the environment) name, or None for no memory."""
        if self.no_memory:
            return None
        env = os.environ.get(ENV_VAR, "").strip()
        return self.memory if self.memory is not None else Path(env) if env else None
