"""Token-by-token decoding with llama.cpp's own sampler chain.

For replies the forced-span decoder cannot mirror: free text (DEPS' and
chain-of-thought's explanations), JSON-schema grammars and GBNF that
:mod:`..grammar_match` does not cover. One model evaluation per generated
token, the grammar (if any) applied by llama.cpp's grammar sampler, exactly as
``create_chat_completion`` did before barsym owned its context.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..time_limit import out_of_time
from .native import NativeContext

__all__ = ["TokenResult", "generate_tokens"]


@dataclass(frozen=True)
class TokenResult:
    text: str
    tokens: tuple[int, ...]
    finish_reason: str  # "stop" or "length"
    prompt_tokens: int
    evaluated_prompt_tokens: int
    evaluations: int


def generate_tokens(
    context: NativeContext,
    prompt: list[int],
    gbnf: str | None,
    max_tokens: int,
    temperature: float,
    seed: int,
    stops: list[str],
) -> TokenResult:
    """Decode a reply to ``prompt``, reusing the cache's common prefix; stop at an end token or a stop text."""
    model = context.model
    max_tokens = context.reply_room(prompt, max_tokens)
    keep = context.kept_prefix(prompt)
    context.truncate(keep)
    context.evaluate(prompt[keep:], first_output=len(prompt) - keep - 1)
    out: list[int] = []
    evaluations, finish, text = 1, "length", ""
    with context.sampler(gbnf, temperature, seed) as sampler:
        while len(out) < max_tokens:
            token = sampler.sample()
            if model.is_eog(token):
                finish = "stop"
                break
            out.append(token)
            text = model.detokenize(out)
            hit = [s for s in stops if s and s in text]
            if hit:
                text, finish = text[: min(text.index(s) for s in hit)], "stop"
                break
            if len(out) >= max_tokens or out_of_time():  # a caller's deadline ends the reply as max_tokens does
                break
            context.evaluate([token], first_output=0)
            evaluations += 1
    if finish == "length":
        text = model.detokenize(out)
    return TokenResult(
        text=text,
        tokens=tuple(out),
        finish_reason=finish,
        prompt_tokens=len(prompt),
        evaluated_prompt_tokens=len(prompt) - keep,
        evaluations=evaluations,
    )
