"""Write a crafting sub-graph as Graphviz DOT or Mermaid text."""

from __future__ import annotations

import re

from .digraph import Digraph

_SHAPES = {"item": "box", "action": "ellipse", "one_of": "diamond", "layer": "octagon"}


def _label(g: Digraph, node: str) -> str:
    data = g.attrs(node)
    kind = data.get("kind")
    if kind == "action":
        return f"{data['action'].replace('_', ' ')} {data['name']}" if data["action"] != "dig_down" else data["name"]
    if kind == "one_of":
        return f"any {data['name']}"
    if kind == "layer":
        return f"layer {node.split(':')[1]} ({data['name']})"
    return data.get("name", node)


def _edge_label(data: dict) -> str:
    role, count = data.get("role", ""), data.get("count", 1)
    if role in ("member", "makes") and count == 1:
        return ""
    return f"{role} x{count}" if count != 1 else role


def to_dot(g: Digraph, title: str = "barsym") -> str:
    lines = [f'digraph "{title}" {{', "  rankdir=LR;"]
    for node in sorted(g):
        shape = _SHAPES.get(g.attrs(node).get("kind"), "box")
        lines.append(f'  "{node}" [label="{_label(g, node)}", shape={shape}];')
    for a, b, data in sorted(g.edges(), key=lambda edge: edge[:2]):
        label = _edge_label(data)
        attrs = f' [label="{label}"]' if label else ""
        lines.append(f'  "{a}" -> "{b}"{attrs};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(g: Digraph) -> str:
    ids = {node: f"n{i}" for i, node in enumerate(sorted(g))}
    lines = ["flowchart LR"]
    for node, nid in ids.items():
        text = re.sub(r'["\[\]{}()]', "", _label(g, node))
        kind = g.attrs(node).get("kind")
        shape = {"action": ('(["', '"])'), "one_of": ('{"', '"}'), "layer": ('[["', '"]]')}.get(kind, ('["', '"]'))
        lines.append(f"  {nid}{shape[0]}{text}{shape[1]}")
    for a, b, data in sorted(g.edges(), key=lambda edge: edge[:2]):
        label = _edge_label(data)
        arrow = f"-->|{label}|" if label else "-->"
        lines.append(f"  {ids[a]} {arrow} {ids[b]}")
    return "\n".join(lines) + "\n"
