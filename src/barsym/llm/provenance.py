"""Which model answered, named so that two runs can be told apart: the GGUF and the adapter by name and SHA-256.

Why: a plan, an evaluation or a logged call is worth as much as the reader's knowledge of what
made it. A file name says little -- ``barsym distill --out`` writes adapters under any name, and
the adapter barsym ships keeps its name from one training to the next -- and "shipped" says
less. So every output that a model took part in names it by this one record
(:func:`model_record`; :func:`record_text` in words):

- ``gguf``, ``gguf_sha256``: the model file's name and digest (None through a server or a stand-in);
- ``adapter``, ``adapter_sha256``: the LoRA adapter's file name and digest, or ``"none"`` and None
  for the base model alone (None and None through a server or a stand-in);
- ``server``: the server URL without any ``user:password@``; ``stand_in``: the chooser that answered
  with no model.

The GGUF's digest (a 90 MB read, ~0.1 s) is remembered in the backend's state folder under the
file's identity, as the adapter's check does (:func:`.llamacpp.adapter.base_sha256`); the
adapter's (4 MB) is computed once per process.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..redact import url_without_password

__all__ = ["backend_record", "files_record", "model_record", "record_text"]

#: how many hex digits of a digest the text shows (the JSON has all 64)
SHOWN = 12


def files_record(model_path: Path, adapter_path: Path | None, folder: Path | None = None) -> dict:
    """The record of an in-process model: these files (``adapter_path`` None: the base model alone)."""
    from .llamacpp.adapter import NONE, base_sha256, file_sha256

    record = _empty()
    record["gguf"] = Path(model_path).name
    record["gguf_sha256"] = _or_none(lambda: base_sha256(Path(model_path), folder))
    if adapter_path is None:
        record["adapter"] = NONE
    else:
        record["adapter"] = Path(adapter_path).name
        record["adapter_sha256"] = _or_none(lambda: file_sha256(Path(adapter_path)))
    return record


def model_record(
    model: str | os.PathLike | None = None,
    adapter: str | os.PathLike | None = None,
    url: str | None = None,
    stand_in: str | None = None,
    folder: Path | None = None,
) -> dict:
    """The record of the model these settings name, resolved as the backend resolves them (no model loaded)."""
    record = _empty()
    if stand_in:
        record["stand_in"] = stand_in
        return record
    if url:
        record["server"] = url_without_password(url.strip())
        return record
    from .base import ModelNotFoundError
    from .llamacpp.adapter import resolve_adapter
    from .llamacpp.embedded import default_model_path

    try:
        path = default_model_path(model)
        chosen = resolve_adapter(adapter, path, folder)
    except (ModelNotFoundError, OSError):  # named as given: the command says what is wrong with it
        record["gguf"] = Path(str(model)).name if model else None
        record["adapter"] = str(adapter) if adapter else None
        return record
    return files_record(path, chosen, folder)


def backend_record(backend) -> dict | None:
    """The record of a live backend (None for one that names no model: a scripted fake)."""
    path = getattr(backend, "model_path", None)
    if path is not None:
        return files_record(path, getattr(backend, "adapter_path", None), getattr(backend, "state_dir", None))
    url = getattr(backend, "base_url", None)
    if isinstance(url, str):
        return model_record(url=url)
    name = getattr(backend, "stand_in_name", None)
    if isinstance(name, str):
        return model_record(stand_in=name)
    return None


def record_text(record: dict | None) -> str:
    """The record in words: ``SmolLM2-135M-Instruct-Q4_1.gguf (sha256 1a2b3c4d5e6f), adapter x.gguf (sha256 ...)``."""
    if record is None:
        return "no model"
    if record.get("stand_in"):
        return f"stand-in {record['stand_in']} (no model)"
    if record.get("server"):
        return f"the server at {record['server']} (its own model and adapter)"
    gguf = f"{record.get('gguf') or 'unnamed'}{_digest(record.get('gguf_sha256'))}"
    adapter = record.get("adapter")
    if adapter is None:
        return gguf
    if adapter == "none":
        return f"{gguf}, no adapter"
    return f"{gguf}, adapter {adapter}{_digest(record.get('adapter_sha256'))}"


def _digest(sha: str | None) -> str:
    return f" (sha256 {sha[:SHOWN]})" if isinstance(sha, str) and sha else ""


def _empty() -> dict:
    return {
        "gguf": None,
        "gguf_sha256": None,
        "adapter": None,
        "adapter_sha256": None,
        "server": None,
        "stand_in": None,
    }


def _or_none(digest):
    try:
        return digest()
    except OSError:  # a file gone since it was loaded: named without its digest
        return None
