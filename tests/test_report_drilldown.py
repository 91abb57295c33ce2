"""``barsym report``'s per-task drill-down, depth table, intervals and shared-task comparison, from real runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import chromium, colour_count, needs_chromium
from tool_modules import tool

from barsym.eval import load_dataset
from barsym.eval.scale import run_evaluation
from barsym.eval.spec import RunSpec, WorldSpec
from barsym.report.parts import interval, rate_text
from barsym.report.tech_depth import goal_depth
from cli_run import run
from testdata import BAR_DIR

FAKE = "barsym.testing.fakes:facts_model"
TASKS = "cobblestone,stone_shovel,stone_pickaxe,furnace"


@pytest.fixture(scope="module")
def runs(kb, tmp_path_factory):
    """``barsym eval --dataset bar --planner symbolic`` on four tasks and on all 53 (real CLI runs, executed), and an
    ``llm-only`` run of the four with the scripted model, whose trusted answers make plans that fail."""
    folder = tmp_path_factory.mktemp("drill")
    small, whole, failing = folder / "symbolic.jsonl", folder / "symbolic53.jsonl", folder / "llm-only.jsonl"
    from barsym.cli import main

    for path, more in ((small, ["--tasks", TASKS]), (whole, [])):
        code = main(
            [
                "eval",
                "--dataset",
                "bar",
                "--planner",
                "symbolic",
                "--world",
                "stochastic",
                "--runs",
                "5",
                "--quiet",
                "--run",
                str(path),
                *more,
            ]
        )
        assert code == 0
    tasks = [t for t in load_dataset(BAR_DIR, kb) if t.name in TASKS.split(",")]
    run_evaluation(
        RunSpec("llm-only", rules="survival", backend=FAKE, world=WorldSpec("stochastic", 5)),
        tasks,
        kb,
        name="llm-only",
        dataset=str(BAR_DIR),
        run_path=failing,
    )
    return {"small": small, "whole": whole, "failing": failing}


def records(path: Path) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, path.read_text().splitlines()[1:])}


def drill(html: str, key: str) -> str:
    """The ``<details>`` element of one task."""
    match = re.search(rf'<details id="task-{re.escape(key)}">(.*?)</details>', html, re.S)
    assert match, key
    return match.group(1)


def test_wilson_interval_against_known_values():
    # Wilson's 95 % score interval (z = 1.959964): 5/10 -> 0.2366-0.7634, 0/10 -> 0-0.2775, 10/10 -> 0.7225-1,
    # 2/3 -> 0.2077-0.9385 (the published values for these counts)
    for (k, n), (low, high) in {
        (5, 10): (23.66, 76.34),
        (0, 10): (0.0, 27.75),
        (10, 10): (72.25, 100.0),
        (2, 3): (20.77, 93.85),
    }.items():
        got = interval(k, n)
        assert got[0] == pytest.approx(low, abs=0.01) and got[1] == pytest.approx(high, abs=0.01), (k, n, got)
    assert rate_text(5, 10) == "50.0 % [23.7-76.3] of 10" and rate_text(0, 0) == "-"


def test_tech_tree_depth_of_known_goals(kb):
    expected = {
        "logs": 1,
        "planks": 2,
        "crafting_table": 3,
        "wooden_pickaxe": 4,
        "cobblestone": 5,
        "stone_pickaxe": 6,
        "iron_ore": 7,
        "iron_ingot": 8,
        "iron_pickaxe": 9,
        "diamond": 10,
    }
    assert {item: goal_depth(kb, item, "survival") for item in expected} == expected
    assert goal_depth(kb, "beacon", "survival") is None and goal_depth(kb, "no_such_item", "survival") is None


def test_drill_down_shows_plans_diff_verdicts_and_execution_failures(capsys, runs, tmp_path):
    out = tmp_path / "report.html"
    code, stdout, err = run(capsys, "report", runs["small"], runs["failing"], "-o", out)
    assert code == 0 and err == "", err
    html = out.read_text()
    ours, failing = records(runs["small"]), records(runs["failing"])
    assert "Per task (4 tasks;" in html and html.count('<details id="task-') == 4
    # stone_shovel: the symbolic plan crafts 9 planks where the expert's crafts 11 -- one changed row in the diff
    shovel = drill(html, "stone/stone_shovel")
    assert (
        '<tr class="replace"><td class="n">2</td><td>craft 9 planks</td><td class="n">2</td>'
        "<td>craft 11 planks</td></tr>" in shovel
    )
    assert all(f"<td>{step}</td>" in shovel for step in ("mine 3 logs", "craft 1 stone_shovel"))
    assert len(ours["stone/stone_shovel"]["expert_plan"]) == 8  # the run file carries the expert plan
    assert "verdict: valid; expert plan: valid with waste" in shovel and "why they differ: the expert plan" in shovel
    # the failing run: its verdict, why, its runs (0 of 5) with their interval, and where they failed
    bad = failing["stone/stone_shovel"]
    assert bad["verdict"] == "invalid" and bad["execution"]["planner"]["successes"] == 0
    assert "verdict: invalid" in shovel and "barsym&#x27;s plan is invalid at step" in shovel
    assert "0/5 runs succeeded, 0.0 % [0.0-43.4] of 5" in shovel
    failure = bad["execution"]["planner"]["failures"][0]
    step = bad["plan"][failure["step"] - 1]
    assert (
        f"{failure['count']} failed at step {failure['step']} (craft {step['obj_num']} {step['obj_name']})"
        f": {failure['code']}" in shovel
    )
    assert "a typical failed run: " in shovel
    # the closed row: task, depth, one badge per run
    assert re.search(
        r'<div class="key">stone/stone_shovel</div><div>6</div><div><span class="badge ok">valid · '
        r'Acc 88 · runs \d/5</span></div><div><span class="badge bad">invalid',
        shovel,
    )
    # the model's acceptance rates, each with its interval, for the run that asked one
    assert re.search(r"<td>llm-only</td><td>(\d+)</td><td>[\d.]+ % \[[\d.]+-[\d.]+\] of \1</td>", html)
    # an exact plan says so
    assert "the plan is the expert plan, step for step" in drill(html, "stone/cobblestone")


def test_success_against_depth_with_intervals(capsys, runs, tmp_path):
    out = tmp_path / "report.html"
    assert run(capsys, "report", runs["whole"], "-o", out)[0] == 0
    html = out.read_text()
    assert "Success against tech-tree depth" in html and "95 % Wilson score interval" in html
    section = html[
        html.index("Success against tech-tree depth") : html.index("</section>", html.index("Success against"))
    ]
    rows = re.findall(r"<tr><td>(\d+)</td><td>symbolic</td><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td>", section)
    assert [int(d) for d, *_ in rows] == sorted(int(d) for d, *_ in rows) and len(rows) >= 5
    assert sum(int(n) for _, n, _, _ in rows) == 53  # every task in one depth row
    for _, n, executable, executed in rows:
        assert re.fullmatch(rf"[\d.]+ % \[[\d.]+-[\d.]+\] of {n}", executable)
        assert re.fullmatch(rf"[\d.]+ % \[[\d.]+-[\d.]+\] of {int(n) * 5}", executed)  # 5 runs per plan
    assert "Executable plans per tech-tree depth, %" in html and "Execution success per tech-tree depth, %" in html


def test_runs_are_compared_on_the_tasks_they_share(capsys, runs, tmp_path):
    out = tmp_path / "report.html"
    assert run(capsys, "report", runs["whole"], runs["failing"], "-o", out)[0] == 0
    html = out.read_text()
    assert "tasks per run: symbolic 53, llm-only 4); 4 task(s) are shared" in html
    assert "<td>symbolic</td><td>symbolic53.jsonl</td>" in html
    listing = re.search(
        r"<td>symbolic</td><td>symbolic53.jsonl</td><td>[^<]*</td><td>[^<]*</td><td><span[^>]*>[^<]*</span></td>"
        r"<td>(\d+)</td><td>(\d+)</td>",
        html,
    )
    assert listing.groups() == ("53", "4")
    # the comparing tables equal those of the four-task symbolic run: the other 49 tasks are left out
    alone = tmp_path / "alone.html"
    assert run(capsys, "report", runs["small"], runs["failing"], "-o", alone)[0] == 0

    def scores(text):
        return re.search(r"<th>planner</th><th>metric</th>.*?</table>", text, re.S).group(0)

    assert scores(html) == scores(alone.read_text())
    assert "Per task (53 tasks;" in html  # the per-task table still lists every task


def test_runs_without_a_shared_task_are_not_compared(tmp_path):
    from barsym.report.html_report import Run, render

    def record(key):
        return {
            "kind": "task",
            "key": key,
            "group": key.split("/")[0],
            "planned": True,
            "verdict": "valid",
            "seconds": 0.1,
            "goal": {"item": key.split("/")[1], "count": 1},
        }

    html = render(
        [
            Run("a", tmp_path / "a.jsonl", {"planner": "a", "spec": {}}, [record("stone/furnace")]),
            Run("b", tmp_path / "b.jsonl", {"planner": "b", "spec": {}}, [record("iron/bucket")]),
        ]
    )
    assert "no task in common (tasks per run: a 1, b 1)" in html and "do not compare" in html


def test_overwriting_the_report_is_one_line(capsys, runs, tmp_path):
    out = tmp_path / "report.html"
    code, _, err = run(capsys, "report", runs["small"], "-o", out)
    assert code == 0 and err == ""
    code, _, err = run(capsys, "report", runs["small"], "-o", out)
    assert code == 0 and err == f"barsym: overwrote {out} (it held an earlier report or another file)\n"


@needs_chromium
def test_drill_down_opened_in_headless_chromium(capsys, runs, tmp_path):
    """The page with one row opened (what a click does), photographed: no console error, the diff's colours shown."""
    opened_copy = tool("report_screenshot").opened_copy
    out = tmp_path / "report.html"
    assert run(capsys, "report", runs["small"], runs["failing"], "-o", out)[0] == 0
    page = opened_copy(out, "stone/stone_shovel", tmp_path / "opened.html")
    shot = tmp_path / "opened.png"
    lines = chromium(page, shot, height=1400)
    assert len(lines) == 1 and "barsym report:" in lines[0], lines
    assert colour_count(shot, "#fff4d6") > 2000  # the changed rows of the step diff
    assert colour_count(shot, "#f8d4d0") > 200  # the failing run's red badge
