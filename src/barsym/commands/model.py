"""``barsym model [--format text|json]``: which model the LLM commands run, and the shipped adapter's card.

The card says what a user's numbers come from: the base GGUF (file and SHA-256), the
adapter barsym ships (file, SHA-256, size), how it was trained (the data recipe and seed,
the exact ``barsym distill`` command, steps, tokens, loss, wall time, peak memory), the goals
held out of training, and the table it measured. Whether this install applies it by default
is worked out the way the backend does (:func:`barsym.llm.llamacpp.adapter.resolve_adapter`), without
loading the model. Exit 0; 2 when the adapter or card is missing from the install, or the adapter is not
the file its card names (damaged or replaced: reinstall barsym).
"""

from __future__ import annotations

import argparse
import json

from .common import UsageError, add_format

HELP = "show the model and the shipped LoRA adapter's card"
DESCRIPTION = (
    "Which model the LLM commands run by default (the embedded GGUF with the LoRA adapter barsym ships) "
    "and the adapter's card: base file and SHA-256, training data, command, steps, loss, time and results."
)


def add_arguments(p) -> None:
    add_format(p, "text|json", "text: the card, readable (default); json: the card and what applies here")


def run(args: argparse.Namespace) -> int:
    from ..llm.base import ModelLoadError, ModelNotFoundError
    from ..llm.llamacpp.adapter import CARD, SHIPPED, check_shipped, fits_base, read_card
    from ..llm.llamacpp.embedded import default_model_path

    card = read_card()
    if card is None or not SHIPPED.is_file():
        raise UsageError(f"this install has no adapter card ({CARD}); reinstall barsym")
    try:
        check_shipped(SHIPPED, card)  # the file is the card's, or the card describes something else
    except ModelLoadError as exc:
        raise UsageError(str(exc)) from None
    try:
        model = default_model_path(None)
        applies = fits_base(model, card)
        where = str(model)
    except ModelNotFoundError:
        applies, where = False, None
    if args.format == "json":
        print(json.dumps({"card": card, "adapter": str(SHIPPED), "model": where, "applied": applies}, indent=2))
        return 0
    print(render_card(card))
    if where is None:
        print("\nmodel here: none (pip install 'barsym[llm]' installs the embedded model)")
    else:
        state = "applied by default" if applies else "NOT applied: the model is not the card's base"
        print(f"\nmodel here: {where}\nadapter here: {SHIPPED} ({state}; --adapter none runs the base alone)")
    return 0


def _rule_line(data: dict) -> str:
    """What the training data kept out: the rule (cards from 2026-12-06 on) or the items held out (before)."""
    if data.get("rule"):
        return f"training rule: {data['rule']}"
    return f"held out of training: {data.get('held_out')}"


def render_card(card: dict) -> str:
    """The card as text: one line per fact, the results as a table."""
    base, adapter, training = card.get("base", {}), card.get("adapter", {}), card.get("training", {})
    lines = [
        f"{card.get('name', 'barsym adapter')}",
        f"base: {base.get('file')} ({base.get('bytes')} bytes, sha256 {base.get('sha256')}) from {base.get('package')}",
        f"adapter: {adapter.get('file')} ({adapter.get('bytes')} bytes, sha256 {adapter.get('sha256')}), "
        f"LoRA rank {training.get('lora_rank')} alpha {training.get('lora_alpha')} on the last "
        f"{training.get('lora_layers')} blocks",
        _rule_line(card.get("data", {})),
        f"taught on Minecraft {card.get('minecraft', '1.16.5')}: every example's facts and answers are that "
        "version's (under another --mc-version the prompts give it that version's facts)",
    ]
    hours = card.get("cpu_hours")
    if isinstance(hours, dict):
        lines.append(f"training cost: {hours.get('total')} CPU hours ({hours.get('threads')} threads)")
    stages = [*card.get("stages", []), card]
    for number, stage in enumerate(stages, start=1):
        head = f"stage {number} of {len(stages)}, " if len(stages) > 1 else ""
        lines += _stage_lines(stage, head, warm=number > 1)
    if len(stages) > 1:
        steps = sum(s.get("training", {}).get("steps") or 0 for s in stages)
        seconds = sum(s.get("training", {}).get("train_seconds") or 0 for s in stages)
        lines.append(f"in all: {steps} steps, {seconds:.0f} s of training")
    results = card.get("results", [])
    if results:
        lines.append("measured (the README's install, this adapter against --adapter none):")
        for row in results:
            lines.append(f"  {row.get('what')}: {row.get('taught')} (base {row.get('base')}) -- {row.get('command')}")
    return "\n".join(lines)


def _stage_lines(stage: dict, head: str, warm: bool) -> list[str]:
    """One stage of training: its data recipe, its command, what the training did."""
    training, data = stage.get("training", {}), stage.get("data", {})
    started = training.get("warm_start") or {}
    if warm and started.get("adapter_sha256"):  # --warm-start ADAPTER.gguf (distill/adapter_start.py)
        start = f" (from the stage before's adapter file, sha256 {started['adapter_sha256'][:12]})"
    else:
        start = " (from the stage before's checkpoint)" if warm else ""
    made = f" (run at barsym commit {data['commit']}: sha256 {data.get('sha256')})" if data.get("commit") else ""
    return [
        f"{head}data: {data.get('recipe')}{made}",
        f"{head}command{start}: {stage.get('command')}",
        f"{head}training: {training.get('steps')} steps of {training.get('accumulate')} examples, "
        f"{training.get('tail_tokens')} tokens, loss {_num(training.get('first_loss'))} -> "
        f"{_num(training.get('last_loss'))}, {_num(training.get('train_seconds'))} s, "
        f"peak {training.get('peak_rss_mb')} MB, {training.get('runs', 1)} run(s)",
    ]


def _num(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) and value < 100 else str(value)
