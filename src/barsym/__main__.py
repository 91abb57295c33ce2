"""``python -m barsym``: the same command line as ``barsym``, for environments without the script on PATH."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
