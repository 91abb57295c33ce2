"""The planners that think with the model, by family: :mod:`.backward` (BAR's decomposition, goal by goal) and
:mod:`.forward` (the model writes the whole plan). Registered by :mod:`barsym.reasoning`."""
