"""Where the stage memory is and whether a run records into it, as one model (``--memory``, ``--record``,
``--no-memory`` are generated from it); what ``memory build`` plans and what ``memory prune`` deletes.

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


class BuildOptions(BaseModel):
    """``barsym memory build``: which tasks are planned, by which planner (the world is ExecutionOptions')."""

    model_config = ConfigDict(extra="forbid")

    dataset: Path = Field(description="the tasks to plan", json_schema_extra={"metavar": "PATH"})
    planner: str = Field("symbolic", description="planner", json_schema_extra={"metavar": "NAME"})
    limit: int | None = Field(None, ge=1, description="only the first N tasks", json_schema_extra={"metavar": "N"})


class PruneOptions(BaseModel):
    """``barsym memory prune``: which plans are too unreliable to keep (:meth:`MemoryStore.prune`)."""

    model_config = ConfigDict(extra="forbid")

    min_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="delete plans below this success rate",
        json_schema_extra={"metavar": "R"},
    )
    min_runs: int = Field(5, ge=0, description="... over at least this many runs", json_schema_extra={"metavar": "N"})
