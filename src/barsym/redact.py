"""Secrets out of everything barsym writes down or echoes, and terminal controls out of everything it shows.

Secrets are API keys, bearer tokens and passwords in URLs (:func:`redact`); the
controls are escaped by :func:`escape_controls` (:class:`EscapedOutput` on stdout
and stderr for a whole command).

Why: the call log keeps each run's command line (``--api-key sk-...``) and
every prompt and reply; an error names the server URL the user gave, which may
carry ``user:password@``. None of them needs the secret to be useful, so it is
replaced by ``***`` before it reaches a file or a terminal. The lowest layer of
barsym (tests/test_layers.py): the HTTP backend and the call log both use it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from functools import lru_cache
from typing import TextIO

__all__ = [
    "HIDDEN",
    "PIECE",
    "EscapedOutput",
    "OutputError",
    "escape_controls",
    "hide_secrets",
    "raw_stream",
    "redact",
    "redact_argv",
    "remember_secret",
    "url_without_password",
]

HIDDEN = "***"
#: options whose value is a secret (``--api-key KEY`` and ``--api-key=KEY``)
SECRET_OPTIONS = ("--api-key",)
#: environment variables whose value, wherever it turns up in a text, is a secret
SECRET_VARIABLES = ("OPENAI_API_KEY",)
_MIN_SECRET = 6  # shorter values would blank ordinary words

_OPTION = re.compile(r"(--api-key(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)")
_BEARER = re.compile(r"(\b(?:Authorization\s*[:=]\s*)?Bearer\s+)([^\s\"',;]+)", re.IGNORECASE)
_USERINFO = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s:]*):([^/@\s]*)@")


#: every secret value this process was given (``--api-key``, a URL's password): hidden wherever it turns up
_KNOWN: set[str] = set()


def remember_secret(*values: str) -> None:
    """Hide these values from now on in everything :func:`redact` and :class:`EscapedOutput` pass on.

    Why a registry and not only patterns: a server may echo the key in its reply
    (``invalid key sk-...``), and that reply is logged, quoted in problems and
    printed; only the value itself finds it there. Values shorter than six
    characters are not hidden (they would blank ordinary words).
    """
    _KNOWN.update(v for v in values if isinstance(v, str) and len(v) >= _MIN_SECRET)


def hide_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every known secret value (:func:`remember_secret`, ``$OPENAI_API_KEY``, ``secrets``) hidden:
    the whole value, and any piece of :data:`PIECE` characters or more of it, as it is or as it turns up
    encoded (:func:`_spellings`: JSON-escaped, URL-encoded, base64).

    Why pieces: a server's error body is cut to a few hundred characters, a quote in a message to a
    readable length, and the cut may fall inside the key; what is left of it is still most of the key.
    """
    if not text:
        return text
    known = {
        s for s in (*secrets, *_KNOWN, *(os.environ.get(v, "") for v in SECRET_VARIABLES)) if len(s) >= _MIN_SECRET
    }
    if not known:
        return text
    for secret in sorted((s for s in known if len(s) < PIECE), key=len, reverse=True):
        text = text.replace(secret, HIDDEN)  # too short to hide in pieces: only whole
    spans: list[tuple[int, int]] = []
    for spelling in {v for s in known if len(s) >= PIECE for v in _spellings(s)}:
        for i in range(len(spelling) - PIECE + 1):
            piece, at = spelling[i : i + PIECE], text.find(spelling[i : i + PIECE])
            while at >= 0:
                spans.append((at, at + PIECE))
                at = text.find(piece, at + 1)
    if not spans:
        return text
    out, end = [], 0
    for start, stop in _merged(spans, text):
        out += [text[end:start], HIDDEN]
        end = stop
    return "".join(out) + text[end:]


#: the shortest piece of a secret that is hidden wherever it turns up: a key cut at any point leaves pieces
#: at least this long to find (shorter ones could be any word)
PIECE = 8


@lru_cache(maxsize=64)
def _spellings(secret: str) -> tuple[str, ...]:
    """The ways ``secret`` is written where it may turn up: as it is, JSON-escaped (``\\/`` too), URL-encoded,
    and in base64 (standard and URL-safe) wherever it starts in the encoded text (the characters that depend
    on the secret's bytes alone, for each of the three alignments)."""
    raw = secret.encode("utf-8")
    out = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    out |= {v.replace("/", "\\/") for v in list(out)}
    out |= {urllib.parse.quote(secret, safe=""), urllib.parse.quote(secret), urllib.parse.quote_plus(secret)}
    for offset in range(3):
        first, last = -(-8 * offset // 6), (8 * (offset + len(raw)) - 6) // 6 + 1
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            out.add(encode(b"\0" * offset + raw + b"\0\0\0").decode("ascii")[first:last])
    return tuple(v for v in out if len(v) >= PIECE)


def _merged(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Overlapping spans as one each, in order; a span never starts or ends inside a backslash escape (hiding
    half of ``\\"`` would break the JSON it is in)."""
    out: list[tuple[int, int]] = []
    for start, stop in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], stop))
        else:
            out.append((start, stop))
    fixed = []
    for start, stop in out:
        while start > 0 and _escaping(text, start):
            start -= 1
        while stop < len(text) and _escaping(text, stop):
            stop += 1
        fixed.append((start, stop))
    return fixed


def _escaping(text: str, at: int) -> bool:
    """Whether the character before ``at`` is a backslash that escapes the one at ``at``."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with ``--api-key`` values, bearer tokens, URL passwords and the known secrets hidden."""
    if not text:
        return text
    text = hide_secrets(text, secrets)
    text = _OPTION.sub(lambda m: m.group(1) + HIDDEN, text)
    text = _BEARER.sub(lambda m: m.group(1) + HIDDEN, text)
    return _USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{HIDDEN}@", text)


def redact_argv(argv: list[str]) -> list[str]:
    """A command line with the value after each secret option hidden (``--api-key KEY`` -> ``--api-key ***``)."""
    out = []
    hide_next = False
    for word in argv:
        if hide_next:
            out.append(HIDDEN)
            hide_next = False
            continue
        name, equals, _ = word.partition("=")
        if name in SECRET_OPTIONS:
            if equals:
                out.append(f"{name}={HIDDEN}")
            else:
                out.append(word)
                hide_next = True
            continue
        out.append(redact(word))
    return out


def url_without_password(url: str) -> str:
    """``url`` with no ``user:password@`` part at all (for messages that name a server)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return redact(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


#: C0 controls but tab and newline, DEL, C1 controls, lone surrogates (undecodable bytes of a file name), and
#: the bidirectional controls (U+061C, U+200E/F, U+202A-202E, U+2066-2069), which reorder what a line shows:
#: a reply ``craft 1 \u202ekcits`` would read as another item on the screen than the one in the plan
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """``text`` with every control character shown as ``\\x1b`` (``\\udcff``: a lone surrogate; ``\\u202e``: bidi).

    Item names, file names and plan fields come from the user and are echoed
    in messages; an ESC inside one (``oak\\x1b[31mplanks``, ``"\\u001b[2J"``
    in a plan) would recolour or clear the terminal, a carriage return would
    overwrite the line it is on. Tabs and newlines are layout, and kept.
    """
    return _UNSAFE.sub(_escaped, text)


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class OutputError(OSError):
    """Writing to stdout or stderr failed (a full disk behind a redirection); ``stream`` is the raw stream."""

    def __init__(self, stream, cause: OSError):
        super().__init__(cause.errno, cause.strerror or str(cause))
        self.stream = stream


class EscapedOutput:
    """A text stream that passes everything through :func:`escape_controls`, known secrets hidden (:func:`hide_secrets`).

    ``barsym.cli.main`` puts stdout and stderr behind one for the whole run, so
    every line any command prints is covered, including lines added later.
    JSON output is unchanged by it (``json.dumps`` already escapes controls).
    Code that must send control sequences on purpose (the progress line)
    writes to ``raw``.
    """

    def __init__(self, raw: TextIO):
        self.raw = raw
        self.failed: OutputError | None = None  # the first write that failed, kept for a caller that swallowed it

    def write(self, text: str) -> int:
        if not text:
            return 0  # nothing to write (an unbuffered stream on a full disk would fail even at that)
        try:
            self.raw.write(escape_controls(hide_secrets(text)))
        except BrokenPipeError:
            raise
        except OSError as exc:  # a full disk: the command line says it in one line (barsym.cli)
            raise self._failed(exc) from None
        return len(text)

    def flush(self) -> None:
        try:
            self.raw.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> OutputError:
        self.failed = self.failed or OutputError(self.raw, exc)
        return self.failed

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):  # flush, isatty, encoding, buffer, ...
        return getattr(self.raw, name)


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under an :class:`EscapedOutput`, for deliberate control sequences."""
    return stream.raw if isinstance(stream, EscapedOutput) else stream
