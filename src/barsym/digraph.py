"""The crafting graph's storage: a directed graph on insertion-ordered dicts.

Why not networkx: the crafting graph needs nodes and edges with attributes and
the neighbours of a node -- nothing else -- while ``import networkx`` loads every
one of its algorithms, about half of a light command's start (``barsym plan stick
--planner symbolic``, ``barsym validate``; docs/results/start-time.md). The few
graph algorithms barsym runs over it (reachability, costs, ancestors) are its
own, in :mod:`barsym.graph`. :meth:`Digraph.to_networkx` hands a copy to users
who want networkx's algorithms.

Iteration follows insertion order everywhere -- nodes, predecessors, successors,
edges -- as networkx's does, so what is computed over the graph does not depend
on hashing. An edge's attributes are one dict, seen from both ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class Digraph:
    """Nodes with attributes, directed edges with attributes, each adjacency kept in insertion order."""

    def __init__(self) -> None:
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[str, Any]]] = {}
        self._pred: dict[str, dict[str, dict[str, Any]]] = {}
        self._order: dict[str, int] | None = None  # see _positions

    def add_node(self, node: str, **attrs: Any) -> None:
        """Add ``node``, or update its attributes if it is there."""
        if node not in self._node:
            self._node[node], self._succ[node], self._pred[node] = {}, {}, {}
        self._node[node].update(attrs)

    def add_edge(self, source: str, target: str, **attrs: Any) -> None:
        """Add the edge (and any missing end), or update its attributes if it is there."""
        self.add_node(source)
        self.add_node(target)
        data = self._succ[source].setdefault(target, {})
        data.update(attrs)
        self._pred[target][source] = data

    def __contains__(self, node: object) -> bool:
        return node in self._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    def attrs(self, node: str) -> dict[str, Any]:
        """The attributes of ``node`` (the stored dict: updating it updates the node)."""
        return self._node[node]

    def nodes(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every node with its attributes."""
        return iter(self._node.items())

    def edges(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every edge as (source, target, attributes)."""
        return ((s, t, data) for s, targets in self._succ.items() for t, data in targets.items())

    def number_of_edges(self) -> int:
        return sum(len(targets) for targets in self._succ.values())

    def predecessors(self, node: str) -> Iterator[str]:
        return iter(self._pred[node])

    def successors(self, node: str) -> Iterator[str]:
        return iter(self._succ[node])

    def in_edges(self, node: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The edges into ``node`` as (source, attributes)."""
        return iter(self._pred[node].items())

    def out_edges(self, node: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The edges out of ``node`` as (target, attributes)."""
        return iter(self._succ[node].items())

    def in_degree(self, node: str) -> int:
        return len(self._pred[node])

    def ancestors(self, node: str) -> set[str]:
        """Every node with a path to ``node``, not ``node`` itself."""
        seen: set[str] = set()
        stack = list(self._pred[node])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self._pred[current])
        seen.discard(node)
        return seen

    def subgraph(self, keep: Iterable[str]) -> Digraph:
        """A copy holding the nodes of ``keep`` and the edges between them, in this graph's order."""
        wanted = {node for node in keep if node in self._node}
        order = self._positions()
        sub = Digraph()
        kept = sorted(wanted, key=order.__getitem__)  # this graph's node order, without walking all of it
        for node in kept:
            sub.add_node(node, **self._node[node])
        for source in kept:  # the order of edges(): by source, then each source's targets in insertion order
            for target, data in self._succ[source].items():
                if target in wanted:
                    sub.add_edge(source, target, **data)
        return sub

    def _positions(self) -> dict[str, int]:
        """Each node's place in insertion order (kept until a node is added)."""
        if self._order is None or len(self._order) != len(self._node):
            self._order = {node: i for i, node in enumerate(self._node)}
        return self._order

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph`` copy, for networkx's algorithms (imports networkx)."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from((node, dict(attrs)) for node, attrs in self._node.items())
        g.add_edges_from((s, t, dict(data)) for s, t, data in self.edges())
        return g
