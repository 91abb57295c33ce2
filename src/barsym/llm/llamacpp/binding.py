"""llama-cpp-python itself: imported only when a model is loaded, pinned to the release barsym is tested with.

Kept apart from the backend because two things about the binding are not about
running a model: which releases are accepted (a changed C binding gives wrong
text, not an error, so an untested one is refused unless asked for), and how
llama.cpp's own messages, which go to the C ``stderr`` and bypass Python, are
caught so they can be put into an exception instead of onto the console.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..base import BackendUnavailableError

__all__ = ["SUPPORTED_VERSIONS", "UNTESTED_ENV", "captured_stderr_fd", "import_llama_cpp"]

#: the llama-cpp-python releases barsym is tested with (pyproject.toml pins the same)
SUPPORTED_VERSIONS = ("0.3.36",)
UNTESTED_ENV = "BARSYM_UNTESTED_LLAMA_CPP"


def import_llama_cpp() -> Any:
    """Import ``llama_cpp`` or raise :class:`BackendUnavailableError` with the install command.

    A release barsym is not tested with is refused (its C bindings change
    between releases, and a changed binding gives wrong text, not an error),
    unless ``BARSYM_UNTESTED_LLAMA_CPP=1``.
    """
    try:
        import llama_cpp
    except ImportError as exc:
        raise BackendUnavailableError(
            f"llama-cpp-python is not importable ({exc}). Install barsym's model extra with "
            "`pip install 'barsym[llm]'` (builds llama.cpp from source; needs a C++ "
            "compiler and cmake), or use an HTTP server backend instead."
        ) from None
    version = getattr(llama_cpp, "__version__", "?")
    if version not in SUPPORTED_VERSIONS and os.environ.get(UNTESTED_ENV) != "1":
        raise BackendUnavailableError(
            f"llama-cpp-python {version} is installed, but barsym is tested with "
            f"{', '.join(SUPPORTED_VERSIONS)} only: `pip install llama-cpp-python=={SUPPORTED_VERSIONS[-1]}` "
            f"(or set {UNTESTED_ENV}=1 to try it anyway)."
        )
    return llama_cpp


@contextmanager
def captured_stderr_fd() -> Iterator[list[str]]:
    """Redirect OS-level fd 2 into a buffer for the duration of the block.

    llama.cpp's grammar parser writes its error straight to C ``stderr``,
    bypassing Python and llama-cpp-python's log callback.  Capturing it keeps
    the console clean and lets the message go into the exception instead.
    The yielded list receives the captured text when the block exits.
    """
    out: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield out  # no usable fd 2 (daemonised, closed): nothing to capture
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))
