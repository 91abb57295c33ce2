"""The task sets barsym ships, by name: ``bar``, ``deps`` and ``plancraft-train``.

A user who installs barsym should be able to run ``barsym eval --dataset bar``
without finding BAR's release first; so the three task sets barsym is measured
on travel inside the package, each in its own folder with its licence and a
``SOURCE.md`` saying where it came from and what was changed. This module only
names them and finds their files; :func:`barsym.eval.load_dataset` reads them
(a bundled name or any path). It imports nothing from barsym, so every layer
may use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BUNDLED", "BundledDataset", "bundled", "names"]

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class BundledDataset:
    """One task set in the package: where its files are, and what may be said about them."""

    name: str
    folder: str  # under barsym/datasets/
    entry: str  # the file or folder load_dataset reads, relative to ``folder`` ("." for the folder)
    description: str
    source: str
    licence: str
    dialect: str | None = None  # the name dialect its object names are written in
    minecraft: str = "1.16.5"  # the Minecraft Java version its tasks (and expert plans) are written for

    @property
    def home(self) -> Path:
        return HERE / self.folder

    @property
    def path(self) -> Path:
        """What :func:`barsym.eval.load_dataset` reads: BAR's folder layout or a task-list file."""
        return (self.home / self.entry).resolve()

    @property
    def licence_file(self) -> Path | None:
        found = self.home / "LICENSE"
        return found if found.is_file() else None

    @property
    def source_note(self) -> Path:
        return self.home / "SOURCE.md"

    def count(self) -> int:
        """How many tasks the set has, from its index alone (no knowledge base needed)."""
        if self.path.is_dir():
            groups = json.loads((self.path / "tasks.json").read_text(encoding="utf-8"))
            return sum(len(tasks) for tasks in groups.values())
        return len(json.loads(self.path.read_text(encoding="utf-8")))

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "tasks": self.count(),
            "description": self.description,
            "source": self.source,
            "licence": self.licence,
            "dialect": self.dialect,
            "minecraft": self.minecraft,
            "folder": str(self.home),
            "path": str(self.path),
            "licence_file": str(self.licence_file) if self.licence_file else None,
            "source_note": str(self.source_note),
        }

    def to_text(self) -> str:
        """The listing ``barsym datasets`` prints: name and size, what it is, where from, its licence and files."""
        dialect = f"; object names in the {self.dialect} dialect" if self.dialect else ""
        return (
            f"{self.name} ({self.count()} tasks, Minecraft {self.minecraft}): {self.description}{dialect}\n"
            f"  source:  {self.source}\n"
            f"  licence: {self.licence}\n  files:   {self.home} (the data, SOURCE.md, LICENSE if any)\n"
        )


BUNDLED: dict[str, BundledDataset] = {
    d.name: d
    for d in (
        BundledDataset(
            "bar",
            "bar",
            ".",
            "BAR's tech-tree tasks with expert plans (groups stone, iron, gold, diamond, redstone)",
            "github.com/SCUNLP/BAR, commit b57144b",
            "Apache-2.0",
        ),
        BundledDataset(
            "deps",
            "deps",
            "tasks.json",
            "DEPS' task list, meta-task groups MT1-MT8 (no reference plans)",
            "github.com/CraftJarvis/MC-Planner data/task_info.json, commit 2a8b5a3",
            "none stated by the release (task names and groups only; see SOURCE.md)",
            dialect="deps",
        ),
        BundledDataset(
            "plancraft-train",
            "plancraft_train",
            "train.json",
            "Plancraft's train split: crafting from a given inventory, 200 tasks impossible",
            "PyPI plancraft 0.4.9 (Dagan, Keller, Lascarides 2024)",
            "MIT",
        ),
    )
}


def names() -> list[str]:
    return list(BUNDLED)


def bundled(name: str) -> BundledDataset | None:
    """The bundled task set called ``name``, or None if barsym ships none by that name."""
    return BUNDLED.get(name)
