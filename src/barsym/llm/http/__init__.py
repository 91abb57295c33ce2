"""The server backend: an OpenAI-compatible chat server reached over HTTP, with the standard library only.

:class:`~.backend.OpenAIHTTPBackend` (``barsym.llm.OpenAIHTTPBackend``) is the backend; :mod:`.transport`
is the HTTP under it (no redirects, no proxy for a loopback host, one deadline per call, capped replies)
and :mod:`.usage` reads the token counts a server reports. Importing this package imports none of them.
"""
