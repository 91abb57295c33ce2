"""Package attributes loaded on first use (PEP 562), so that importing a package stays light.

``barsym``, ``barsym.llm``, ``barsym.memory`` and ``barsym.consistency`` name their public
objects in ``__all__`` but import the modules behind them only when a name is read: a symbolic
``barsym plan`` then never loads the model side, numpy or SQLite. One helper, so the four
packages' tables differ only in what they list.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_names(
    package: str, table: Mapping[str, str | tuple[str, str]], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` over ``table``: name -> module, or (module, attribute),
    each module named relative to ``package`` (``"decomposer"`` for ``barsym.memory.decomposer``)."""
    namespace = importlib.import_module(package).__dict__
    listed = list(public)

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where if isinstance(where, tuple) else (where, name)
        value = getattr(importlib.import_module(f"{package}.{module}"), attribute)
        namespace[name] = value  # looked up once
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(listed))

    return __getattr__, __dir__
