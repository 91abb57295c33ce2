"""Evaluation, the reporting half: what ``barsym eval`` prints of a run and what ``barsym report`` draws from run files.

BAR's table and the differences (:mod:`.tables`), the model's cost (:mod:`.llm_report`), executions per group
(:mod:`.execution`), Plancraft's table (:mod:`.plancraft`), repeats (:mod:`.repeats`), the text and record of a
finished run (:mod:`.run_report`), and the HTML report with its SVG charts (:mod:`.html_report`, :mod:`.svg`).
It reads what :mod:`barsym.eval` makes -- evaluations, records, run files -- and :mod:`barsym.eval` never imports it.
"""
