"""Run a plan many times in a world: success rate, failures by step and code, ticks, a failure in words.

``run(plan, world, runs, seed)`` plays ``runs`` episodes, each seeded from
``seed`` and its number, so the same call gives the same result in any
process. An episode stops at its first failed step (as a real agent would, and
as DEPS replans from there); it succeeds when every step ran and the final
inventory holds the goal. The :class:`Execution` it returns is what the stage
memory (success rates) and DEPS (the description of a failure) read.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..model import Goal, Plan, Step
from .failure import Code, Failure
from .rollout import goal_failure
from .state import State
from .stochastic import derive_seed
from .world import World, WorldCode, WorldFailure, WorldState

#: z for a 95 % interval
Z95 = 1.959963984540054
#: failure lines a text summary shows (the JSON record has them all)
SHOWN_FAILURES = 5


def wilson_interval(successes: int, runs: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a success rate: sound at 0 % and 100 %, where the normal one collapses."""
    if runs <= 0:
        return (0.0, 1.0)
    p = successes / runs
    denominator = 1 + z * z / runs
    centre = (p + z * z / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends, where rounding leaves 1e-18
    high = 1.0 if successes == runs else min(1.0, centre + half)
    return (low, high)


@dataclass(frozen=True)
class Episode:
    """One run: its seed, whether it succeeded, the ticks it took, and where and why it failed."""

    seed: int
    success: bool
    ticks: int
    failure: WorldFailure | None = None
    failed_step: int | None = None  # 1-based; None for a failure found at the end (the goal)
    at_failure: WorldState | None = None  # where the agent stood when it failed

    @property
    def failure_key(self) -> tuple[int | None, str] | None:
        return None if self.failure is None else (self.failed_step, self.failure.code.value)


def play(world: World, plan: Plan, seed: int, goal: Goal | None, start: State, budget: int | None) -> Episode:
    """One episode of ``plan`` in ``world``, stopping at the first failure."""
    steps = plan.steps
    state = world.reset(seed, start, budget)
    for index, step in enumerate(steps):
        result = world.step(state, step, steps[index + 1 :])
        state = result.state
        if result.failure is not None:
            return Episode(seed, False, state.ticks, result.failure, index + 1, state)
    if goal is not None:
        missing = goal_failure(world.kb, goal, state.state)
        if missing is not None:
            return Episode(seed, False, state.ticks, WorldFailure.cannot_run(missing), None, state)
    return Episode(seed, True, state.ticks)


@dataclass(frozen=True)
class FailureCount:
    step: int | None
    code: str
    count: int

    def to_dict(self) -> dict:
        return {"step": self.step, "code": self.code, "count": self.count}


@dataclass(frozen=True)
class TickStats:
    """Median and 90th percentile (nearest rank) of the ticks of successful runs."""

    median: float
    p90: int

    def to_dict(self) -> dict:
        return {"median": self.median, "p90": self.p90}


@dataclass
class Execution:
    """Every episode of one plan in one world, and what they add up to."""

    plan: Plan
    world: str
    seed: int
    budget: int | None
    goal: Goal | None
    episodes: list[Episode] = field(default_factory=list)
    layer_names: tuple[str, ...] = ()

    @property
    def runs(self) -> int:
        return len(self.episodes)

    @property
    def successes(self) -> int:
        return sum(e.success for e in self.episodes)

    @property
    def success_rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.successes, self.runs)

    def failures(self) -> list[FailureCount]:
        """Failed runs counted by (step, code), most frequent first."""
        counts = Counter(e.failure_key for e in self.episodes if e.failure is not None)
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0] is None, kv[0][0] or 0, kv[0][1]))
        return [FailureCount(step, code, n) for (step, code), n in ordered]

    def ticks(self) -> TickStats | None:
        """Tick statistics of the successful runs; None without any."""
        done = sorted(e.ticks for e in self.episodes if e.success)
        if not done:
            return None
        return TickStats(statistics.median(done), done[math.ceil(0.9 * len(done)) - 1])

    def typical_failure(self) -> Episode | None:
        """The first run that failed the commonest way (same step, same code)."""
        common = self.failures()
        if not common:
            return None
        key = (common[0].step, common[0].code)
        return next(e for e in self.episodes if e.failure_key == key)

    def description(self) -> str | None:
        episode = self.typical_failure()
        return None if episode is None else describe(episode, self.plan, self.layer_names)

    def to_text(self, shown: int = SHOWN_FAILURES) -> str:
        """The summary ``barsym execute`` prints: success rate with its interval, ticks, the ``shown`` most
        common failures (the rest counted in one line), and a typical failed run in words."""
        low, high = self.interval
        budget = f", budget {self.budget:,} ticks" if self.budget is not None else ", no budget"
        lines = [
            f"{self.plan.source}: {self.successes}/{self.runs} runs succeeded: "
            f"{100 * self.success_rate:.1f} % (95 % interval {100 * low:.1f}-{100 * high:.1f} %) "
            f"in the {self.world} world{budget}"
        ]
        ticks = self.ticks()
        if ticks is not None:
            lines.append(
                f"  ticks of successful runs: median {ticks.median:,.0f} ({_minutes(ticks.median)}), "
                f"90th percentile {ticks.p90:,} ({_minutes(ticks.p90)})"
            )
        failures = self.failures()
        for count in failures[:shown]:
            where = f"step {count.step} ({self.plan.steps[count.step - 1]})" if count.step is not None else None
            lines.append(f"  {count.count:>5} failed at {where or 'the end (goal check)'}: {count.code}")
        if len(failures) > shown:
            rest, ways = sum(c.count for c in failures[shown:]), len(failures) - shown
            lines.append(f"  {rest:>5} failed in {ways} other way{'s' if ways > 1 else ''} (--format json lists them)")
        description = self.description()
        if description is not None:
            lines.append(f"  a typical failed run: {description}")
        return "\n".join(lines) + "\n"

    def to_dict(self, episodes: bool = False) -> dict:
        """What the runs add up to (``barsym execute --json``'s record); with ``episodes``, also the plan's
        steps and every episode, which is what :meth:`from_dict` needs to rebuild the Execution."""
        low, high = self.interval
        out = {
            "file": self.plan.source,
            "world": self.world,
            "runs": self.runs,
            "seed": self.seed,
            "budget": self.budget,
            "goal": None if self.goal is None else {"item": self.goal.item, "count": self.goal.count},
            "successes": self.successes,
            "success_rate": round(self.success_rate, 6),
            "interval": [round(low, 6), round(high, 6)],
            "failures": [f.to_dict() for f in self.failures()],
            "ticks": None if self.ticks() is None else self.ticks().to_dict(),
            "description": self.description(),
        }
        if episodes:
            out["layer_names"] = list(self.layer_names)
            out["steps"] = [s.model_dump(mode="json") for s in self.plan.steps]
            out["episodes"] = [_episode_dict(e) for e in self.episodes]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Execution":
        """The Execution ``to_dict(episodes=True)`` wrote (the summary alone cannot be replayed)."""
        if "episodes" not in data or "steps" not in data:
            raise ValueError("an Execution is rebuilt from to_dict(episodes=True): this record has no episodes")
        plan = Plan(steps=tuple(Step.model_validate(r) for r in data["steps"]), source=data.get("file"))
        goal = data.get("goal")
        return cls(
            plan,
            data["world"],
            data["seed"],
            data.get("budget"),
            None if goal is None else Goal(**goal),
            [_episode_from(e) for e in data["episodes"]],
            tuple(data.get("layer_names", ())),
        )


def _episode_dict(episode: Episode) -> dict:
    out: dict = {"seed": episode.seed, "success": episode.success, "ticks": episode.ticks}
    if episode.failure is not None:
        f = episode.failure
        out["failure"] = {
            "code": f.code.value,
            "message": f.message,
            "item": f.item,
            "cause": None if f.cause is None else f.cause.to_dict(),
        }
        out["failed_step"] = episode.failed_step
    if episode.at_failure is not None:
        w = episode.at_failure
        out["at_failure"] = {
            "state": w.state.to_dict(),
            "ticks": w.ticks,
            "budget": w.budget,
            "wear": [list(pair) for pair in w.wear],
            "seed": w.seed,
            "steps": w.steps,
        }
    return out


def _code(value: str) -> Code | WorldCode:
    try:
        return WorldCode(value)
    except ValueError:
        return Code(value)


def _episode_from(data: dict) -> Episode:
    failure = None
    if data.get("failure") is not None:
        f, cause = data["failure"], data["failure"].get("cause")
        if cause is not None:
            cause = Failure(
                **{**cause, "code": Code(cause["code"]), "suggestions": tuple(cause.get("suggestions", ()))}
            )
        failure = WorldFailure(_code(f["code"]), f["message"], f.get("item"), cause)
    where = data.get("at_failure")
    if where is not None:
        where = WorldState(
            State.from_dict(where["state"]),
            where["ticks"],
            where.get("budget"),
            tuple(tuple(pair) for pair in where.get("wear", ())),
            where.get("seed", 0),
            where.get("steps", 0),
        )
    return Episode(data["seed"], data["success"], data["ticks"], failure, data.get("failed_step"), where)


def _minutes(ticks: float) -> str:
    """Game time of ``ticks`` (20 per second) in the unit that reads best."""
    return f"{ticks / 1200:.1f} min" if ticks >= 1200 else f"{ticks / 20:.1f} s"


def describe(episode: Episode, plan: Plan, layer_names: tuple[str, ...] = ()) -> str:
    """The failure in words, as DEPS' descriptor gives it: which step, why, and what the agent held.

    ``step 9, craft 1 furnace, failed: crafting furnace needs a crafting_table ...;
    inventory: 8 cobblestone, 2 planks, 1 wooden_pickaxe; layer 1 (stone), after 1,204 ticks``
    """
    failure = episode.failure
    if failure is None:
        return "the run succeeded"
    where = episode.at_failure
    held = ", ".join(f"{n} {item}" for item, n in where.state.inventory) if where else ""
    layer = where.state.layer if where else 0
    place = f"layer {layer} ({layer_names[layer]})" if layer < len(layer_names) else f"layer {layer}"
    tail = f"inventory: {held or 'nothing'}; {place}, after {episode.ticks:,} ticks"
    if episode.failed_step is None:
        return f"the plan ran to its end ({len(plan.steps)} steps) but failed: {failure.message}; {tail}"
    step = plan.steps[episode.failed_step - 1]
    return f"step {episode.failed_step}, {step}, failed: {failure.message}; {tail}"


def run(
    plan: Plan,
    world: World,
    runs: int = 1,
    seed: int = 0,
    goal: Goal | None = None,
    start: State | None = None,
    budget: int | None = None,
    on_episode=None,
) -> Execution:
    """Play ``plan`` ``runs`` times in ``world``; run ``i`` is seeded from ``seed`` and ``i``.

    ``goal`` defaults to one of the last step's item (as the validator's);
    ``budget`` to the world's budget for the plan (none for the deterministic world);
    ``on_episode()`` is called after each run (``barsym execute``'s progress line).
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    goal = goal or plan.default_goal()
    start = start or State()
    if budget is None:
        budget = world.default_budget(plan.steps, start)
    execution = Execution(plan, world.name, seed, budget, goal, layer_names=tuple(world.kb.layers))
    for i in range(runs):
        execution.episodes.append(play(world, plan, derive_seed(seed, i), goal, start, budget))
        if on_episode is not None:
            on_episode()
    return execution


def summary_line(plans: int, unusable: int, runs: int, successes: int, world: str, seed: int) -> str:
    """``barsym execute``'s last line: the plans, the runs in the world, how many succeeded."""
    extra = f", {unusable} unusable" if unusable else ""
    rate = f" ({100 * successes / runs:.1f} %)" if runs else ""
    return f"summary: {plans} plan(s){extra}, {runs:,} runs in the {world} world (seed {seed}): {successes:,} succeeded{rate}"
