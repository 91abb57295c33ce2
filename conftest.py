"""Fixtures shared by tests/ and property_tests/: the knowledge base and a validator."""

from __future__ import annotations

import pytest

from barsym.kb import load_kb
from barsym.validation import Validator
from testdata import BAR_DIR, EXPERT_FILES


def pytest_collection_modifyitems(config, items):
    if not EXPERT_FILES:
        raise pytest.UsageError(f"BAR's expert plans are missing from the package ({BAR_DIR}); reinstall barsym")


@pytest.fixture(scope="session")
def kb():
    return load_kb()


@pytest.fixture(scope="session")
def validator(kb):
    return Validator(kb)


@pytest.fixture(scope="session")
def bar_tasks(kb):
    """BAR's 53 tasks with their expert plans, from the packaged copy."""
    from barsym.eval import load_dataset
    from barsym.eval.dataset import resolve_dataset

    path, dialect = resolve_dataset("bar")
    return load_dataset(path, kb, dialect)
