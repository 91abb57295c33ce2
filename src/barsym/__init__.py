"""barsym: BAR-style backward planning for Minecraft tech-tree tasks, checked by a crafting graph.

The public API is reached from here, and loaded only when first used, so that
``import barsym`` (and the ``barsym`` command's start-up) costs next to nothing:

- ``barsym.plan(item, count=1, planner="bar", start=..., ...)`` -> :class:`barsym.api.Planned`
- ``barsym.validate(steps, goal=None, ...)`` -> :class:`barsym.validation.ValidationResult`
- ``barsym.execute(steps, world="stochastic", runs=100, ...)`` -> :class:`barsym.sim.execution.Execution`
- ``barsym.repair(steps, goal=None, ...)`` -> :class:`barsym.consistency.RepairResult`
- ``barsym.env``: a Gymnasium environment over barsym's worlds (``CraftingEnv``, ``barsym/Crafting-v0``; needs ``barsym[env]``)
- ``barsym.testing``: hypothesis strategies for plans, inventories and goals
- the plan model: ``Step``, ``StepType``, ``Plan``, ``Goal``; ``PlanningError``; ``Verdict``
"""

from __future__ import annotations

import importlib

from .lazy_names import lazy_names

__version__ = "0.1.0"

_LAZY = {
    "plan": "api",
    "validate": "api",
    "execute": "api",
    "repair": "api",
    "Planned": "api",
    "knowledge_base": "api",
    "Step": "model",
    "StepType": "model",
    "Plan": "model",
    "Goal": "model",
    "PlanningError": "planner",
    "Verdict": "validation",
}
_SUBMODULES = ("env", "testing")

__all__ = ["__version__", *_LAZY, *_SUBMODULES]


_names, __dir__ = lazy_names(__name__, _LAZY, __all__)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"barsym.{name}")
    return _names(name)
