"""The few-shot prefix's KV state, saved to disk so a new process need not evaluate it again.

Every planner call starts with the same system message and few-shot turns
(600-1000 tokens). Evaluating them takes 1-2 s on two cores -- most of a short
``barsym plan`` -- and gives the same KV entries every time. After the first
evaluation the backend saves llama.cpp's state of that sequence
(``llama_state_seq_get_data``: the KV cells, ~14 MB for 600 tokens of
SmolLM2-135M) here, and a new process loads it in a few milliseconds.

A state is only valid for the exact same tokens, model, llama.cpp build and
CPU features (llama.cpp's kernels differ between them, and so do the numbers
in the KV cells), so the file name is a hash of all of them (:class:`PrefixKey`):
change the prompt, swap the model file, upgrade llama-cpp-python or move to
another CPU and the next run builds a new file. The header repeats the key,
the token ids and a SHA-256 of the payload (against damage), and the logits
that followed the prefix when it was evaluated (:class:`StateCheck`): the
header can be rewritten along with the data, so the backend evaluates the
state's last tokens again and compares before trusting it. A file that fails
any check is ignored with a :class:`PrefixStateWarning` and rewritten. Files
are private to the user (0600 in a 0700 folder); only the newest few are kept.
"""

from __future__ import annotations

import hashlib
import json
import struct
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from ...private_files import private_dir, untrusted, write_private

__all__ = ["PrefixKey", "PrefixStateStore", "PrefixStateWarning", "StateCheck", "model_identity"]

FORMAT = 2
MAGIC = b"BARSYM-PREFIX-STATE\n"
KEEP_FILES = 4
_HEAD_BYTES = 1 << 20


class PrefixStateWarning(UserWarning):
    """A saved prefix state could not be used; the prefix is evaluated again."""


def model_identity(path: Path) -> str:
    """Path, size, modification and change times, inode and a hash of the first MiB (the GGUF header and metadata).

    The change time is set by the kernel on every write and cannot be set back (``touch`` sets only the
    modification time): a file changed in place after its first MiB, with its size and modification
    time restored, is another identity, so nothing remembered about it is used."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    with open(resolved, "rb") as handle:
        head = hashlib.sha256(handle.read(_HEAD_BYTES)).hexdigest()[:16]
    return f"{resolved}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}|{stat.st_ino}|{head}"


@dataclass(frozen=True)
class PrefixKey:
    """What a saved state depends on; any change gives another file."""

    model: str  # model_identity()
    prompt: str  # SHA-256 of the prefix's rendered text and its token ids
    library: str  # llama-cpp-python version
    settings: str  # context settings and load profile that change the KV layout or its numbers
    system: str = ""  # llama.cpp's system information: the build's and the CPU's features

    @staticmethod
    def for_prompt(
        model: str, text: str, tokens: list[int], library: str, settings: str, system: str = ""
    ) -> "PrefixKey":
        digest = hashlib.sha256(text.encode("utf-8"))
        digest.update(struct.pack(f"<{len(tokens)}i", *tokens))
        return PrefixKey(model, digest.hexdigest(), library, settings, system)

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class StateCheck:
    """The highest logits after the prefix when it was evaluated: what a loaded state must reproduce."""

    ids: tuple[int, ...]
    logits: tuple[float, ...]


class PrefixStateStore:
    """Saved prefix states in one folder (``$BARSYM_CACHE_DIR/llm-state`` for barsym's planners)."""

    def __init__(self, directory: Path | str, keep: int = KEEP_FILES):
        self.directory = Path(directory)
        self.keep = keep

    def path_for(self, key: PrefixKey) -> Path:
        return self.directory / f"prefix-{key.digest()}.kvstate"

    def load(self, key: PrefixKey, tokens: list[int]) -> tuple[bytes, StateCheck] | None:
        """The saved state for ``key`` and ``tokens`` and its check; None if there is none or it is unusable (warned)."""
        path = self.path_for(key)
        problem = untrusted(self.directory) or untrusted(path)  # planted: the same rules as every file barsym keeps
        if problem and path.exists():
            self._warn(path, f"it or its folder {problem}")
            return None
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._warn(path, f"cannot read it ({exc.strerror})")
            return None
        problem, found = self._parse(blob, key, tokens)
        if problem:
            self._warn(path, problem)
            return None
        return found

    @staticmethod
    def _parse(blob: bytes, key: PrefixKey, tokens: list[int]) -> tuple[str, tuple[bytes, StateCheck] | None]:
        if not blob.startswith(MAGIC):
            return "not a prefix state file", None
        at = len(MAGIC)
        try:
            (size,) = struct.unpack_from("<Q", blob, at)
            header = json.loads(blob[at + 8 : at + 8 + size])
        except (struct.error, ValueError, UnicodeDecodeError):
            return "unreadable header", None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return "another format version", None
        if header.get("key") != asdict(key):
            return "made for another model, prompt or llama.cpp version", None
        at += 8 + size
        count, length = header.get("tokens"), header.get("payload")
        if count != len(tokens) or not isinstance(length, int) or len(blob) != at + 4 * count + length:
            return "truncated or padded", None
        body = blob[at:]
        if hashlib.sha256(body).hexdigest() != header.get("sha256"):
            return "checksum mismatch", None
        if list(struct.unpack_from(f"<{count}i", body)) != list(tokens):
            return "saved for other prompt tokens", None
        check = header.get("check")
        try:
            ids, logits = tuple(int(i) for i in check["ids"]), tuple(float(v) for v in check["logits"])
        except (TypeError, KeyError, ValueError):
            return "no logits to check it against", None
        if not ids or len(ids) != len(logits):
            return "no logits to check it against", None
        return "", (body[4 * count :], StateCheck(ids, logits))

    def save(self, key: PrefixKey, tokens: list[int], payload: bytes, check: StateCheck) -> Path | None:
        """Write atomically as a 0600 file (:func:`~barsym.private_files.write_private`); a folder that cannot be
        written, or that others could write, is skipped."""
        path = self.path_for(key)
        body = struct.pack(f"<{len(tokens)}i", *tokens) + payload
        header = json.dumps(
            {
                "format": FORMAT,
                "key": asdict(key),
                "tokens": len(tokens),
                "payload": len(payload),
                "sha256": hashlib.sha256(body).hexdigest(),
                "check": {"ids": list(check.ids), "logits": list(check.logits)},
            }
        ).encode()
        try:
            private_dir(self.directory)  # every folder made here 0700
            if untrusted(self.directory):  # another user's, or one others can write: nothing saved there
                return None
            write_private(path, MAGIC + struct.pack("<Q", len(header)) + header + body)
        except OSError:
            return None  # a read-only cache must not stop planning: the next run evaluates the prefix again
        self._prune(path)
        return path

    def _prune(self, newest: Path) -> None:
        try:
            files = sorted(self.directory.glob("prefix-*.kvstate"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in [f for f in files if f != newest][max(0, self.keep - 1) :]:
                old.unlink(missing_ok=True)
        except OSError:
            pass

    @staticmethod
    def _warn(path: Path, problem: str) -> None:
        warnings.warn(
            f"ignoring the saved prompt state {path} ({problem}); evaluating the prompt again",
            PrefixStateWarning,
            stacklevel=3,
        )
