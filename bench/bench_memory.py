"""Benchmark: BAR's stage memory (module c) with the ``bar`` planner and the embedded SmolLM2-135M.

    flock /tmp/barsym-bench.lock python bench/bench_memory.py [--dataset ../shared/datasets/bar_tech_tree]
        [--runs 50] [--eval-runs 100] [--threads 2] [--out DIR] [--json FILE]

Why one script: the issue's acceptance is three measurements that share their
passes (the plans ``bar`` makes without memory are the baseline of all three),
and a reviewer should rerun them with one command. Every number is printed
and, with ``--json``, written out; the memories are kept in ``--out``.

1. **Transfer.** Memory built from the stone, iron and gold tasks (each plan
   executed ``--runs`` times in the stochastic world, seed 0); the redstone and
   diamond tasks planned without and with it. LLM calls per task and on the
   goals the memory has (a goal with a remembered answer that passes the
   memory's bar: rate >= 0.5 over >= 5 runs), time per task, executable plans,
   Acc/F1, share of goals answered from memory, goals given close examples.
2. **The dynamic setting.** A memory of every task's ``bar`` plan, its
   ``llm-only`` plan (the model unchecked) and its plan by the ``symbolic``
   planner with the other choice where the game allows two (coal instead of
   charcoal for torches, red sand instead of sand): competing decompositions
   of the same goals, each executed ``--runs`` times; then all 53 tasks
   planned with it, and every plan, with and without memory, executed
   ``--eval-runs`` times with another seed (1), so the success rates are not
   the runs the memory learnt from. It lists the goals where different
   decompositions competed and which one the memory used.
3. **Warm memory.** The ``bar`` plans of all 53 tasks: ``barsym plan
   diamond_pickaxe --memory M`` in a fresh process, with its stats lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import evaluate, load_dataset  # noqa: E402
from barsym.eval.execution import task_seed  # noqa: E402
from barsym.kb import cache_dir, load_kb, rules_for  # noqa: E402
from barsym.llm import LlamaCppBackend, LLMOptions  # noqa: E402
from barsym.memory import MemoryStore, record, with_memory  # noqa: E402
from barsym.memory.stats import MemoryStats  # noqa: E402
from barsym.planner import make_planner  # noqa: E402
from barsym.planner.stats import PlanStats  # noqa: E402
from barsym.reasoning.planners.backward.llm_planners import STATE_DIR  # noqa: E402
from barsym.sim.execution import run as run_plan  # noqa: E402
from barsym.sim.stochastic import StochasticWorld  # noqa: E402

TRAIN, TEST = ("stone", "iron", "gold"), ("redstone", "diamond")
THRESHOLD, MIN_RUNS = 0.5, 5


class CallCounter:
    """Sits between the memory decomposer and the LLM decomposer and counts real model calls per goal."""

    def __init__(self, inner, llm):
        self.inner, self.llm, self.name = inner, llm, inner.name
        self.calls: Counter = Counter()

    def decompose(self, goal, context):
        if self.llm is None:
            return self.inner.decompose(goal, context)
        before = self.llm.stats.llm_calls
        try:
            return self.inner.decompose(goal, context)
        finally:
            self.calls[(goal.item, goal.count)] += self.llm.stats.llm_calls - before

    def __getattr__(self, name):
        return getattr(self.inner, name)


@dataclass
class Row:
    """One task of one pass: the outcome, its model calls per goal, and its runs."""

    key: str
    outcome: object
    goal_calls: Counter
    successes: int = 0
    runs: int = 0

    @property
    def stats(self) -> PlanStats:
        return self.outcome.result.stats if self.outcome.result is not None else PlanStats()

    @property
    def memory(self) -> MemoryStats:
        return self.stats.section(MemoryStats) or MemoryStats()


@dataclass
class Pass:
    label: str
    evaluation: object
    rows: list[Row] = field(default_factory=list)


def plan_pass(label, kb, planner, tasks, memory=None, record_into=(), world=None, runs=0, seed=0) -> Pass:
    """Plan ``tasks`` (memory answering first if given); execute and record each plan right after it is made."""
    planner = with_memory(planner, kb, memory)
    llm = getattr(planner.planner, "decomposer", None)  # the LLM planners' decomposer; the symbolic one has none
    counter = CallCounter(planner.memory.inner, llm if hasattr(getattr(llm, "stats", None), "llm_calls") else None)
    planner.memory.inner = counter
    done = Pass(label, None)
    started = time.perf_counter()

    def finished(number, total, outcome):
        row = Row(outcome.task.key, outcome, Counter(counter.calls))
        counter.calls.clear()
        result = outcome.result
        if result is not None and world is not None and runs:
            seeded = task_seed(seed, outcome.task.key)
            execution = run_plan(result.plan, world, runs, seeded, goal=outcome.task.goal)
            row.successes, row.runs = execution.successes, execution.runs
            for store in record_into:
                record(
                    store, outcome.task.key, result, planner.memory, [(world.name, seeded, runs, execution.successes)]
                )
        done.rows.append(row)
        s = row.stats
        print(
            f"  {label} [{number:>2}/{total}] {outcome.task.key:<30} {outcome.seconds:6.2f} s "
            f"{s.model.llm_calls:>3} calls, {row.memory.hits:>3} from memory",
            file=sys.stderr,
            flush=True,
        )

    print(f"{label}: {len(tasks)} tasks", file=sys.stderr)
    done.evaluation = evaluate(tasks, planner, kb, name=label, progress=finished)
    print(f"{label}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return done


def execute(p: Pass, world, runs: int, seed: int) -> tuple[int, int]:
    """Successes and runs of every plan of the pass in fresh worlds (``seed``: not the runs the memory saw)."""
    ok = total = 0
    for row in p.rows:
        total += runs
        if row.outcome.result is not None:
            ok += run_plan(
                row.outcome.result.plan, world, runs, task_seed(seed, row.key), goal=row.outcome.task.goal
            ).successes
    return ok, total


def remembered(store: MemoryStore) -> set[tuple[str, int]]:
    """Goals with a remembered answer that passes the memory's bar."""
    return {g for g in store.goals() if any(c.runs >= MIN_RUNS and c.rate >= THRESHOLD for c in store.candidates(*g))}


def summary(p: Pass, known: set | None = None) -> dict:
    rows, n = p.rows, len(p.rows)
    seconds = [r.outcome.seconds for r in rows]
    hits = sum(r.memory.hits for r in rows)
    asked = hits + sum(r.memory.misses for r in rows)
    overall = p.evaluation.overall()
    calls = sum(r.stats.model.llm_calls for r in rows)
    out = {
        "tasks": n,
        "llm_calls": calls,
        "llm_calls_per_task": round(calls / n, 2),
        "seconds_per_task": {
            "median": round(statistics.median(seconds), 3),
            "mean": round(statistics.fmean(seconds), 3),
            "max": round(max(seconds), 3),
        },
        "executable": sum(r.outcome.result is not None and r.outcome.result.validation.valid for r in rows),
        "acc": round(overall.accuracy, 2),
        "f1": round(overall.f1, 2),
        "goals": asked,
        "from_memory": hits,
        "memory_share": round(hits / asked, 4) if asked else 0.0,
        "goals_with_examples": sum(r.memory.examples for r in rows),
        "stale": sum(r.memory.stale for r in rows),
    }
    if known is not None:
        out["calls_on_remembered_goals"] = sum(c for r in rows for g, c in r.goal_calls.items() if g in known)
    return out


def competitions(store: MemoryStore, used: Pass) -> list[dict]:
    """Goals with two or more different remembered answers (step and subgoals), and which one the memory used."""
    chosen = {}
    for row in used.rows:
        for node in row.outcome.result.nodes if row.outcome.result else []:
            d = node.decomposition
            if d is not None and d.provenance == "memory":
                chosen[(node.goal.item, node.goal.count)] = (str(d.step), [(g.item, g.count) for g in d.subgoals])
    out = []
    for goal in store.goals():
        answers = {}
        for c in store.candidates(*goal):
            r = c.record
            if c.runs < MIN_RUNS or (r.yields is not None and r.yields < (r.step.get("count") or 0)):
                continue  # too few runs, or an answer from spare units: it applies only when they are there
            key = json.dumps([r.step, r.subgoals], sort_keys=True)
            best = answers.get(key)
            if best is None or c.rate > best.rate:
                answers[key] = c
        if len(answers) < 2:
            continue
        ranked = sorted(answers.values(), key=lambda c: -c.rate)
        out.append(
            {
                "goal": f"{goal[1]} {goal[0]}",
                "used": chosen.get(goal),
                "answers": [
                    {
                        "step": c.record.step,
                        "subgoals": c.record.subgoals,
                        "successes": c.successes,
                        "runs": c.runs,
                        "rate": round(c.rate, 3),
                        "provenance": c.record.provenance,
                    }
                    for c in ranked
                ],
            }
        )
    return out


def fresh_runs(base: Pass, other: Pass, chosen: Pass, world, runs: int) -> list[dict]:
    """Tasks whose other-choice plan differs from bar's: both run ``runs`` times in fresh worlds, and the memory's pick."""
    steps = lambda row: [str(s) for s in row.outcome.result.plan.steps] if row.outcome.result else None  # noqa: E731
    mine = {row.key: row for row in base.rows}
    picked = {row.key: row for row in chosen.rows}
    out = []
    for row in other.rows:
        ours = mine.get(row.key)
        if ours is None or steps(ours) == steps(row) or row.outcome.result is None:
            continue

        def rate(r):
            return run_plan(r.outcome.result.plan, world, runs, task_seed(1, r.key), goal=r.outcome.task.goal).successes

        out.append(
            {
                "task": row.key,
                "bar": rate(ours),
                "other_choice": rate(row),
                "runs": runs,
                "with_memory_is": "bar's"
                if steps(picked[row.key]) == steps(ours)
                else "the other choice"
                if steps(picked[row.key]) == steps(row)
                else "neither",
            }
        )
    return out


def warm_cli(memory: Path, threads: int, planner: str) -> dict:
    """``barsym plan diamond_pickaxe --memory M`` in a fresh process; its LLM and memory lines."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "barsym.cli",
            "plan",
            "diamond_pickaxe",
            "--memory",
            str(memory),
            "--threads",
            str(threads),
            "--planner",
            planner,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("Plan for", "LLM", "memory:", "tokens:"))]
    return {
        "exit": proc.returncode,
        "seconds": round(time.perf_counter() - started, 2),
        "lines": lines,
        "stderr": proc.stderr.strip()[-300:],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--runs", type=int, default=50, help="stochastic runs per plan recorded into the memories")
    parser.add_argument("--eval-runs", type=int, default=100, help="stochastic runs per plan for the success rates")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/barsym-bench-memory"), help="folder for the memories")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--planner",
        choices=["bar", "symbolic"],
        default="bar",
        help="symbolic: the same passes without the model (a quick check; no llm-only pass)",
    )
    parser.add_argument("--per-group", type=int, help="only the first N tasks of each group (a quick check)")
    args = parser.parse_args()

    kb = load_kb()
    tasks = load_dataset(args.dataset, kb)
    if args.per_group:
        tasks = [t for t in tasks if [u.group for u in tasks[: tasks.index(t)]].count(t.group) < args.per_group]
    train = [t for t in tasks if t.group in TRAIN]
    test = [t for t in tasks if t.group in TEST]
    world = StochasticWorld(kb, rules_for(kb, None))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("train.sqlite", "all.sqlite", "mixed.sqlite"):
        for suffix in ("", "-wal", "-shm"):
            (args.out / (name + suffix)).unlink(missing_ok=True)
    m_train, m_all, m_mixed = (MemoryStore(args.out / n) for n in ("train.sqlite", "all.sqlite", "mixed.sqlite"))
    model = args.planner == "bar"
    backend = (
        LlamaCppBackend(None, options=LLMOptions(n_threads=args.threads, n_ctx=2048), state_dir=cache_dir() / STATE_DIR)
        if model
        else None
    )
    bar = lambda: make_planner(args.planner, kb, backend=backend, log=False)  # noqa: E731
    if model:  # the few-shot prefix once, before any timing (from the cache folder when it is there)
        print(f"prefix: {backend.prime(list(bar().decomposer.prompts.prefix))}", file=sys.stderr)
    print(f"load average {os.getloadavg()[0]:.2f}", file=sys.stderr)

    # 1. transfer: bar's plans of the train tasks go into the train memory (and into the other two)
    build = plan_pass("build stone/iron/gold", kb, bar(), train, None, (m_train, m_all, m_mixed), world, args.runs, 0)
    known = remembered(m_train)
    cold = plan_pass("redstone/diamond without memory", kb, bar(), test, None, (m_all, m_mixed), world, args.runs, 0)
    warm = plan_pass("redstone/diamond with memory", kb, bar(), test, m_train)
    transfer = {
        "train_memory": m_train.counts(),
        "remembered_goals": len(known),
        "without": summary(cold, known),
        "with": summary(warm, known),
        "executable_whole_set": summary(build)["executable"] + summary(warm)["executable"],
        "tasks": len(tasks),
    }
    a, b = transfer["without"]["calls_on_remembered_goals"], transfer["with"]["calls_on_remembered_goals"]
    transfer["fewer_calls_on_remembered_goals_pct"] = round(100 * (a - b) / a, 1) if a else None

    # 2. the dynamic setting: llm-only's decompositions compete in the mixed memory
    if model:
        plan_pass(
            "llm-only (competitors)",
            kb,
            make_planner("llm-only", kb, backend=backend, log=False),
            tasks,
            None,
            (m_mixed,),
            world,
            args.runs,
            0,
        )
    other = tuple(name for name in ("coal", "red_sand") if name not in kb.prefer)  # the other choice of torch, glass
    others = plan_pass(
        "symbolic, other choices (competitors)",
        kb,
        make_planner("symbolic", kb, prefer=other),
        tasks,
        None,
        (m_mixed,),
        world,
        args.runs,
        0,
    )
    with_mixed = plan_pass("all 53 with the mixed memory", kb, bar(), tasks, m_mixed)
    with_all = plan_pass("all 53 with the bar memory", kb, bar(), tasks, m_all)
    no_memory = Pass("without memory", None, build.rows + cold.rows)
    dynamic = {"mixed_memory": m_mixed.counts(), "eval_runs": args.eval_runs, "eval_seed": 1}
    for label, p in (("without", no_memory), ("with_mixed", with_mixed), ("with_bar", with_all)):
        ok, total = execute(p, world, args.eval_runs, 1)
        dynamic[label] = {
            "successes": ok,
            "runs": total,
            "rate": round(ok / total, 4),
            "executable": sum(r.outcome.result is not None and r.outcome.result.validation.valid for r in p.rows),
        }
    dynamic["with_mixed"].update(summary(with_mixed))
    dynamic["with_bar"].update(summary(with_all))
    dynamic["competitions"] = competitions(m_mixed, with_mixed)
    dynamic["other_choice_plans"] = fresh_runs(no_memory, others, with_mixed, world, args.eval_runs)

    # 3. a warm memory over all 53 tasks
    diamond = next((r for r in with_all.rows if r.key.endswith("/diamond_pickaxe")), None)
    report = {
        "planner": args.planner,
        "runs": args.runs,
        "transfer": transfer,
        "dynamic": dynamic,
        "warm": {
            "in_process": {k: diamond.stats.to_dict().get(k) for k in ("llm_calls", "memory_hits", "memory_misses")}
            if diamond
            else None,
            "cli": warm_cli(args.out / "all.sqlite", args.threads, args.planner),
        },
        "load_average_end": round(os.getloadavg()[0], 2),
    }
    for store in (m_train, m_all, m_mixed):
        store.close()
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def print_report(r: dict) -> None:
    t, d, w = r["transfer"], r["dynamic"], r["warm"]
    tasks = range(t["tasks"])
    print(f"1. transfer: memory from stone/iron/gold, planning redstone/diamond with the {r['planner']} planner")
    print(f"   train memory: {t['train_memory']['plans']} plans, {t['remembered_goals']} goals remembered")
    for label in ("without", "with"):
        s = t[label]
        print(
            f"   {label:<8} memory: {s['llm_calls_per_task']:5.1f} LLM calls/task ({s['calls_on_remembered_goals']} "
            f"on remembered goals), {s['seconds_per_task']['median']:.2f} s/task median "
            f"({s['seconds_per_task']['mean']:.2f} mean), executable {s['executable']}/{s['tasks']}, Acc "
            f"{s['acc']:.2f}, F1 {s['f1']:.2f}, from memory {100 * s['memory_share']:.1f} % of {s['goals']} goals, "
            f"{s['goals_with_examples']} goals given close examples"
        )
    print(
        f"   LLM calls on remembered goals: {t['fewer_calls_on_remembered_goals_pct']} % fewer (target >= 80 %); "
        f"executable over the whole set: {t['executable_whole_set']}/{t['tasks']}"
    )
    print(f"2. dynamic setting: {d['eval_runs']} stochastic runs per plan, seed {d['eval_seed']}")
    for label in ("without", "with_mixed", "with_bar"):
        s = d[label]
        print(
            f"   {label:<10}: {s['successes']}/{s['runs']} runs succeeded ({100 * s['rate']:.1f} %), "
            f"executable {s['executable']}/{len(tasks)}"
            + (
                f", {100 * s['memory_share']:.1f} % of goals from memory, {s['llm_calls_per_task']:.1f} LLM calls/task"
                if "memory_share" in s
                else ""
            )
        )
    print(f"   goals with competing decompositions in the mixed memory: {len(d['competitions'])}")
    for c in d["competitions"][:3]:
        print(f"     {c['goal']}: used {c['used']}")
        for a in c["answers"]:
            subs = ", ".join(f"{g['count']} {g['item']}" for g in a["subgoals"])
            print(
                f"       {a['step']['type']} {a['step'].get('count', '')} {a['step'].get('item', '')}: {subs} -- "
                f"{a['successes']}/{a['runs']} ({a['provenance']})"
            )
    for t in d["other_choice_plans"]:
        print(
            f"   {t['task']}: bar's plan {t['bar']}/{t['runs']}, the other choice {t['other_choice']}/{t['runs']} in "
            f"fresh runs; the plan made with memory is {t['with_memory_is']}"
        )
    print(f"3. warm memory, in process: diamond_pickaxe {w['in_process']}")
    print(f"   barsym plan diamond_pickaxe --memory M (exit {w['cli']['exit']}, {w['cli']['seconds']} s):")
    for line in w["cli"]["lines"]:
        print(f"     {line}")


if __name__ == "__main__":
    sys.exit(main())
