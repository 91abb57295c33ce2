"""Immutable agent state: inventory counts and depth layer.

Stations (crafting table, furnace) are items: once made they stay at hand,
since the agent can pick a placed station up again. State is hashable and
never mutated, so ``apply`` is pure and hypothesis can replay any sequence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class State:
    inventory: tuple[tuple[str, int], ...] = ()
    layer: int = 0
    _counts: Mapping[str, int] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_counts", MappingProxyType(dict(self.inventory)))

    @classmethod
    def start(cls, inventory: Mapping[str, int] | None = None, layer: int = 0) -> "State":
        items = inventory or {}
        for name, count in items.items():
            if not isinstance(count, int) or count < 0:
                raise ValueError(f"starting inventory: count of {name!r} must be a whole number >= 0, got {count!r}")
        return cls(tuple(sorted((k, v) for k, v in items.items() if v > 0)), layer)

    def count(self, item: str) -> int:
        return self._counts.get(item, 0)

    def count_any(self, items: Iterable[str]) -> int:
        return sum(self._counts.get(i, 0) for i in items)

    @property
    def counts(self) -> Mapping[str, int]:
        return self._counts

    def changed(
        self,
        add: Mapping[str, int] = MappingProxyType({}),
        remove: Mapping[str, int] = MappingProxyType({}),
        layer: int | None = None,
    ) -> "State":
        """A new state with items added and removed; removing more than held is a bug."""
        counts = dict(self._counts)
        for name, n in remove.items():
            left = counts.get(name, 0) - n
            if left < 0:
                raise ValueError(f"cannot remove {n} {name}: only {counts.get(name, 0)} held")
            if left:
                counts[name] = left
            else:
                counts.pop(name, None)
        for name, n in add.items():
            if n:
                counts[name] = counts.get(name, 0) + n
        return State(tuple(sorted(counts.items())), self.layer if layer is None else layer)

    def describe(self, layer_names: tuple[str, ...] = ()) -> str:
        items = ", ".join(f"{n} {k}" for k, n in self.inventory) or "nothing"
        layer = f"{self.layer} ({layer_names[self.layer]})" if self.layer < len(layer_names) else str(self.layer)
        return f"layer {layer}; inventory: {items}"

    def to_dict(self) -> dict:
        return {"layer": self.layer, "inventory": dict(self.inventory)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "State":
        """The state :meth:`to_dict` wrote."""
        return cls.start(dict(data.get("inventory") or {}), int(data.get("layer", 0)))
