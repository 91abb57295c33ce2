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
