"""Secrets out of everything barsym writes down or echoes: API keys, bearer tokens, passwords in URLs.

Why: the call log keeps each run's command line (``--api-key sk-...``) and
every prompt and reply; an error names the server URL the user gave, which may
carry ``user:password@``. None of them needs the secret to be useful, so it is
replaced by ``***`` before it reaches a file or a terminal. The lowest layer of
barsym (tests/test_layers.py): the HTTP backend and the call log both use it.
"""

from __future__ import annotations

import os
import re
import urllib.parse

__all__ = ["HIDDEN", "redact", "redact_argv", "url_without_password"]

HIDDEN = "***"
#: options whose value is a secret (``--api-key KEY`` and ``--api-key=KEY``)
SECRET_OPTIONS = ("--api-key",)
#: environment variables whose value, wherever it turns up in a text, is a secret
SECRET_VARIABLES = ("OPENAI_API_KEY",)
_MIN_SECRET = 6  # shorter values would blank ordinary words

_OPTION = re.compile(r"(--api-key(?:=|\s+))(\"[^\"]*\"|'[^']*'|\S+)")
_BEARER = re.compile(r"(\b(?:Authorization\s*[:=]\s*)?Bearer\s+)([^\s\"',;]+)", re.IGNORECASE)
_USERINFO = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s:]*):([^/@\s]*)@")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with ``--api-key`` values, bearer tokens, URL passwords and the known ``secrets`` hidden."""
    if not text:
        return text
    known = [s for s in (*secrets, *(os.environ.get(v, "") for v in SECRET_VARIABLES)) if len(s) >= _MIN_SECRET]
    for secret in sorted(set(known), key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
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
