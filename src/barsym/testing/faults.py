"""The fault classes of BAR's module (b), for users' tests (defined in :mod:`barsym.consistency.faults`)."""

from __future__ import annotations

from ..consistency.faults import InjectedFault, moved_before_needs, repair_faults

__all__ = ["InjectedFault", "moved_before_needs", "repair_faults"]
