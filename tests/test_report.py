"""``barsym report``: one self-contained HTML file from run files, checked in a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from barsym.eval import load_dataset
from barsym.eval.scale import run_evaluation
from barsym.eval.spec import RunSpec, WorldSpec
from barsym.report.svg import PALETTE
from cli_run import run
from testdata import BAR_DIR

FAKE = "barsym.testing.fakes:facts_model"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium)"
)


@pytest.fixture(scope="module")
def run_files(kb, tmp_path_factory):
    """Run files of three planners on a third of BAR's tasks (a scripted model for the LLM planners)."""
    folder = tmp_path_factory.mktemp("runs")
    tasks = load_dataset(BAR_DIR, kb)[::3]
    files = []
    for spec in (
        RunSpec("symbolic", rules="survival", world=WorldSpec("stochastic", 5)),
        RunSpec("bar", rules="survival", backend=FAKE, world=WorldSpec("stochastic", 5)),
        RunSpec("llm-only", rules="survival", backend=FAKE),
    ):
        path = folder / f"{spec.planner}.jsonl"
        run_evaluation(spec, tasks, kb, name=spec.planner, dataset=str(BAR_DIR), run_path=path)
        files.append(path)
    return files


def console_lines(stderr: str) -> list[str]:
    """Everything the page said on its console (Chromium logs every level, and uncaught errors, this way)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def chromium(page: Path, screenshot: Path, height: int = 1200) -> list[str]:
    """Debian's headless Chromium on ``page`` with a fresh profile and nothing fetched in the background."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                f"--window-size=1200,{height}",
                f"--screenshot={screenshot}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert screenshot.is_file(), done.stderr[-2000:]
    return console_lines(done.stderr)


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG, decoded here (no imaging library)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                best = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))[2]
                line[i] = (line[i] + best) & 255
        rows.append(bytes(line))
        previous = line
    return width, channels, rows


def colour_count(path: Path, hex_colour: str) -> int:
    _, channels, rows = png_pixels(path)
    target = bytes.fromhex(hex_colour.lstrip("#"))
    return sum(sum(1 for x in range(0, len(row), channels) if row[x : x + 3] == target) for row in rows)


def test_report_is_one_self_contained_file(capsys, run_files, tmp_path):
    out = tmp_path / "report.html"
    code, stdout, err = run(capsys, "report", *run_files, "-o", out)
    assert code == 0 and err == "" and "3 run(s)" in stdout
    html = out.read_text()
    assert not re.search(r"""(?:src|href)\s*=|@import|url\(""", html)  # nothing fetched from anywhere
    assert html.count("<svg") >= 7 and "<script src" not in html
    for words in (
        "AccuracyHard per group",
        "F1ScoreHard",
        "Executable plans",
        "LLM calls per task",
        "symbolic fallback",
        "Seconds per task",
        "Success in the stochastic world",
        "llm-only",
    ):
        assert words in html
    # the table rows per planner, groups in the paper's order
    head = re.search(r"<th>planner</th><th>metric</th>(.*?)</tr>", html).group(1)
    assert re.findall(r"<th>(.*?)</th>", head) == ["stone", "iron", "gold", "redstone", "diamond", "all"]


def test_bad_report_input_is_one_line_exit_2(capsys, run_files, tmp_path):
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"type": "craft", "obj_name": "stick", "obj_num": 4}\n')
    for argv, words in (
        ([plan], "not a barsym run file"),
        ([tmp_path / "none.jsonl"], "no such run file"),
        ([run_files[0], "-o", tmp_path / "no" / "dir" / "r.html"], "-o"),
    ):
        code, out, err = run(capsys, "report", *argv)
        assert code == 2 and out == "" and words in err and err.count("\n") == 1


@needs_chromium
def test_console_capture_sees_errors(tmp_path):
    """The check below is only worth something if a broken page fails it."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><script>console.error('boom'); missing();</script></body></html>")
    lines = chromium(page, tmp_path / "broken.png")
    assert any("boom" in line for line in lines) and any("missing is not defined" in line for line in lines)


@needs_chromium
def test_report_in_headless_chromium(capsys, run_files, tmp_path):
    out = tmp_path / "report.html"
    assert run(capsys, "report", *run_files, "-o", out)[0] == 0
    shot = tmp_path / "report.png"
    lines = chromium(out, shot, height=3600)
    # the page's own log line is the only thing on its console: no error, no warning, no failed load
    assert len(lines) == 1 and re.search(r'"barsym report: (\d+) charts"', lines[0]), lines
    assert int(re.search(r"(\d+) charts", lines[0]).group(1)) >= 7
    # the screenshot shows the charts: bars in each planner's colour
    for colour in PALETTE[:3]:
        assert colour_count(shot, colour) > 2000, colour


def test_deps_rounds_and_step_score_agreement_where_the_records_have_them(tmp_path):
    from barsym.report.html_report import Run, render

    def record(key, stats):
        return {
            "kind": "task",
            "key": key,
            "group": key.split("/")[0],
            "planned": True,
            "verdict": "valid",
            "seconds": 0.5,
            "stats": stats,
        }

    deps = Run(
        "deps",
        tmp_path / "deps.jsonl",
        {"planner": "deps", "spec": {}},
        [
            record("stone/a", {"deps": {"rounds": 1, "success_round": 1}}),
            record("iron/b", {"deps": {"rounds": 3, "success_round": 3}}),
            record("iron/c", {"deps": {"rounds": 3, "success_round": None}}),
        ],
    )
    sc = Run(
        "bar-sc",
        tmp_path / "sc.jsonl",
        {"planner": "bar-sc", "spec": {}},
        [
            record(
                "stone/a",
                {
                    "consistency": {
                        "valid_before": False,
                        "valid_after": True,
                        "repaired_steps": 2,
                        "step_scores": {"simulator": [10, 4, 10, 10], "llm": [10, 9, 10, 3]},
                    }
                },
            )
        ],
    )
    html = render([deps])  # apart: together they would be compared on the one task they share
    assert "DEPS rounds" in html and "Success within N rounds (DEPS), %" in html
    assert "<td>deps</td><td>3</td><td>2.33</td><td>3</td><td>66.7 % [20.8-93.9] of 3</td>" in html
    html = render([sc])
    assert "50.0 % of 4 steps" in html and "<td>bar-sc</td><td>1</td><td>1</td><td>1</td><td>2</td>" in html
