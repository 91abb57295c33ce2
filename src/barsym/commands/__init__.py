"""Sub-commands of the ``barsym`` CLI, one module each (``add_parser`` + ``run``)."""

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
    "distill",
    "completion",
]
