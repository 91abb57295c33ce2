"""What each kind of chat server reads: the grammar's field, the sampler's fields, the JSON body.

Constrained decoding over HTTP is not standardised, so both common forms are
supported:

* ``grammar`` (GBNF text) is sent in the field the server reads: llama.cpp's
  servers take ``grammar``, vLLM takes ``guided_grammar``; the server's
  ``/v1/models`` says which it is (``owned_by``, :func:`style_of_owner`), and a
  server that takes no grammar (OpenAI's API) sends none.
* ``json_schema`` is sent as ``response_format``.  ``schema_style="llama"``
  (default) uses ``{"type": "json_object", "schema": ...}``, understood by
  both llama.cpp servers; ``"openai"`` uses OpenAI's
  ``{"type": "json_schema", "json_schema": {...}}``, which llama-cpp-python's
  server rejects (HTTP 500 carrying a validation error).

Sampler settings are sent too, where the server takes them: a server's defaults are
its own, and llama-cpp-python's server penalises repeated tokens (``repeat_penalty``
1.1 over the last 64), which turned ``craft 2 stick: 2 planks`` into ``craft 2
stick: 4 bamboo`` (the second ``2`` penalised) and took BAR's accuracy through the
server from 98.31 to 37.61. So a llama.cpp server is asked for barsym's own sampler
(:data:`~barsym.llm.base.SAMPLER`: no penalty; top-k, top-p and min-p as in-process),
vLLM the same in its field names, and OpenAI's API (which has no such fields) nothing.

Kept apart from the transport (:mod:`.backend`, :mod:`.transport`) so that what a
server is asked can be read, and tested, without a socket.
"""

from __future__ import annotations

from typing import Any

from ..base import SAMPLER, CompletionRequest

__all__ = ["GRAMMAR_FIELDS", "GRAMMAR_STYLES", "SAMPLER_FIELDS", "SERVER_OWNERS", "payload", "style_of_owner"]

GRAMMAR_STYLES = ("auto", "llama", "vllm", "none")
#: the request field each server reads a GBNF grammar from
GRAMMAR_FIELDS = {"llama": "grammar", "vllm": "guided_grammar"}
#: the sampler fields each kind of server reads (OpenAI's API takes none of them, and refuses unknown fields)
SAMPLER_FIELDS = {
    "llama": {**SAMPLER, "presence_penalty": 0.0, "frequency_penalty": 0.0},
    "vllm": {
        "top_k": SAMPLER["top_k"],
        "top_p": SAMPLER["top_p"],
        "min_p": SAMPLER["min_p"],
        "repetition_penalty": SAMPLER["repeat_penalty"],
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
    },
    "none": {},
}
#: ``owned_by`` of a server's models -> how it takes a grammar
SERVER_OWNERS = {
    "vllm": ("vllm",),
    "llama": ("llamacpp", "llama.cpp", "llama-cpp", "me"),
    "none": ("openai", "system", "openai-internal"),
}


def style_of_owner(owner: str, host: str) -> str | None:
    """The grammar style of a server whose models are ``owned_by`` ``owner`` (None: a server barsym does not know).

    vLLM's models are ``owned_by: "vllm"``; llama.cpp's server says ``llamacpp`` and
    llama-cpp-python's ``me``; OpenAI's API says ``openai`` or ``system``, and its host
    is enough where the owner is one it has not used before.
    """
    style = next((s for s, owners in SERVER_OWNERS.items() if owner in owners), None)
    if style is None and host.endswith("openai.com"):
        style = "none"
    return style


def payload(request: CompletionRequest, *, model: str | None, style: str, schema_style: str) -> dict[str, Any]:
    """The JSON body of one chat completion for a server of grammar ``style`` (``auto``: llama.cpp's form)."""
    body: dict[str, Any] = {
        "messages": request.messages,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "seed": request.seed,
        "stream": False,
    }
    if model:
        body["model"] = model
    if request.stop:
        body["stop"] = request.stop
    style = "llama" if style == "auto" else style
    body.update(SAMPLER_FIELDS[style])
    if request.grammar is not None and style != "none":
        body[GRAMMAR_FIELDS[style]] = request.grammar
    if request.json_schema is not None:
        if schema_style == "openai":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.json_schema, "strict": True},
            }
        else:
            body["response_format"] = {"type": "json_object", "schema": request.json_schema}
    return body
