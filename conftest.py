"""Fixtures shared by tests/ and property_tests/: the knowledge base and a validator."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from barsym.kb import load_kb
from barsym.validation import Validator
from testdata import BAR_DIR, EXPERT_FILES

#: ``HYPOTHESIS_PROFILE=ci`` (set by .ci/run): the property tests draw the same examples on every run, so a
#: clean clone's CI passes or fails with the code, not with the draw. The README's test command alone keeps
#: Hypothesis' random draws, which is how the known bugs pinned in property_tests/ were found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])


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
