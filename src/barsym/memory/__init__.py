"""BAR module (c): stage memory of goal decompositions with the execution success of their plans."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from .decomposer import DEFAULT_MIN_RUNS, DEFAULT_THRESHOLD, MEMORY, MemoryDecomposer, MemoryPlanner, with_memory
    from .recorder import TaskRecorder, record, records
    from .store import MemoryFileError, MemoryLockedError, MemoryStore, default_path

#: loaded on first use, so that reading the options (memory.options) and planning without a memory file
#: does not open the store's modules (the models of a remembered plan are ``shapes``, not ``records``:
#: a submodule of that name would take the package attribute from the recorder's function)
_LAZY = {
    "DEFAULT_MIN_RUNS": "decomposer",
    "DEFAULT_THRESHOLD": "decomposer",
    "MEMORY": "decomposer",
    "MemoryDecomposer": "decomposer",
    "MemoryPlanner": "decomposer",
    "with_memory": "decomposer",
    "TaskRecorder": "recorder",
    "record": "recorder",
    "records": "recorder",
    "MemoryFileError": "store",
    "MemoryLockedError": "store",
    "MemoryStore": "store",
    "default_path": "store",
}

__all__ = [
    "DEFAULT_MIN_RUNS",
    "DEFAULT_THRESHOLD",
    "MEMORY",
    "MemoryDecomposer",
    "MemoryFileError",
    "MemoryLockedError",
    "MemoryPlanner",
    "MemoryStore",
    "TaskRecorder",
    "default_path",
    "record",
    "records",
    "with_memory",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
