"""What a backend remembers between processes (the base file's SHA-256 under its identity, and any fact), and how.

No model: a small file stands in for the base GGUF, a card names its size and digest.
"""

from __future__ import annotations

import hashlib
import os

from barsym.llm.llamacpp import adapter
from barsym.llm.llamacpp.adapter import fits_base
from barsym.llm.llamacpp.remembered import recall, remember


def _card(path):
    data = path.read_bytes()
    return {"base": {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}}


def test_the_base_digest_is_read_once_and_remembered(tmp_path, monkeypatch):
    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    card, folder = _card(base), tmp_path / "state"
    assert fits_base(base, card, folder)
    real = adapter.file_sha256
    monkeypatch.setattr(adapter, "file_sha256", lambda path: (_ for _ in ()).throw(AssertionError("read again")))
    assert fits_base(base, card, folder)  # from the folder, the file not read again
    # a remembered digest only saves the read when it is the card's: for another card the file is read again
    monkeypatch.setattr(adapter, "file_sha256", real)
    assert fits_base(base, {"base": {**card["base"], "sha256": "0" * 64}}, folder) is False


def test_a_changed_base_file_is_read_again(tmp_path):
    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF" + b"a" * 4096)
    card, folder = _card(base), tmp_path / "state"
    assert fits_base(base, card, folder)
    base.write_bytes(b"GGUF" + b"b" * 4096)  # same size, other bytes, a new modification time
    os.utime(base, ns=(base.stat().st_atime_ns, base.stat().st_mtime_ns + 1_000_000))
    assert fits_base(base, card, folder) is False


def test_a_remembered_fact_is_for_its_parts_only_and_a_read_only_folder_keeps_nothing(tmp_path):
    remember(tmp_path, "check", {"ok": 1}, "model-a", "adapter-a")
    assert recall(tmp_path, "check", "model-a", "adapter-a") == {"ok": 1, "parts": ["model-a", "adapter-a"]}
    assert recall(tmp_path, "check", "model-a", "adapter-b") is None
    assert recall(None, "check", "model-a", "adapter-a") is None
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    remember(blocked, "check", {"ok": 1}, "x")  # no error: the check runs again next time
    assert recall(blocked, "check", "x") is None


def test_a_planted_fact_is_not_read(tmp_path):
    """A file others can write (or a link) could skip a check: it is ignored, and the check runs again."""
    folder = tmp_path / "state"
    remember(folder, "check", {"ok": 1}, "model-a")
    (written,) = folder.glob("check-*.json")
    written.chmod(0o666)
    assert recall(folder, "check", "model-a") is None
    written.chmod(0o600)
    assert recall(folder, "check", "model-a") is not None
    elsewhere = tmp_path / "elsewhere.json"
    written.rename(elsewhere)
    written.symlink_to(elsewhere)
    assert recall(folder, "check", "model-a") is None
