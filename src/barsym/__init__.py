"""barsym: BAR-style backward planning for Minecraft tech-tree tasks, checked by a crafting graph."""

__version__ = "0.1.0"
