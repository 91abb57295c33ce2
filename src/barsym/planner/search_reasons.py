"""Why an inventory search found no plan: the shortfall it names (what is missing, how many), for the one line
``barsym plan`` prints when rules without gathering leave a goal out of reach.

Split from :mod:`.search` (the search itself) along that seam: the search plans, this explains a failure; a
mixin of :class:`~.search.SearchPlanner`, whose cone of makers and relaxed reach it reads.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..kb import Action, KnowledgeBase, Rules, Slot
from ..model import Goal
from ..sim import State


class WhyNot:
    """:meth:`reason`: why ``goal`` cannot be planned from ``start`` (the search's own tables answer it)."""

    if TYPE_CHECKING:  # what the search (:class:`~.search.SearchPlanner`) gives its mixin
        kb: KnowledgeBase
        rules: Rules
        max_depth: int
        _reach: frozenset[str]

        def _can_make(self, item: str) -> bool: ...
        def _makers_of(self, item: str, count: int | None = None) -> list[Action]: ...
        def _relaxed_reach(self, item: str, inventory: dict[str, int]) -> frozenset[str]: ...
        def _obtain(
            self, item: str, count: int, inventory: dict[str, int], made: list, path: frozenset[str], depth: int
        ) -> bool: ...

    def reason(self, goal: Goal, start: State) -> str:
        """Which items are missing, and how many: a shortfall that, added to the start, makes the goal possible.

        The shortfall is read off the recipes (held units first, for the way that misses the fewest), then
        checked by planning from the start with it added; what that still misses is added too, a few times.
        A shortfall the check does not confirm is not named: the message then says only that it cannot."""
        missing: Counter = Counter()
        held = dict(start.counts)
        for _ in range(3):
            more = self._shortfall(goal.item, goal.count, dict(held), frozenset())
            if not more:
                break
            missing.update(more)
            for name, n in more.items():
                held[name] = held.get(name, 0) + n
            if self._possible(goal, held):
                listed = ", ".join(f"{n} {name}" for name, n in sorted(missing.items()))
                return (
                    f"{goal.item} cannot be made from the start inventory under the {self.rules.name} rules: "
                    f"missing {listed}"
                )
        return f"{goal.item} cannot be made from the start inventory under the {self.rules.name} rules"

    def _possible(self, goal: Goal, held: dict[str, int]) -> bool:
        inventory = dict(held)
        self._reach = self._relaxed_reach(goal.item, inventory)
        return self._obtain(goal.item, goal.count, inventory, [], frozenset(), 0)

    def _shortfall(self, item: str, count: int, held: dict[str, int], path: frozenset[str]) -> Counter | None:
        short = count
        for name in self.kb.acceptable(item):  # held units count first, and are used up
            take = min(held.get(name, 0), short)
            if take:
                held[name] -= take
                short -= take
        if short <= 0:
            return Counter()
        if item in path or len(path) >= self.max_depth or not self._can_make(item):
            return Counter({item: short})
        path = path | {item}
        best: tuple[Counter, dict[str, int]] | None = None
        for action in self._makers_of(item, short):
            total: Counter = Counter()
            trial = dict(held)
            for slot in action.needs:
                total.update(self._slot_shortfall(slot.accepts, slot.count, trial, path))
            if best is None or sum(total.values()) < sum(best[0].values()):
                best = (total, trial)
        if best is None:
            return Counter({item: short})
        held.clear()
        held.update(best[1])  # what the way taken used up is gone for the slots after this one
        return best[0]

    def _slot_shortfall(self, accepts: tuple[str, ...], count: int, held: dict[str, int], path: frozenset) -> Counter:
        """What a slot misses: held units of any member first, then the rest counted in the member that
        misses the fewest of a few likely ones (never a family name the rules do not know, ``planks``
        under the crafting rules)."""
        taken: dict[str, int] = {}
        short = self.rules.take(Slot("", accepts, count), count, held, taken)
        for name, n in taken.items():
            held[name] -= n
        if short <= 0:
            return Counter()
        names = [a for a in accepts if self.rules.generic_names or a not in self.kb.generic] or list(accepts)
        usual = set(self.kb.generic.values())  # oak_planks for planks, oak_log for logs
        likely = sorted(names, key=lambda a: (a not in self._reach, self._can_make(a), a not in usual, names.index(a)))
        best: tuple[Counter, dict[str, int]] | None = None
        for name in likely[:4]:
            trial = dict(held)
            part = self._shortfall(name, short, trial, path) or Counter({name: short})
            if best is None or sum(part.values()) < sum(best[0].values()):
                best = (part, trial)
        assert best is not None
        held.clear()
        held.update(best[1])
        return best[0]


def plus(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for name, n in b.items():
        out[name] = out.get(name, 0) + n
    return out
