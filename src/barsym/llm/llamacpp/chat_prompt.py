"""Chat messages to prompt tokens, with the GGUF's own chat template.

The template is rendered with llama-cpp-python's public
``llama_chat_format.Jinja2ChatFormatter``, exactly as ``create_chat_completion``
renders a model whose template it does not special-case, so the prompts (and
with them the replies) are the ones barsym's planners were measured with.
"""

from __future__ import annotations

from typing import Any

from .native import NativeModel

__all__ = ["ChatPrompt", "NoChatTemplate"]


class NoChatTemplate(ValueError):
    """The GGUF carries no chat template, so messages cannot be turned into a prompt."""


class ChatPrompt:
    """Renders chat messages for one model; ``stops`` are the texts that end a reply."""

    def __init__(self, model: NativeModel):
        template = model.metadata("tokenizer.chat_template")
        if not template:
            raise NoChatTemplate(f"{model.path.name} has no chat template (GGUF key tokenizer.chat_template)")
        from llama_cpp import llama_chat_format

        self.model = model
        self._formatter: Any = llama_chat_format.Jinja2ChatFormatter(
            template=template, eos_token=model.token_text(model.eos), bos_token=model.token_text(model.bos)
        )
        self.stops: list[str] = []

    def render(self, messages: list[dict[str, str]], generation_prompt: bool = True) -> list[int]:
        """The prompt tokens for ``messages`` (ending with the assistant's turn when ``generation_prompt``)."""
        self._formatter.add_generation_prompt = generation_prompt
        result = self._formatter(messages=messages)
        stop = result.stop
        self.stops = [stop] if isinstance(stop, str) else list(stop or [])
        return self.model.tokenize(result.prompt, add_bos=not result.added_special, special=True)

    def with_next_turn(self, messages: list[dict[str, str]], role: str = "user") -> list[int]:
        """The tokens of ``messages`` followed by the part of a ``role`` message that does not depend on
        its content (``<|im_start|>user`` and a newline under SmolLM2's template).

        A primed prefix is always followed by the user's question, so its opening tokens can be
        evaluated with the prefix once instead of in every call. Found as the tokens that two
        renderings with different contents share, so no template is assumed; only what both
        share is kept, and a question whose tokens begin otherwise is still answered (the cache
        then keeps the longest common start, as without a prefix).
        """
        base = self.render(messages, generation_prompt=False)
        one, two = (self.render([*messages, {"role": role, "content": c}], False) for c in ("A", "z"))
        same = len(base) if one[: len(base)] == base and two[: len(base)] == base else 0
        while same < min(len(one), len(two)) and one[same] == two[same]:
            same += 1
        return one[:same] if same >= len(base) else base
