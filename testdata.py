"""Where the tests find BAR's expert plans and the DEPS task list.

The project's shared datasets folder sits next to the repository (as on CI);
set BARSYM_DATASETS to point elsewhere. Test code only: barsym never reads it.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent
DATASETS = Path(os.environ.get("BARSYM_DATASETS", REPO.parent / "shared" / "datasets"))
BAR_DIR = DATASETS / "bar_tech_tree"
EXPERT_FILES = sorted(BAR_DIR.glob("*/*.jsonl"))
