"""What ``barsym memory build`` plans and what ``barsym memory prune`` deletes, as pydantic models (the
command line is made from them). Apart from :mod:`.options` (the ``--memory`` options of ``plan``, a plain
record) so that a plan does not load pydantic for them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


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
