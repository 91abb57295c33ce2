"""Helpers shared by the sub-commands: loading the knowledge base with clean errors."""

from __future__ import annotations

import sys

from ..kb import DataFileError, KnowledgeBase, VersionNotSupportedError, load_kb


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def kb_from_args(args) -> KnowledgeBase:
    try:
        return load_kb(getattr(args, "mc_version", "1.16.5"))
    except (DataFileError, VersionNotSupportedError) as exc:
        raise UsageError(str(exc)) from None


def fail(message: str) -> int:
    print(f"barsym: error: {message}", file=sys.stderr)
    return 2
