"""What a chat server says it counted: token numbers from ``usage`` and llama-server's ``timings``, checked.

Servers disagree on types and fields, and some send nonsense (negative,
fractional, absurd counts); a wrong counter is the server's accounting fault,
not a reason to throw away the model's answer. So each count is read only as a
whole number from 0 to 10 million, parts of the prompt are at most the prompt,
and what was not usable is returned for the backend's one warning.
"""

from __future__ import annotations

__all__ = ["token_counts"]

#: more tokens than one call of any model can involve: a count above it is a server fault
_MAX_TOKENS = 10_000_000


def _count(fields: dict, key: str, bad: list[str]) -> int | None:
    """A token count from ``usage`` or ``timings``; None if absent, or unusable (then noted in ``bad``).

    Servers disagree on types (``12``, ``12.0``, ``"12"``), so those are read;
    a count that is negative, fractional, huge or not a number is not a count.
    """
    value = fields.get(key)
    if value is None:
        return None
    number = value
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdecimal() and len(value) < 20:
        number = int(value)
    if isinstance(number, int) and not isinstance(number, bool) and 0 <= number <= _MAX_TOKENS:
        return number
    text = repr(value)
    bad.append(f"{key}={text if len(text) <= 40 else text[:30] + '...'}")
    return None


def token_counts(reply: dict) -> tuple[int, int, int | None, int | None, list[str]]:
    """(prompt, completion, cached, evaluated, unusable fields) of a chat completion's JSON reply.

    OpenAI reports reuse as ``usage.prompt_tokens_details.cached_tokens``;
    llama.cpp's llama-server as ``timings.cache_n`` (reused) / ``prompt_n``
    (evaluated). Unknown counts are None (prompt and completion: 0).
    """
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    timings = reply.get("timings")
    details = details if isinstance(details, dict) else {}
    timings = timings if isinstance(timings, dict) else {}
    bad: list[str] = []
    prompt_tokens = _count(usage, "prompt_tokens", bad) or 0
    completion_tokens = _count(usage, "completion_tokens", bad) or 0
    cached = _count(details, "cached_tokens", bad)
    if cached is None:
        cached = _count(timings, "cache_n", bad)
    evaluated = _count(timings, "prompt_n", bad)
    if prompt_tokens:  # parts of the prompt cannot exceed it
        if cached is not None and cached > prompt_tokens:
            bad.append(f"cached {cached} > prompt_tokens {prompt_tokens}")
            cached = None
        if evaluated is not None and evaluated > prompt_tokens:
            bad.append(f"evaluated {evaluated} > prompt_tokens {prompt_tokens}")
            evaluated = None
    if evaluated is None and cached is not None:
        evaluated = max(0, prompt_tokens - cached)
    return prompt_tokens, completion_tokens, cached, evaluated, bad
