"""The pieces every section of ``barsym report`` is made of: tables, sections, rates with their intervals.

A success rate from 4 tasks and one from 53 look alike as percentages; the
interval says how much each is worth. Every rate the report shows goes through
:func:`rate_text`, which writes the rate and its 95 % Wilson score interval
(the same interval ``barsym execute`` prints: sound at 0 % and 100 %, where
the normal approximation collapses to a point).
"""

from __future__ import annotations

from html import escape

from ..sim.execution import wilson_interval

#: said once on the page, under the first table with intervals
INTERVAL_NOTE = (
    "Success rates are given with their 95 % Wilson score interval in brackets "
    "(successes out of trials; sound at 0 % and 100 %)."
)


def table(head: list[str], rows: list[list[str]], html_cells: bool = False) -> str:
    """A table; cells are escaped text, or (``html_cells``) HTML the caller built and escaped."""
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    show = (lambda c: c) if html_cells else escape
    body = "".join("<tr>" + "".join(f"<td>{show(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def pct(value) -> str:
    return "-" if value is None or value != value or abs(value) == float("inf") else f"{value:.1f} %"


def section(title: str, *parts: str) -> str:
    return f"<section><h2>{escape(title)}</h2>{''.join(parts)}</section>"


def interval(successes: int, trials: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``successes`` out of ``trials``, in per cent."""
    low, high = wilson_interval(successes, trials)
    return 100.0 * low, 100.0 * high


def rate_text(successes: int, trials: int) -> str:
    """``75.0 % [30.1-95.4] of 4``, or ``-`` without trials."""
    if trials <= 0:
        return "-"
    low, high = interval(successes, trials)
    return f"{100.0 * successes / trials:.1f} % [{low:.1f}-{high:.1f}] of {trials}"


def note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'
