"""``barsym datasets [--format text|json]``: the task sets barsym ships, by name.

Each is usable as ``barsym eval --dataset NAME``; the listing says how many
tasks it has, where it came from and under which licence, and where its files
(data, LICENSE, SOURCE.md) are installed, so a user can read them. Exit 0.
"""

from __future__ import annotations

import argparse
import json

from ..datasets import BUNDLED


def add_parser(sub) -> None:
    p = sub.add_parser(
        "datasets",
        help="list the bundled task sets (for eval --dataset NAME)",
        description="The task sets barsym ships, with task counts, source and licence.",
    )
    p.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text: one block per task set (default); json: a list of records",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    records = [d.to_dict() for d in BUNDLED.values()]
    if args.format == "json":
        print(json.dumps(records, indent=2))
        return 0
    for r in records:
        dialect = f"; object names in the {r['dialect']} dialect" if r["dialect"] else ""
        print(f"{r['name']} ({r['tasks']} tasks): {r['description']}{dialect}")
        print(f"  source:  {r['source']}")
        print(f"  licence: {r['licence']}")
        print(f"  files:   {r['folder']} (the data, SOURCE.md, LICENSE if any)")
    print("use one with: barsym eval --dataset NAME")
    return 0
