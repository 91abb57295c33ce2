"""Hypothesis strategies for people who property-test their own planners, validators or annotation tools.

``from barsym.testing import goals, inventories, plans`` gives strategies that
draw from barsym's knowledge base (Minecraft 1.16.5):

- :func:`goals` -- goals the overworld can provide (BAR's tech tree by default);
- :func:`inventories` / :func:`states` -- start inventories (and layers);
- :func:`plans` -- valid plans for drawn goals, made by the symbolic planner
  (from a drawn start, if asked), each checked by the validator;
- :func:`faulty_plans` -- a valid plan with one fault put in (a step dropped,
  inserted or changed, a count cut, two steps swapped), with what was done,
  for testing checkers and repairers;
- :func:`runnable_plans` -- plans drawn step by step among given steps that
  run (valid by construction), for completeness checks of planners;
- :func:`steps` -- arbitrary well-formed steps over the vocabulary.

Needs ``hypothesis`` (``pip install 'barsym[testing]'``); it is imported on
first use of a strategy, so ``import barsym`` never pulls it in.
:mod:`barsym.testing.fakes` has a deterministic scripted model for runs of
the LLM planners without a model.
"""

from __future__ import annotations

from .strategies import TECH_TREE, faulty_plans, goals, inventories, plans, runnable_plans, states, steps

__all__ = ["TECH_TREE", "faulty_plans", "goals", "inventories", "plans", "runnable_plans", "states", "steps"]
