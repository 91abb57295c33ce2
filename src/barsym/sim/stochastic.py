"""The stochastic world: plans executed the way they vary in the game, seeded and reproducible.

A step first goes to the simulator (:meth:`World.transition`): what cannot
run there fails here the same way, so this world never succeeds where the
deterministic one fails. A step that can run then costs what it would in the
game and may still fail:

- **mining**: each block takes its real break time (hardness, the tool's dig
  speed, harvestability: :meth:`Rules.break_ticks`) plus the game's 5-tick
  delay; the resource is found in clusters whose waiting time is exponential
  with a mean that grows with its rarity where the agent is (world.json);
- **tools wear**: every block costs the tool a use (:meth:`Rules.wear`);
  after ``maxDurability`` uses it breaks and the agent goes on with another
  one that can do the job, or by hand where none is needed, or the step fails
  ``tool_broke`` with what it had mined so far;
- a unit gathered without breaking a block (a bucket filled at water, a cow
  milked: :meth:`Rules.breaks_block`) is one use, after the same search;
- **digging down** breaks a staircase of blocks (soil, then stone) with the
  pickaxe; **climbing up** walks it back;
- **smelting** takes each recipe's cooking time per item; crafting a second
  to open the grid and a click per batch;
- **hunting**: mobs are met after an exponential wait, take hits by their
  health, drop a random number of items, and may escape; after a few escapes
  the step fails ``mob_escaped``;
- the **controller** fails a step with a small probability per step type;
- the **budget**: a step that would end after the episode's budget fails ``out_of_time``.

The world credits exactly what a step asks for (surplus drops are not
counted), so it is never more generous than the deterministic world. Every
parameter is in ``data/recipes/world.json`` with its source or reasoning.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..kb import KnowledgeBase, Rules
from ..kb.world_params import WorldModel
from ..model import Step, StepType
from .costs import StepCosts
from .failure import Failure
from .simulator import Transition
from .state import State
from .world import SEED_MASK, StepResult, World, WorldCode, WorldFailure, WorldState, deepest_layer


def _mix(value: int) -> int:
    """splitmix64's finaliser: spreads the bits of a 64-bit value (Steele, Lea and Flood 2014)."""
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & SEED_MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & SEED_MASK
    return value ^ (value >> 31)


_GAMMA = 0x9E3779B97F4A7C15


def derive_seed(seed: int, index: int) -> int:
    """The seed of item ``index`` of a series seeded by ``seed`` (a run of ``run``, a step of an episode)."""
    return _mix((seed & SEED_MASK) ^ _mix((index * _GAMMA + _GAMMA) & SEED_MASK))


class Draws:
    """Random numbers for one step: splitmix64 from (episode seed, step number), the same in every process."""

    __slots__ = ("_state",)

    def __init__(self, seed: int, counter: int):
        self._state = derive_seed(seed, counter)

    def random(self) -> float:
        """Uniform in [0, 1)."""
        self._state = (self._state + _GAMMA) & SEED_MASK
        return (_mix(self._state) >> 11) * 1.1102230246251565e-16  # 2 ** -53

    def exponential(self, mean: float) -> float:
        return -mean * math.log(1.0 - self.random())

    def integer(self, low: int, high: int) -> int:
        """Uniform from ``low`` to ``high``, both included."""
        return low + int(self.random() * (high - low + 1))

    def cluster(self, mean: float) -> int:
        """A cluster size: uniform from 1 to about ``2 * mean - 1``, so its mean is ``mean``."""
        return 1 + int(self.random() * (2 * mean - 1))


@dataclass(frozen=True)
class _Outcome:
    ticks: float
    after: State
    wear: tuple[tuple[str, int], ...] | None = None
    failure: WorldFailure | None = None
    progress: str = ""  # how far the step got, should the budget run out first


def _wear_tuple(wear: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((name, uses) for name, uses in wear.items() if uses))


class StochasticWorld(World):
    name = "stochastic"

    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None, model: WorldModel | None = None):
        super().__init__(kb, rules)
        self.model = model or kb.world
        self.costs = StepCosts(self.rules, self.model)

    def default_budget(self, steps: Sequence[Step], start: State | None = None) -> int:
        """The budget of the deepest layer the plan works on (world.json: BAR's and DEPS's limits)."""
        return self.model.budget(deepest_layer(self.kb, steps, start))

    def step(self, state: WorldState, step: Step, later: Sequence[Step] = ()) -> StepResult:
        move = self.transition(step, state.state, later)
        if isinstance(move, Failure):
            return StepResult(replace(state, steps=state.steps + 1), 0, WorldFailure.cannot_run(move))
        draws = Draws(state.seed, state.steps)
        kind = step.type
        if kind is StepType.MINE:
            outcome = self._mine(state, step, move, draws)
        elif kind is StepType.DIG_DOWN:
            outcome = self._dig(state, move)
        elif kind is StepType.KILL:
            outcome = self._hunt(state, step, move, draws)
        elif kind is StepType.CLIMB_UP:
            outcome = _Outcome(
                self.costs.climb_ticks(state.state.layer) if move.state.layer != state.state.layer else 0, move.state
            )
        elif kind is StepType.CRAFT:
            outcome = _Outcome(self.costs.craft_ticks(move.item, step.count, state.state), move.state)
        else:
            outcome = _Outcome(self.costs.smelt_ticks(move.item, step.count, state.state), move.state)
        probability = self.model.controller[kind.value]
        if draws.random() < probability:
            at = draws.random() * outcome.ticks
            what = kind.value.replace("_", " ")
            failure = WorldFailure(
                WorldCode.CONTROLLER_FAILED,
                f"the controller failed the {what} step {at:,.0f} ticks into it "
                f"({100 * probability:g} % of {what} steps fail so)",
                move.item,
            )
            return self.finish(state, at, state.state, failure=failure)
        return self.finish(state, outcome.ticks, outcome.after, outcome.wear, outcome.failure, outcome.progress)

    # ---- tools ---------------------------------------------------------------------------
    def _spare(self, kind: str | None, min_tier: int, tool: str, held: Callable[[str], int]) -> str | None:
        """What the agent goes on with when ``tool`` breaks: another of it, another tool that can serve, or None."""
        if held(tool) > 0:
            return tool
        if kind is None:
            return None  # the job needs no tool: the hand goes on
        return self.rules.best_held_tool(kind, min_tier, held)

    def _broke(self, tool: str, need_kind: str, done: str) -> WorldFailure:
        return WorldFailure(
            WorldCode.TOOL_BROKE,
            f"{tool} broke after {self.rules.durability(tool)} uses, {done}; "
            f"no other {need_kind} that can do the job is at hand",
            tool,
        )

    # ---- steps with chance -------------------------------------------------------------------
    def _mine(self, ws: WorldState, step: Step, move: Transition, draws: Draws) -> _Outcome:
        item, need, limit = move.item, step.count, ws.time_left
        gather = self.rules.action("mine", item, need)
        found, search = self.costs.resource(item, ws.state.layer)
        low, high = found.drops
        rules, costs, counts = self.rules, self.costs, ws.state.counts
        wear = dict(ws.wear)
        broken: dict[str, int] = {}

        def held(name: str) -> int:
            return counts.get(name, 0) - broken.get(name, 0)

        tool = rules.worn_tool(move.used)
        per_block, cost = costs.gather_unit(gather, tool)
        life = rules.durability(tool) if tool else None
        got = left = 0
        ticks = 0.0
        while got < need and ticks <= limit:
            if left <= 0:
                ticks += draws.exponential(search)
                left = draws.cluster(found.cluster)
            ticks += per_block
            left -= 1
            if found.chance >= 1 or draws.random() < found.chance:
                got += low if low == high else draws.integer(low, high)
            if not cost:
                continue
            uses = wear.get(tool, 0) + cost
            if uses < life:
                wear[tool] = uses
                continue
            wear.pop(tool, None)
            broken[tool] = broken.get(tool, 0) + 1
            if got >= need:
                break
            need_tool = gather.tool
            spare = self._spare(need_tool.kind if need_tool else None, need_tool.tier if need_tool else 0, tool, held)
            if spare is None and need_tool is not None:
                failure = self._broke(tool, need_tool.kind, f"with {got} of {need} {item} mined")
                spent = {s.accepts[0]: s.count for s in rules.action("mine", item, got).needs}  # buckets filled so far
                for name, n in broken.items():
                    spent[name] = spent.get(name, 0) + n
                return _Outcome(ticks, ws.state.changed(add={item: got}, remove=spent), _wear_tuple(wear), failure)
            tool = spare
            per_block, cost = costs.gather_unit(gather, tool)
            life = rules.durability(tool) if tool else None
        return _Outcome(
            ticks,
            move.state.changed(remove=broken) if broken else move.state,
            _wear_tuple(wear),
            progress=f"{min(got, need)} of {need} {item} mined",
        )

    def _dig(self, ws: WorldState, move: Transition) -> _Outcome:
        """A staircase of block runs; per run, the blocks until the pickaxe breaks are counted, not looped."""
        layer = ws.state.layer
        if move.state.layer == layer:  # already on the deepest layer: nothing to dig
            return _Outcome(0, move.state)
        rules, costs, counts = self.rules, self.costs, ws.state.counts
        kind = self.kb.dig_down_kind
        wear = dict(ws.wear)
        broken: dict[str, int] = {}
        tool = rules.worn_tool(move.used)
        ticks = float(costs.dig_levels(layer) * self.model.dig_ticks_per_level)
        runs = costs.dig_runs(layer)
        total, dug = sum(n for _, n in runs), 0
        for block, count in runs:
            while count:
                per, cost = costs.block(block, tool)
                life = rules.durability(tool) if cost else None
                lasts = count if not cost else min(count, -(-(life - wear.get(tool, 0)) // cost))
                ticks += per * lasts
                count -= lasts
                dug += lasts
                if not cost:
                    continue
                uses = wear.get(tool, 0) + cost * lasts
                if uses < life:
                    wear[tool] = uses
                    continue
                wear.pop(tool, None)
                broken[tool] = broken.get(tool, 0) + 1
                if dug == total:
                    break
                spare = rules.best_held_tool(kind, 1, lambda n: counts.get(n, 0) - broken.get(n, 0))
                if spare is None:
                    failure = self._broke(tool, kind, f"{dug} of the {total} blocks down dug")
                    return _Outcome(ticks, ws.state.changed(remove=broken), _wear_tuple(wear), failure)
                tool = spare
        return _Outcome(ticks, move.state.changed(remove=broken) if broken else move.state, _wear_tuple(wear))

    def _hunt(self, ws: WorldState, step: Step, move: Transition, draws: Draws) -> _Outcome:
        item, need, limit = move.item, step.count, ws.time_left
        origin = self.rules.action("kill", item, need).origin or ""
        mob, model = self.model.mobs[origin], self.model
        low, high = mob.drops.get(item, (1, 1))
        fight = mob.health * model.hit_ticks
        got = escapes = 0
        ticks = 0.0
        while got < need and ticks <= limit:
            ticks += draws.exponential(mob.encounter_ticks) + model.chase_ticks
            if draws.random() < mob.escape:
                escapes += 1
                if escapes >= model.give_up_after:
                    failure = WorldFailure(
                        WorldCode.MOB_ESCAPED,
                        f"{escapes} {origin}s got away; {got} of {need} {item} collected, and the controller gave up",
                        item,
                    )
                    return _Outcome(ticks, ws.state.changed(add={item: got}), None, failure)
                continue
            ticks += fight
            got += draws.integer(low, high)
        return _Outcome(ticks, move.state, progress=f"{min(got, need)} of {need} {item} collected")
