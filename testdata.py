"""Where the tests find their data: the task sets barsym ships, and the little that does not ship.

BAR's expert plans, DEPS' task list and Plancraft's train split are package
data (:mod:`barsym.datasets`), so the tests read the copies a user gets. Only
data that barsym does not ship stays in the project's shared datasets folder
next to the repository (as on CI; set BARSYM_DATASETS to point elsewhere):
ArticData's raw files (the source of data/recipes, read by the converter's
test) and Plancraft's recipe list (read by the recipe-fidelity test). Tests
that need those skip, saying why, when the folder is not there.
"""

from __future__ import annotations

import os
from pathlib import Path

from barsym.datasets import BUNDLED

REPO = Path(__file__).resolve().parent
#: data that does not ship with barsym (ArticData's raw files, Plancraft's recipes)
DATASETS = Path(os.environ.get("BARSYM_DATASETS", REPO.parent / "shared" / "datasets"))
BAR_DIR = BUNDLED["bar"].path
DEPS_FILE = BUNDLED["deps"].path
PLANCRAFT_TRAIN = BUNDLED["plancraft-train"].path
EXPERT_FILES = sorted(BAR_DIR.glob("*/*.jsonl"))
