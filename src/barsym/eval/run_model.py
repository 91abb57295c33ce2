"""Which model a run used, as its run file's header records it and the report names it.

Why: a table of ``bar`` against ``symbolic`` says little unless it says which
model ``bar`` ran -- the embedded SmolLM2 GGUF, a distilled file, a server --
and a report made from run files weeks later has only the files to go by. So
``barsym eval`` writes the model into the header (:func:`model_record`) and
``barsym report`` reads it back (:func:`barsym.report.run_model.model_text`),
with the fields every output names a model by (:mod:`barsym.llm.provenance`):
``gguf`` and ``gguf_sha256``, ``adapter`` (its file name, ``none`` for the base
model alone), ``adapter_sha256`` and ``adapter_applied`` (the shipped adapter is
checked against its card before it is used, so a run never names a damaged file
by the card's digest), ``server`` (without any ``user:password@``: a run file is
shared; the API key is never in it) and ``stand_in``.

Planners without a model record None. Files written before the header had the
field say "not recorded"; files written before the digests name the shipped
adapter ``shipped``.
"""

from __future__ import annotations

__all__ = ["model_record"]


def model_record(planner: str, options: dict) -> dict | None:
    """The model a run of ``planner`` with these options (a run spec's, plain data) asks (None for a planner
    that asks none)."""
    from ..planner.registry import llm_planners
    from ..reasoning.calls.backends import settings_record
    from ..reasoning.spec import PlannerSpec

    spec = PlannerSpec.of(planner, options) if options else None  # the options as the planner reads them
    if planner not in llm_planners() and not (spec is not None and spec.consistency):
        return None
    return settings_record(spec.llm if spec is not None else PlannerSpec(planner=planner).llm)
