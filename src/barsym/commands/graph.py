"""``barsym graph ITEM [--format dot|mermaid]``: the sub-graph an item depends on.

Exit status 0 when the overworld can provide the item, 1 when it cannot (the
graph is still written, with the reason on stderr, as ``plan`` gives one), 2
for unusable input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..graph import CraftGraph
from ..graph_export import to_dot, to_mermaid
from ..kb import UnknownItemError
from .common import UsageError, check_writable, fail, kb_from_args


def add_parser(sub) -> None:
    p = sub.add_parser("graph", help="write the crafting sub-graph an item depends on",
                       description="Write the items, actions, tools, stations and layers an item depends on.")
    p.add_argument("item", help="item name, e.g. diamond_pickaxe (aliases such as 'boat' work)")
    p.add_argument("--format", choices=["dot", "mermaid"], default="dot", help="output format (default dot)")
    p.add_argument("--full", action="store_true", help="keep every alternative (all wood types, all fuels)")
    p.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        check_writable(args.output, "-o")
        kb = kb_from_args(args)
        item = kb.resolve(args.item)
    except UnknownItemError as exc:
        return fail(str(exc))
    except UsageError as exc:
        return fail(str(exc))
    graph = CraftGraph(kb)
    reach = graph.reachability(item)
    sub = graph.dependency_subgraph(item, full=args.full)
    text = to_dot(sub, item) if args.format == "dot" else to_mermaid(sub)
    if args.output:
        try:
            args.output.write_text(text)
        except OSError as exc:
            return fail(f"cannot write {args.output}: {exc.strerror}")
    else:
        sys.stdout.write(text)
    print(f"{reach.reason}; {sub.number_of_nodes()} nodes, {sub.number_of_edges()} edges", file=sys.stderr)
    return 0 if reach.reachable else 1  # like plan: the graph is written, and the status says it cannot be had
