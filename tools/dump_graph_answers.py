"""Dump what the crafting graph answers for every item, under both rule profiles, to JSON.

    PYTHONPATH=src python tools/dump_graph_answers.py OUT.json

Why: a change to the graph's storage or queries must not change an answer. Run it on the base
commit and on the changed tree, then ``cmp`` the two files: identical means every item's producers,
cheapest producer, reachability sentence and each producer's requirements, every node's cost, the
reachable set, the tech depths and the DOT / Mermaid exports of a few items are the same.
"""

from __future__ import annotations

import json
import sys

from barsym.graph import CraftGraph
from barsym.graph_export import to_dot, to_mermaid
from barsym.kb import load_kb
from barsym.report.tech_depth import depths

EXPORTED = ("diamond_pickaxe", "piston", "stick", "iron_ingot", "golden_sword")


def answers(graph: CraftGraph, items: list[str]) -> dict:
    out: dict = {"costs": dict(graph.costs), "reachable": sorted(graph.reachable_nodes), "depths": depths(graph)}
    out["items"] = {
        item: {
            "producers": graph.producers(item),
            "best": graph.best_producer(item),
            "reachability": graph.reachability(item).reason,
            "requirements": {action: graph.requirements(action) for action in graph.producers(item)},
        }
        for item in items
    }
    for item in EXPORTED:
        out[f"dot {item}"] = to_dot(graph.dependency_subgraph(item), item)
        out[f"mermaid {item} full"] = to_mermaid(graph.dependency_subgraph(item, full=True))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: dump_graph_answers.py OUT.json", file=sys.stderr)
        return 2
    kb = load_kb()
    dump = {str(rules): answers(CraftGraph(kb, rules), sorted(kb.items)) for rules in (None, "crafting")}
    with open(argv[0], "w", encoding="utf-8") as out:
        json.dump(dump, out, indent=0, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
