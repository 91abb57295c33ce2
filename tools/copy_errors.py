"""Where forward plans leave the facts they were given: the first wrong line of each failed plan, by kind.

    python tools/copy_errors.py docs/results/runs/taught-cot-bar53.jsonl.gz [MORE.jsonl ...]

With facts on, cot and deps are told every step of the task in plan order ("Known, in the order a
plan can use it", :mod:`barsym.reasoning.prompts.plan_facts`: the symbolic planner's plan), so a plan that
fails has, at some line, stopped copying them. This finds that line in each run file's plans that
are not executable and says what the model wrote there instead:

- ``skipped``: a later known line (the lines between were left out: a furnace, a smelt);
- ``repeated``: a line it had written before, or an earlier known line (after the second
  ``dig down``, the first one's ``mine 3 iron_ore with stone_pickaxe`` again);
- ``count``: the known line's action and item with another count or tool;
- ``stopped``: nothing (the plan ends early);
- ``other``: anything else;
- ``deadline``: not a copy error at all: the planner's time (``--deadline``) ran out and cut the
  plan, so its last line says nothing about the facts (DEPS' run records say ``stopped: deadline``).

It prints one line per failed plan and the counts per kind and per line number, so tries of
different adapters can be compared by where they fail, not only by how many. The known lines are
planned from an empty inventory, as BAR's and DEPS' tasks start; a run from another start state
would be compared with the wrong facts.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

from barsym import api
from barsym.bar_io import step_from_record
from barsym.eval.runfile import RunFileError, read_run
from barsym.model import Goal
from barsym.reasoning.grammars.forward_plans import render_step
from barsym.reasoning.planners.forward.deps_trace import StopReason


def first_wrong_line(written: list[str], known: list[str]) -> tuple[int, str, str]:
    """(line number from 1, kind, what was written there) of the first line that is not the known one."""
    for i, line in enumerate(written):
        if i < len(known) and line == known[i]:
            continue
        if i >= len(known):
            return i + 1, "other", line
        if line in known[i + 1 :]:
            return i + 1, "skipped", line
        if line in written[:i] or line in known[:i]:
            return i + 1, "repeated", line
        head = line.split(" with ")[0].split(" ")
        want = known[i].split(" with ")[0].split(" ")
        if head[0] == want[0] and head[-1] == want[-1]:
            return i + 1, "count", line
        return i + 1, "other", line
    return len(written) + 1, "stopped", "(nothing)"


def cut_by_deadline(task: dict) -> bool:
    """Whether the run record says the planner's time ran out (a section of its stats with ``stopped: deadline``,
    the value DEPS' trace writes for :attr:`StopReason.DEADLINE`)."""
    stats = task.get("stats") or {}
    return any(
        isinstance(section, dict) and section.get("stopped") == StopReason.DEADLINE.value for section in stats.values()
    )


def main(paths: list[str]) -> int:
    for path in paths:
        try:
            _, tasks, _ = read_run(Path(path))
        except RunFileError as exc:
            print(f"copy_errors: {exc}", file=sys.stderr)
            return 2
        kinds: collections.Counter[str] = collections.Counter()
        where: collections.Counter[str] = collections.Counter()
        failed = 0
        print(f"## {path}")
        for task in tasks:
            goal = Goal(item=task["goal"]["item"], count=task["goal"]["count"])
            steps = [step_from_record(s, task["key"]) for s in task.get("plan") or []]
            if steps and api.validate(steps, goal=goal).valid:
                continue
            failed += 1
            if cut_by_deadline(task):
                kinds["deadline"] += 1
                where["deadline (the plan cut by --deadline)"] += 1
                print(
                    f"  {task['key']}: cut by the deadline after {task.get('seconds', 0):.1f} s (plan length {len(steps)})"
                )
                continue
            known = [render_step(s) for s in api.plan(goal, planner="symbolic").plan]
            line, kind, wrote = first_wrong_line([render_step(s) for s in steps], known)
            expected = known[line - 1] if line <= len(known) else "(nothing)"
            kinds[kind] += 1
            where[f"{kind} at line {line} (known: {expected.split(' with ')[0]})"] += 1
            print(f"  {task['key']}: line {line} {kind}: wrote {wrote!r}, known {expected!r}")
        print(
            f"  {failed} of {len(tasks)} not executable; first wrong line: "
            + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
        )
        for what, n in where.most_common(6):
            print(f"    {n} x {what}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tools/copy_errors.py RUN.jsonl [MORE.jsonl ...]")
    sys.exit(main(sys.argv[1:]))
