"""Why whole plans written without facts fail: an input made too few times, one never made, or another fault.

    python tools/plan_faults.py docs/results/runs/knows/cot-nofacts-bar53.jsonl.gz [MORE.jsonl ...]

Without facts, cot and DEPS write a plan from what the model knows; ``tools/copy_errors.py`` compares a
plan with the facts it was shown, which these prompts do not hold. This plays each plan that does not run
in the simulator and reads its first failure:

- ``too few``: a step lacks an input (``needs 6 stick, only 2 at hand``) that an earlier step of the same
  plan makes: the model knew the chain but not the count (the counts-as-sums reasoning aims at this);
- ``never made``: a step lacks an input that no earlier step makes (the model jumped past a sub-goal:
  ``craft 1 stone_pickaxe`` with no cobblestone mined);
- ``other``: the simulator's failure code otherwise (a wrong verb, tool, layer, station or fuel).

It prints one line per failed plan, then the counts and the inputs most often short, so adapters can be
compared by what they get wrong, not only by how many plans run.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

from barsym.bar_io import step_from_record
from barsym.eval.runfile import RunFileError, read_run
from barsym.kb import load_kb
from barsym.sim import Code, DeterministicWorld, State


def first_fault(world: DeterministicWorld, steps: list) -> tuple[str, str] | None:
    """(kind, what) of the plan's first failure, or None when it runs to the end."""
    state = world.reset(0, State())
    for i, step in enumerate(steps):
        result = world.step(state, step, steps[i + 1 :])
        failure = result.failure
        if failure is None:
            state = result.state
            continue
        if failure.code is Code.MISSING_INGREDIENT and failure.item:
            accepts = {failure.item, *(failure.cause.accepts if failure.cause else ())}
            made = any(earlier.item in accepts for earlier in steps[:i])
            return ("too few" if made else "never made"), failure.item.lstrip("#")
        return "other", failure.code.value
    return None


def main(paths: list[str]) -> int:
    kb = load_kb()
    world = DeterministicWorld(kb)
    for path in paths:
        try:
            _, tasks, _ = read_run(Path(path))
        except RunFileError as exc:
            print(f"plan_faults: {exc}", file=sys.stderr)
            return 2
        kinds: collections.Counter[str] = collections.Counter()
        short: dict[str, collections.Counter[str]] = {
            "too few": collections.Counter(),
            "never made": collections.Counter(),
        }
        print(f"## {path}")
        for task in tasks:
            steps = [step_from_record(s, task["key"]) for s in task.get("plan") or []]
            fault = first_fault(world, steps) if steps else ("other", "no plan")
            if fault is None:
                continue
            kind, what = fault
            kinds[kind] += 1
            if kind in short:
                short[kind][what] += 1
            print(f"  {task['key']}: {kind} ({what})")
        print(
            f"  {sum(kinds.values())} of {len(tasks)} do not run: "
            + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        )
        for kind, counter in short.items():
            if counter:
                print(f"    {kind}: " + ", ".join(f"{item} {n}" for item, n in counter.most_common(6)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tools/plan_faults.py RUN.jsonl [MORE.jsonl ...]")
    sys.exit(main(sys.argv[1:]))
