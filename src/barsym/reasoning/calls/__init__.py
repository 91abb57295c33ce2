"""The model's calls: the one gateway every call goes through (:mod:`.model_calls`), the one backend builder
(:mod:`.backends`), the SQLite call log ``barsym logs`` shows (:mod:`.call_log`, :mod:`.call_records`) and the typed
progress events (:mod:`.progress`). The bottom of :mod:`barsym.reasoning`: it imports nothing else of it."""
