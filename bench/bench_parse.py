"""Benchmark: ``barsym parse`` on the paraphrase set, the model against the stand-ins.

    python bench/bench_parse.py [--set tests/data/paraphrases.json] [--parsers model,copy-facts,largest,random,first]
                                [--limit N] [--threads 1] [--json FILE]

Each plan of the set (BAR's expert plans in prose, ``bench/make_paraphrases.py``)
is parsed clause by clause (:mod:`barsym.reasoning.prose.parser`) and compared with its
expert steps. Columns: exact plans (every step equal, in order), steps right
(position by position, over the longer of the two; a clause the parser names as unreadable holds
its place as one missed step, :func:`with_gaps`), steps right where the
text gave the count (the steps whose count it left out set aside: no parser can
read those; they are filled from the plan's needs and often differ from the
expert's count), valid plans (barsym's validator, for the task's goal), calls
and seconds per plan. The stand-ins (:mod:`barsym.llm.stand_in`) answer under the same
grammars and prompts with no model: ``copy-facts`` copies the prompt's first
"Known:" option, the closest knowledge-base name with its best verb.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.kb import load_kb  # noqa: E402
from barsym.llm.stand_in import STAND_INS, make_stand_in  # noqa: E402
from barsym.model import Goal  # noqa: E402
from barsym.planner.registry import graph_for  # noqa: E402
from barsym.reasoning.prose.parser import ProseParser  # noqa: E402
from barsym.validation import Validator, Verdict  # noqa: E402


class Tally:
    """The columns, summed over plans."""

    def __init__(self, label: str):
        self.label = label
        self.plans = self.exact = self.right = self.total = self.right_given = self.total_given = 0
        self.valid = self.calls = 0
        self.seconds = 0.0

    def add(self, entry: dict, got: list[str], valid: bool, calls: int) -> None:
        want = entry["expected"]
        self.plans += 1
        self.exact += got == want
        self.total += max(len(got), len(want))
        self.right += sum(a == b for a, b in zip(got, want))
        open_counts = set(entry["open_counts"])
        self.total_given += max(len(got), len(want)) - len(open_counts)
        self.right_given += sum(a == b for i, (a, b) in enumerate(zip(got, want)) if i not in open_counts)
        self.valid += valid
        self.calls += calls

    def row(self) -> dict:
        n = max(self.plans, 1)
        return {
            "parser": self.label,
            "plans": self.plans,
            "exact": self.exact,
            "steps_right": round(100 * self.right / max(self.total, 1), 1),
            "steps_right_given": round(100 * self.right_given / max(self.total_given, 1), 1),
            "valid": self.valid,
            "calls_per_plan": round(self.calls / n, 1),
            "seconds_per_plan": round(self.seconds / n, 2),
        }


def is_valid(validator: Validator, entry: dict, plan) -> bool:
    goal = Goal(item=entry["goal"]["item"], count=entry["goal"]["count"])
    return bool(plan.steps) and validator.validate(plan, goal=goal).verdict is not Verdict.INVALID


GAP = "(could not read)"


def with_gaps(steps: list[str], gaps: list[int]) -> list[str]:
    """The steps with a placeholder where each unread clause was: a clause the parser names as unreadable
    is one step missed, in its place, not a shift of every step after it (so naming a gap never scores
    below guessing an unrelated item there)."""
    out = list(steps)
    for offset, before in enumerate(gaps):
        out.insert(before + offset, GAP)
    return out


def measure(label: str, parser: ProseParser, plans: list[dict], validator: Validator, log=None) -> dict:
    tally = Tally(label)
    for entry in plans:
        started = time.perf_counter()
        parsed = parser.parse(entry["text"])
        tally.seconds += time.perf_counter() - started
        got = with_gaps([str(s) for s in parsed.steps], parsed.gaps)
        valid = is_valid(validator, entry, parsed.plan())
        tally.add(entry, got, valid, parsed.calls)
        if log is not None:  # one line per plan as it is done: a long model run can be read before it ends
            log.write(
                json.dumps(
                    {
                        "parser": label,
                        "task": entry["task"],
                        "got": got,
                        "exact": got == entry["expected"],
                        "valid": valid,
                        "calls": parsed.calls,
                        "seconds": tally.seconds,
                    }
                )
                + "\n"
            )
            log.flush()
    return tally.row()


def from_records(path: Path, plans: list[dict]) -> list[dict]:
    """The rows of a ``--records`` file (a run cut short counts the plans it finished)."""
    by_task = {p["task"]: p for p in plans}
    tallies: dict[str, Tally] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        tally = tallies.setdefault(record["parser"], Tally(record["parser"]))
        tally.add(by_task[record["task"]], record["got"], record["valid"], record["calls"])
        tally.seconds = record["seconds"]
    return [t.row() for t in tallies.values()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=REPO / "tests" / "data" / "paraphrases.json")
    parser.add_argument("--parsers", default="model," + ",".join(STAND_INS))
    parser.add_argument("--limit", type=int, help="only the first N plans")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--adapter", help="LoRA adapter (default: the shipped one for the embedded model; none: base)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--records", type=Path, help="append one JSON line per parsed plan here")
    parser.add_argument("--tasks-of", type=Path, help="only the plans a --records file holds (to compare a cut run)")
    parser.add_argument("--score-records", type=Path, help="print the table of a --records file; parse nothing")
    args = parser.parse_args()
    kb = load_kb()
    graph, validator = graph_for(kb), Validator(kb)
    plans = json.loads(args.set.read_text(encoding="utf-8"))["plans"][: args.limit]
    if args.tasks_of or args.score_records:
        done = {json.loads(line)["task"] for line in (args.tasks_of or args.score_records).read_text().splitlines()}
        plans = [p for p in plans if p["task"] in done]
    rows = from_records(args.score_records, plans) if args.score_records else []
    for label in [] if args.score_records else [p for p in args.parsers.split(",") if p]:
        if label == "model":
            from barsym.llm.settings import ModelSettings
            from barsym.reasoning.calls.backends import backend_for

            backend = backend_for(ModelSettings(threads=args.threads, adapter=args.adapter))  # loaded before timing
        else:
            backend = make_stand_in(label)
        log = args.records.open("a", encoding="utf-8") if args.records else None
        rows.append(measure(label, ProseParser(kb, graph, backend), plans, validator, log))
        print(f"done: {rows[-1]}", file=sys.stderr, flush=True)
    steps = sum(len(p["expected"]) for p in plans)
    print(
        f"{len(plans)} prose plans ({steps} expert steps, {sum(len(p['open_counts']) for p in plans)} counts left "
        f"out) from {args.set.name}"
    )
    print("| parser | exact plans | steps right | steps right (counts given) | valid plans | calls / plan | s / plan |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['parser']} | {r['exact']}/{r['plans']} | {r['steps_right']:.1f} % | {r['steps_right_given']:.1f} % "
            f"| {r['valid']}/{r['plans']} | {r['calls_per_plan']:.1f} | {r['seconds_per_plan']:.2f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
