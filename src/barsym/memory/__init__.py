"""BAR module (c): stage memory of goal decompositions with the execution success of their plans."""

from .decomposer import DEFAULT_MIN_RUNS, DEFAULT_THRESHOLD, MEMORY, MemoryDecomposer, MemoryPlanner, with_memory
from .recorder import TaskRecorder, record, records
from .store import MemoryFileError, MemoryLockedError, MemoryStore, default_path

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
