"""Make the docs' picture of ``barsym report``'s per-task drill-down (docs/results/report-drilldown.png).

    PYTHONPATH=src python tools/report_screenshot.py [OUT.png]

Three real runs of BAR's tasks, written the way ``barsym eval --run`` writes
them: ``symbolic`` on all 53 tasks, ``bar`` and ``llm-only`` (both with the
scripted stand-in model ``barsym.testing.fakes:facts_model``; ``llm-only``
trusts its answers, so most of its plans fail) on six of them, each executed
10 times in the stochastic world. ``barsym report`` makes the page; the copy
that is photographed differs from it in two ways only, both said here: one
task's row is opened (the ``open`` attribute a click sets) and the aggregate
sections are hidden, so that the per-task table is on screen. Debian's
headless Chromium takes the picture.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]
SHOWN = ("cobblestone", "stone_shovel", "stone_pickaxe", "iron_pickaxe", "furnace", "diamond")
OPENED = "stone/stone_shovel"


def make_runs(folder: Path) -> list[Path]:
    from barsym.eval import load_dataset, resolve_dataset
    from barsym.eval.scale import run_evaluation
    from barsym.eval.spec import RunSpec, WorldSpec
    from barsym.kb import load_kb

    kb = load_kb()
    path, _ = resolve_dataset("bar")
    tasks = load_dataset(path, kb)
    chosen = [t for t in tasks if t.name in SHOWN]
    fake = "barsym.testing.fakes:facts_model"
    files = []
    for spec, these in (
        (RunSpec("llm-only", rules="survival", backend=fake, world=WorldSpec("stochastic", 10)), chosen),
        (RunSpec("symbolic", rules="survival", world=WorldSpec("stochastic", 10)), tasks),
        (RunSpec("bar", rules="survival", backend=fake, world=WorldSpec("stochastic", 10)), chosen),
    ):
        run = folder / f"{spec.planner}.jsonl"
        run_evaluation(spec, these, kb, name=spec.planner, dataset=str(path), run_path=run)
        files.append(run)
    return files


def opened_copy(page: Path, key: str, out: Path) -> Path:
    """The page with ``key``'s row opened and the aggregate sections hidden (see the module's docstring)."""
    html = page.read_text(encoding="utf-8")
    marker = f'<details id="task-{key}">'
    assert marker in html, f"no task {key} in {page}"
    html = html.replace(marker, marker[:-1] + " open>", 1)
    html = re.sub(r"</style>", "body>section:not(.tasks){display:none}</style>", html, count=1)
    out.write_text(html, encoding="utf-8")
    return out


def screenshot(page: Path, png: Path, width: int = 1180, height: int = 1120) -> subprocess.CompletedProcess:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("headless Chromium is not installed (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                f"--window-size={width},{height}",
                f"--screenshot={png}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )


def main(argv: list[str]) -> int:
    from barsym.cli import main as barsym

    out = Path(argv[0]) if argv else Path("docs/results/report-drilldown.png")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = make_runs(folder)
        page = folder / "report.html"
        if barsym(["report", *map(str, runs), "-o", str(page)]) != 0:
            return 1
        done = screenshot(opened_copy(page, OPENED, folder / "opened.html"), out)
        if not out.is_file():
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
