"""A small real tmpfs for the full-disk tests (``mount`` needs root: CI runs as root; elsewhere they skip).

Both test files that fill a real disk (the atomic writes, the run file) mount one the same way.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    """An empty tmpfs of ``size`` (``"64k"``) at ``tmp_path/t``, unmounted after; skips where mount is refused."""
    folder = tmp_path / "t"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount is not permitted here ({done.stderr.decode().strip()[:80]}); CI runs as root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
