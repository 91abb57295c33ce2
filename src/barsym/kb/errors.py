"""Errors raised while loading the knowledge base (kept import-light for warm starts)."""


class DataFileError(ValueError):
    """A data file is missing, is not JSON, or does not match its schema."""


class VersionNotSupportedError(ValueError):
    """minecraft-data has no data for the requested game version."""
