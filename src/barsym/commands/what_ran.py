"""What ran, named in every output of ``plan``, ``parse`` and ``eval``: planner, model, rules, start state.

A plan piped into a file, or the JSON a script keeps, is read later by someone who did not see
the command line. So each says what made it, the same way: the planner, the model by its files
and their SHA-256 (:mod:`barsym.llm.provenance`; none for a planner that asks no model), the
rule profile and the start state -- as text, one or two footer lines printed whether or not
stdout is a terminal, and in JSON as ``planner``, ``model``, ``rules`` and ``start``.
"""

from __future__ import annotations

from ..sim import State

__all__ = ["planner_model", "ran_lines", "ran_record"]


def planner_model(planner: str, options: dict) -> dict | None:
    """The model ``planner`` runs with these options (None: it asks none), as run files record it."""
    if not options:
        return None
    from ..eval.run_model import model_record

    return model_record(planner, options)


def ran_record(planner: str, model: dict | None, rules: str | None, start: State | None) -> dict:
    """The JSON fields: ``planner``, ``model`` (:func:`barsym.llm.provenance.model_record`, or None), ``rules``,
    ``start`` (``{"layer", "inventory"}``; None where each task has its own, as in an evaluation)."""
    return {"planner": planner, "model": model, "rules": rules, "start": None if start is None else start.to_dict()}


def ran_lines(record: dict, layers: tuple[str, ...] = (), what: str | None = None) -> list[str]:
    """The footer: ``ran: planner bar, rules survival, start layer 0 (surface); inventory: nothing``, then the
    model's line (``model: SmolLM2-135M-Instruct-Q4_1.gguf (sha256 ...), adapter ...``) when there is one.
    ``what`` names the work instead of the planner (``parse (3.2 s)``)."""
    from ..llm.provenance import record_text

    parts = [what or f"planner {record['planner']}" + ("" if record["model"] else " (no model)")]
    if record.get("rules"):
        parts.append(f"rules {record['rules']}")
    if record.get("start") is not None:
        parts.append(f"start {State.from_dict(record['start']).describe(layers)}")
    lines = ["ran: " + ", ".join(parts)]
    if record["model"]:
        lines.append(f"model: {record_text(record['model'])}")
    return lines
