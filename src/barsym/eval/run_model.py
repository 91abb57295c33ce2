"""Which model a run used, as its run file's header records it and the report names it.

Why: a table of ``bar`` against ``symbolic`` says little unless it says which
model ``bar`` ran -- the embedded SmolLM2 GGUF, a distilled file, a server --
and a report made from run files weeks later has only the files to go by. So
``barsym eval`` writes the model into the header (:func:`model_record`) and
``barsym report`` reads it back (:func:`model_text`):

- ``gguf``: the GGUF file's name (not its path: the path says where one
  machine keeps it, the name what it is); None for a server or a stand-in;
- ``adapter``: the LoRA adapter applied on the GGUF: its file name (``shipped`` names the one in the
  wheel; :func:`barsym.llm.llamacpp.adapter.describe`), ``none`` for the base model alone, None for a server
  or a stand-in;
- ``server``: the server URL, with any ``user:password@`` removed (a run file is
  shared; the API key is never in it);
- ``stand_in``: the stand-in that answered instead of a model (``copy-facts``).

Planners without a model record None. Files written before the header had the
field say "not recorded".
"""

from __future__ import annotations

from html import escape

from ..redact import url_without_password

__all__ = ["dataset_name", "model_record", "model_text", "runs_table", "settings_text"]

#: options the model column already names
MODEL_KEYS = ("model", "llm_url", "llm_stand_in", "adapter", "api_key", "llm_model")


def model_record(planner: str, options: dict) -> dict | None:
    """The model a run of ``planner`` with these options (a run spec's, plain data) asks (None for a planner
    that asks none)."""
    from ..planner.registry import LLM_PLANNERS
    from ..reasoning.spec import PlannerSpec

    spec = PlannerSpec.of(planner, options) if options else None  # the options as the planner reads them
    if planner not in LLM_PLANNERS and not (spec is not None and spec.consistency):
        return None
    llm = spec.llm if spec is not None else PlannerSpec(planner=planner).llm
    url, stand_in = llm.llm_url, llm.llm_stand_in
    gguf = adapter = None
    if not url and not stand_in:
        from ..llm.llamacpp.adapter import describe, resolve_adapter
        from ..llm.llamacpp.embedded import default_model_path

        try:
            path = default_model_path(llm.model)
            gguf = path.name
            adapter = describe(resolve_adapter(llm.adapter, path))  # as the backend resolves it
        except Exception:  # the planner was built, so the model is there; never fail a run over its name
            gguf = str(llm.model or "")
            adapter = llm.adapter
    return {
        "gguf": gguf,
        "adapter": adapter,
        "server": url_without_password(url) if url else None,
        "stand_in": stand_in,
    }


def model_text(header: dict) -> str:
    """The model of a run in a few words, for the report's table of runs."""
    if "model" not in header:
        return "not recorded"
    model = header["model"]
    if model is None:
        return "no model"
    if model.get("stand_in"):
        return f"stand-in {model['stand_in']} (no model)"
    parts = [model.get("gguf") or "", f"at {model['server']}" if model.get("server") else ""]
    if model.get("adapter") and model["adapter"] != "none":
        parts.append(f"+ adapter {model['adapter']}")
    elif model.get("adapter") == "none":
        parts.append("(base, no adapter)")
    return " ".join(p for p in parts if p) or "unnamed"


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
    from .report_parts import table

    rows = []
    for run, cut in zip(runs, compared):
        cells = [run.label, run.path.name, dataset_name(run.header), model_text(run.header)]
        settings = f'<span class="settings">{escape(settings_text(run.header))}</span>'
        count = [str(len(run.records)), str(len(cut.records)), str(run.header.get("started", ""))]
        rows.append([*map(escape, cells), settings, *map(escape, count)])
    head = ["planner", "file", "data set", "model", "settings", "tasks", "compared", "started"]
    return table(head, rows, html_cells=True)
