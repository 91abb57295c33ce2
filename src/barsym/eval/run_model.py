"""Which model a run used, as its run file's header records it and the report names it.

Why: a table of ``bar`` against ``symbolic`` says little unless it says which
model ``bar`` ran -- the embedded SmolLM2 GGUF, a distilled file, a server --
and a report made from run files weeks later has only the files to go by. So
``barsym eval`` writes the model into the header (:func:`model_record`) and
``barsym report`` reads it back (:func:`barsym.report.run_model.model_text`):

- ``gguf``: the GGUF file's name (not its path: the path says where one
  machine keeps it, the name what it is); None for a server or a stand-in;
- ``adapter``: the LoRA adapter applied on the GGUF: its file name (``shipped`` names the one in the
  wheel; :func:`barsym.llm.llamacpp.adapter.describe`), ``none`` for the base model alone, None for a server
  or a stand-in; ``adapter_sha256``, the SHA-256 of the adapter file as it was when the run started (the
  shipped one is checked against its card before it is used, so a run never names a damaged file
  "shipped"), and ``adapter_applied``, whether one is applied (the backend applies it, or the run stops);
- ``server``: the server URL, with any ``user:password@`` removed (a run file is
  shared; the API key is never in it);
- ``stand_in``: the stand-in that answered instead of a model (``copy-facts``).

Planners without a model record None. Files written before the header had the
field say "not recorded".
"""

from __future__ import annotations

from ..redact import url_without_password

__all__ = ["model_record"]


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
    files: dict = {"gguf": None, "adapter": None}
    if not url and not stand_in:
        from ..llm.llamacpp.adapter import resolve_adapter, run_record
        from ..llm.llamacpp.embedded import default_model_path

        try:
            path = default_model_path(llm.model)
            files = run_record(path, resolve_adapter(llm.adapter, path))  # as the backend resolves it
        except Exception:  # the planner was built, so the model is there; never fail a run over its name
            files = {"gguf": str(llm.model or ""), "adapter": llm.adapter}
    return {**files, "server": url_without_password(url) if url else None, "stand_in": stand_in}
