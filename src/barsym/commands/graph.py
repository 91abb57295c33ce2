"""``barsym graph ITEM [--format dot|mermaid]``: the sub-graph an item depends on.

Exit status 0 when the overworld can provide the item, 1 when it cannot (the
graph is still written, with the reason on stderr, as ``plan`` gives one), 2
for unusable input.
"""

from __future__ import annotations

import argparse
import sys

from ..graph import CraftGraph
from ..graph_export import to_dot, to_mermaid
from .common import add_format, add_output, check_writable, kb_from_args, write_output

HELP = "write the crafting sub-graph an item depends on"
DESCRIPTION = "Write the items, actions, tools, stations and layers an item depends on."


def add_arguments(p) -> None:
    p.add_argument("item", help="item name, e.g. diamond_pickaxe (aliases such as 'boat' work)")
    add_format(p, "dot|mermaid", "output format (default dot)")
    p.add_argument("--full", action="store_true", help="keep every alternative (all wood types, all fuels)")
    add_output(p)


def run(args: argparse.Namespace) -> int:
    check_writable(args.output, "-o")
    kb = kb_from_args(args)
    item = kb.resolve(args.item)
    graph = CraftGraph(kb)
    reach = graph.reachability(item)
    sub = graph.dependency_subgraph(item, full=args.full)
    text = to_dot(sub, item) if args.format == "dot" else to_mermaid(sub)
    write_output(args.output, text)
    print(f"{reach.reason}; {len(sub)} nodes, {sub.number_of_edges()} edges", file=sys.stderr)
    return 0 if reach.reachable else 1  # like plan: the graph is written, and the status says it cannot be had
