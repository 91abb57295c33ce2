"""Shared fixtures: the knowledge base, a validator, and BAR's expert plans.

The expert plans come from the project's shared datasets folder (next to the
repository, as on CI); set BARSYM_DATASETS to point elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from barsym.bar_io import read_plan
from barsym.kb import load_kb
from barsym.validate import Validator

REPO = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("BARSYM_DATASETS", REPO.parent / "shared" / "datasets"))
BAR_DIR = DATASETS / "bar_tech_tree"
EXPERT_FILES = sorted(BAR_DIR.glob("*/*.jsonl"))


def pytest_collection_modifyitems(config, items):
    if not EXPERT_FILES:
        raise pytest.UsageError(f"BAR expert plans not found under {BAR_DIR}; set BARSYM_DATASETS")


@pytest.fixture(scope="session")
def kb():
    return load_kb()


@pytest.fixture(scope="session")
def validator(kb):
    return Validator(kb)


@pytest.fixture(scope="session")
def expert_plans():
    return {path: read_plan(path) for path in EXPERT_FILES}
