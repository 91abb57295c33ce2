"""Sub-commands of the ``barsym`` CLI, one module each (``HELP``, ``DESCRIPTION``, ``add_arguments``, ``run``)."""

COMMANDS = [
    "validate",
    "parse",
    "execute",
    "graph",
    "plan",
    "eval",
    "report",
    "score",
    "repair",
    "memory",
    "logs",
    "datasets",
    "versions",
    "distill",
    "model",
    "completion",
]
