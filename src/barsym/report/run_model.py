"""A run as the report names it: its model, data set and settings, from its run file's header.

The header's ``model`` is written by :func:`barsym.eval.run_model.model_record` (which says
what each field means); a file written before the header had the field says "not recorded".
"""

from __future__ import annotations

from html import escape

__all__ = ["dataset_name", "model_text", "runs_table", "settings_text"]

#: options the model column already names
MODEL_KEYS = ("model", "llm_url", "llm_stand_in", "adapter", "api_key", "llm_model")


def model_text(header: dict) -> str:
    """The model of a run in a few words, for the report's table of runs: files and their SHA-256 as every output
    names them (:func:`barsym.llm.provenance.record_text`); a header from before the digests shows its names."""
    from ..llm.provenance import record_text

    if "model" not in header:
        return "not recorded"
    if header["model"] is None:
        return "no model"
    return record_text(header["model"])


def dataset_name(header: dict) -> str:
    """A run's data set as the user named it (``bar``), else the last part of its path."""
    name = header.get("dataset_name")
    if name:
        return str(name)
    path = str(header.get("dataset") or "")
    parts = path.replace("\\", "/").rstrip("/").split("/")
    if len(parts) >= 2 and parts[-2] == "datasets":  # a bundled set: barsym/datasets/<name>
        return parts[-1]
    return parts[-1]


def settings_text(header: dict) -> str:
    """The planner's settings of a run (``llm_mode=graph, max_retries=2, ...``), the model's own left out."""
    spec = header.get("spec") or {}
    options = {k: v for k, v in (spec.get("options") or {}).items() if v is not None and k not in MODEL_KEYS}
    world = spec.get("world")
    if world:
        options["world"] = ", ".join(f"{k}={v}" for k, v in sorted(world.items()) if v is not None)
    if spec.get("rules"):
        options["rules"] = spec["rules"]
    return ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "defaults"


def runs_table(runs, compared) -> str:
    """The report's first table: each run with its data set, model and settings (the settings cell wraps)."""
    from .parts import table

    rows = []
    for run, cut in zip(runs, compared):
        cells = [run.label, run.path.name, dataset_name(run.header), model_text(run.header)]
        settings = f'<span class="settings">{escape(settings_text(run.header))}</span>'
        count = [str(len(run.records)), str(len(cut.records)), str(run.header.get("started", ""))]
        rows.append([*map(escape, cells), settings, *map(escape, count)])
    head = ["planner", "file", "data set", "model", "settings", "tasks", "compared", "started"]
    return table(head, rows, html_cells=True)
