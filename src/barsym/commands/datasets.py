"""``barsym datasets [--format text|json]``: the task sets barsym ships, by name.

Each is usable as ``barsym eval --dataset NAME``; the listing says how many
tasks it has, where it came from and under which licence, and where its files
(data, LICENSE, SOURCE.md) are installed, so a user can read them. Exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..datasets import BUNDLED
from .common import add_format

HELP = "list the bundled task sets (for eval --dataset NAME)"
DESCRIPTION = "The task sets barsym ships, with task counts, source and licence."


def add_arguments(p) -> None:
    add_format(p, "text|json", "text: one block per task set (default); json: a list of records")


def run(args: argparse.Namespace) -> int:
    if args.format == "json":
        print(json.dumps([d.to_dict() for d in BUNDLED.values()], indent=2))
        return 0
    sys.stdout.write("".join(d.to_text() for d in BUNDLED.values()))
    print("use one with: barsym eval --dataset NAME")
    return 0
