"""The numbers of README and docs/results, rendered from the run files they come from.

    PYTHONPATH=src python tools/doc_numbers.py           # check: one line per number that disagrees, exit 1
    PYTHONPATH=src python tools/doc_numbers.py --write   # write every declared table and number again

Why: a number typed into a page drifts from its run file (issue 54 found CoT with the shipped adapter
at 46/53, 36/53 and 34/53 on three pages). Here every declared number is made from a run file
(``docs/results/runs``, plain or ``.jsonl.gz``), and ``tests/test_doc_numbers.py`` fails when a page
says something else, so a page changes only with the run it reports.

Two ways a page declares numbers:

1. **A table** (a block of lines): the page holds

       <!-- numbers: NAME -->
       ... lines this tool writes ...
       <!-- /numbers: NAME -->

   and :data:`TABLES` maps ``NAME`` to a :class:`Table`: the page it is on, and ``render``, a function of
   no arguments returning the block's lines (as one string) made from run files. A table that is a whole
   page (``docs/results/bar-table.md``, written by ``bench/bar_table.py``) is declared with
   ``whole_page=True`` and no markers. To add a table: write its render function here (read run files with
   :func:`run_file`/:func:`load`), add ``NAME: Table(page, render)`` to :data:`TABLES`, put the two
   markers in the page and run ``--write``.

2. **A number in a sentence or a cell**: ``<!--n RUN FIELD-->46 / 53<!--/n-->``. ``RUN`` names a run file
   under ``docs/results/runs`` without its suffix (``s5j-cot-bar53``, ``bar-table/cot.taught``), ``FIELD``
   one of :data:`FIELDS` (``executable`` "46 / 53", ``executable-short`` "46/53", ``acc``, ``f1``, ``ed``
   over all tasks, ``mean-acc`` the mean of BAR's five groups' Acc as BAR's table shows it, ``exact``,
   ``median-s``, ``max-s``, ``round-0``, ...). To add a field: one function of a :class:`Numbers` in :data:`FIELDS`. The comments do
   not show when the markdown is rendered.

3. **An AUC of a step-score bench**: ``<!--auc FILE METHOD-->0.994<!--/auc-->``. ``FILE`` names a JSON that
   ``bench/bench_step_scores.py --json`` wrote, under ``docs/results`` without its suffix
   (``knows/recall-check-labelled``, plain or ``.json.gz``); ``METHOD`` the row's method as the bench names
   it (``recall-check``, ``rule: tool held, something to use``); the text is its AUC to three places.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import importlib.util
import re
import shlex
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "docs" / "results" / "runs"
#: the pages whose inline numbers (``<!--n ...-->``) are checked: README and every page under docs/
PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")))
#: BAR's five groups (the mean of their Acc is what BAR's table shows)
GROUPS = ("stone", "iron", "gold", "diamond", "redstone")


@dataclass(frozen=True)
class Table:
    page: str  # relative to the repository
    render: Callable[[], str]
    whole_page: bool = False


def run_file(name: str) -> Path:
    """``docs/results/runs/NAME.jsonl.gz``, or ``NAME.jsonl`` where only the plain file is there."""
    for suffix in (".jsonl.gz", ".jsonl"):
        path = RUNS / f"{name}{suffix}"
        if path.is_file():
            return path
    raise LookupError(f"no run file docs/results/runs/{name}.jsonl(.gz)")


@dataclass
class Numbers:
    """What the fields read from one run file: its records (a resumed task counted once) and scores."""

    records: list[dict]
    scores: dict

    @property
    def seconds(self) -> list[float]:
        return [float(r.get("seconds", 0.0)) for r in self.records]

    def all(self):
        from barsym.eval.runner import ALL

        return self.scores[ALL]

    def stat(self, key: str) -> int:
        """A model counter summed over the tasks (``accepted_first_try``, ``llm_goals``, ``fallbacks``)."""
        return sum(int((r.get("stats") or {}).get(key) or 0) for r in self.records)

    def deps_successes(self) -> int:
        """DEPS episodes that reached the goal in some round."""
        return sum(((r.get("stats") or {}).get("deps") or {}).get("success_round") is not None for r in self.records)

    def executable(self) -> int:
        """Plans the validator lets run (valid, or valid with waste), as ``barsym eval`` counts them."""
        return sum(1 for r in self.records if r.get("planned") and r.get("verdict") not in (None, "invalid"))

    def rounds(self, n: int) -> int:
        return sum(1 for r in self.records if _deps(r).get("success_round") == n and r.get("verdict") == "valid")


def _deps(record: dict) -> dict:
    stats = record.get("stats")
    deps = stats.get("deps") if isinstance(stats, dict) else None
    return deps if isinstance(deps, dict) else {}


@functools.cache
def load(name: str) -> Numbers:
    from barsym.report.html_report import load_runs

    run = load_runs([run_file(name)])[0]
    return Numbers(run.records, run.scores())


#: field -> its text from a run file's numbers
FIELDS: dict[str, Callable[[Numbers], str]] = {
    "executable": lambda n: f"{n.executable()} / {len(n.records)}",
    "executable-short": lambda n: f"{n.executable()}/{len(n.records)}",
    "mean-acc": lambda n: f"{statistics.fmean(round(n.scores[g].accuracy, 2) for g in GROUPS if g in n.scores):.2f}",
    "tasks": lambda n: str(len(n.records)),
    "acc": lambda n: f"{n.all().accuracy:.2f}",
    "f1": lambda n: f"{n.all().f1:.2f}",
    "ed": lambda n: f"{n.all().edit_distance:.2f}",
    "exact": lambda n: str(sum(bool(r.get("matches_expert")) for r in n.records)),
    "median-s": lambda n: f"{statistics.median(n.seconds):.1f}",
    "max-s": lambda n: f"{max(n.seconds):.1f}",
    "first-try": lambda n: f"{n.stat('accepted_first_try')} / {n.stat('llm_goals')}",
    "first-try-pct": lambda n: f"{100 * n.stat('accepted_first_try') / max(1, n.stat('llm_goals')):.1f} %",
    "fallbacks": lambda n: str(n.stat("fallbacks")),
    "deps-success": lambda n: f"{n.deps_successes()} / {len(n.records)}",
    "round-0": lambda n: str(n.rounds(0)),
    "round-1": lambda n: str(n.rounds(1)),
}


def _bar_table() -> str:
    """``docs/results/bar-table.md`` again from its run files, with the command the page says made it."""
    page = (ROOT / "docs" / "results" / "bar-table.md").read_text(encoding="utf-8")
    found = re.search(r"Made by `bench/bar_table.py` \(`(.*?)`\); each row", page)
    if found is None:
        raise LookupError("docs/results/bar-table.md: no 'Made by `bench/bar_table.py` (`ARGS`)' line")
    spec = importlib.util.spec_from_file_location("bar_table", ROOT / "bench" / "bar_table.py")
    assert spec is not None and spec.loader is not None
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    argv = shlex.split(found.group(1))
    if "--no-run" not in argv:
        raise LookupError("docs/results/bar-table.md: its command must have --no-run (made from run files alone)")
    args = table.parse_args(argv)
    args.runs = ROOT / args.runs if not args.runs.is_absolute() else args.runs
    text, _, _ = table.build(args)
    return text.replace(str(args.runs), " ".join(argv[argv.index("--runs") + 1 : argv.index("--runs") + 2]))


#: every declared table: name -> where it is and how it is made (see the module's docstring)
TABLES: dict[str, Table] = {
    "bar-table": Table("docs/results/bar-table.md", _bar_table, whole_page=True),
}

INLINE = re.compile(r"<!--n ([\w./-]+) ([\w-]+)-->(.*?)<!--/n-->")
AUC = re.compile(r"<!--auc ([\w./-]+) ([^>]+?)-->(.*?)<!--/auc-->")


@functools.cache
def bench_rows(name: str) -> dict[str, dict]:
    """The rows of ``docs/results/NAME.json(.gz)`` (a step-score bench's ``--json``), by method."""
    import gzip
    import json

    for suffix, opener in ((".json.gz", gzip.open), (".json", open)):
        path = ROOT / "docs" / "results" / f"{name}{suffix}"
        if path.is_file():
            with opener(path, "rt", encoding="utf-8") as f:
                return {row["method"]: row for row in json.load(f)["rows"]}
    raise LookupError(f"no bench file docs/results/{name}.json(.gz)")


def auc(m: re.Match[str]) -> str:
    name, method = m.group(1), m.group(2)
    row = bench_rows(name).get(method)
    if row is None:
        raise LookupError(f"docs/results/{name}: no row of method {method!r}; it has {', '.join(bench_rows(name))}")
    return f"<!--auc {name} {method}-->{row['auc']:.3f}<!--/auc-->"


def block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- numbers: {re.escape(name)} -->\n)(.*?)(<!-- /numbers: {re.escape(name)} -->)", re.S)


def rendered(page: str, text: str, tables: dict[str, Table]) -> str:
    """``text`` (the page ``page``) with every declared table and inline number made again."""
    for name, table in tables.items():
        if table.page != page:
            continue
        if table.whole_page:
            text = table.render()
            continue
        pattern = block(name)
        if not pattern.search(text):
            raise LookupError(f"{page}: no '<!-- numbers: {name} -->' block (TABLES declares one there)")
        body = table.render().rstrip("\n") + "\n"
        text = pattern.sub(lambda m, body=body: m.group(1) + body + m.group(3), text)

    def inline(m: re.Match[str]) -> str:
        run, field = m.group(1), m.group(2)
        if field not in FIELDS:
            raise LookupError(f"{page}: unknown field {field!r} in '{m.group(0)}'; known: {', '.join(FIELDS)}")
        return f"<!--n {run} {field}-->{FIELDS[field](load(run))}<!--/n-->"

    return AUC.sub(auc, INLINE.sub(inline, text))


def disagreements(
    read: Callable[[str], str] | None = None, tables: dict[str, Table] | None = None, pages=None
) -> list[str]:
    """One line per page whose numbers are not what its run files give (empty: every number agrees)."""
    read = read or (lambda page: (ROOT / page).read_text(encoding="utf-8"))
    tables = TABLES if tables is None else tables
    out = []
    for page in sorted({*(pages or PAGES), *(t.page for t in tables.values())}):
        text = read(page)
        want = rendered(page, text, tables)
        if want != text:
            first = next(
                (f"{a!r} where the run files give {b!r}" for a, b in _changed(_shown(text), _shown(want))),
                "lines differ",
            )
            out.append(f"{page}: {first}; rerun `python tools/doc_numbers.py --write` after the run that changed it")
    return out


def _shown(text: str) -> str:
    """A page as a reader sees it: each inline number without its markers."""
    return AUC.sub(lambda m: m.group(3), INLINE.sub(lambda m: m.group(3), text))


def _changed(old: str, new: str):
    """(old line, new line) pairs of the first change, word by word within a line."""
    a, b = old.splitlines(), new.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            x, y = " ".join(a[i1:i2]), " ".join(b[j1:j2])
            wa, wb = x.split(" "), y.split(" ")
            for t, k1, k2, l1, l2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
                if t != "equal":
                    yield " ".join(wa[k1:k2]), " ".join(wb[l1:l2])
                    return


def write(tables: dict[str, Table] | None = None) -> list[str]:
    """Every page with declared numbers written again from its run files; the pages that changed."""
    tables = TABLES if tables is None else tables
    changed = []
    for page in sorted({*PAGES, *(t.page for t in tables.values())}):
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        want = rendered(page, text, tables)
        if want != text:
            path.write_text(want, encoding="utf-8")
            changed.append(page)
    return changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="write the declared numbers again (default: check them)")
    args = p.parse_args(argv)
    try:
        if args.write:
            for page in write():
                print(f"wrote {page}")
            return 0
        problems = disagreements()
    except LookupError as exc:
        print(f"doc_numbers: {exc.args[0]}", file=sys.stderr)
        return 2
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
