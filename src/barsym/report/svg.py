"""Bar charts as inline SVG text, for ``barsym report``.

The report must be one file that opens anywhere, offline, years later: no
plotting library, no script from a CDN, no images beside it. A grouped bar
chart is all the report needs (groups on the x axis, one bar per planner),
so it is drawn here as plain SVG elements with a legend, a y axis with grid
lines, and each bar's value written above it (a chart must be readable
without hovering). Every label is XML-escaped: planner and group names come
from files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: colour-blind-safe (Okabe-Ito) series colours
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


@dataclass(frozen=True)
class Series:
    label: str
    values: Sequence[float | None]  # one per category; None: no value (nothing drawn, "-" written)


def _nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5, 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _fmt(value: float) -> str:
    if value >= 100 or value == int(value):
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


CHAR = 6.6  # px per character of the 11 px axis and legend text (a wide estimate: labels never overlap)
TITLE_CHAR = 8.2  # px per character of the 14 px bold title
MAX_WIDTH = 1000
PLOT_HEIGHT = 160


def _px(text: str) -> float:
    return len(text) * CHAR


def _lines(label: str, room: float) -> list[str]:
    """A category label as one line, or two where it does not fit ``room`` px (broken at ``[``, ``_`` or
    ``-`` nearest the middle), each line cut with an ellipsis only if it still does not fit."""
    if _px(label) <= room:
        return [label]
    breaks = [i for i, ch in enumerate(label) if ch in "[_-" and 0 < i < len(label)]
    cut = min(breaks, key=lambda i: abs(i - len(label) / 2), default=len(label) // 2)
    most = max(1, int(room // CHAR))
    return [part if len(part) <= most else part[: most - 1] + "\u2026" for part in (label[:cut], label[cut:])]


def _legend(series: Sequence[Series], left: int, width: int) -> tuple[list[str], int]:
    """Legend swatches, as many rows as the labels need (whole labels, never cut); and the y below them."""
    parts, x, y = [], left, 30
    for i, s in enumerate(series):
        need = 17 + _px(s.label) + 18
        if x > left and x + need > width:
            x, y = left, y + 18
        parts.append(
            f'<rect x="{x}" y="{y}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 17}" y="{y + 11}" class="legend">{escape(s.label)}</text>'
        )
        x += need
    return parts, y + 30  # room for the values written above the highest bars


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    unit: str = "",
    y_max: float | None = None,
    width: int | None = None,
    height: int | None = None,
) -> str:
    """A grouped bar chart: ``categories`` along x, one bar per series in each.

    Sized to what it shows unless told: each category as wide as its bars and its label need (labels
    are written whole, on two lines where the chart would otherwise pass :data:`MAX_WIDTH`), the plot
    :data:`PLOT_HEIGHT` px high, the legend in as many rows as its labels take."""
    values = [v for s in series for v in s.values if v is not None]
    top = y_max if y_max is not None else _nice_max(max(values, default=0.0) * 1.08)
    left, right, lower = 56, 16, 46
    longest = max((_px(c) for c in categories), default=0.0)
    need = max(len(series) * 26 + 14, longest + 12)
    if width is None:
        wanted = left + right + need * max(1, len(categories))
        width = int(max(320, len(title) * TITLE_CHAR + left + right, min(MAX_WIDTH, wanted)))
    legend, upper = _legend(series, left, width)
    plot_w = width - left - right
    slot = plot_w / max(1, len(categories))
    labels = [_lines(c, slot - 6) for c in categories]
    if any(len(lines) > 1 for lines in labels):
        lower += 14
    plot_h = (height - upper - lower) if height is not None else PLOT_HEIGHT
    height = upper + plot_h + lower
    bar_w = max(3.0, min(38.0, (slot * 0.8) / max(1, len(series))))
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{left}" y="20" class="title">{escape(title)}</text>',
        *legend,
    ]
    for tick in range(5):
        value = top * tick / 4
        y = upper + plot_h - plot_h * tick / 4
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" class="axis" text-anchor="end">{_fmt(value)}{unit}</text>'
        )
    for c, category in enumerate(categories):
        group_x = left + c * slot + (slot - bar_w * len(series)) / 2
        for i, s in enumerate(series):
            value = s.values[c] if c < len(s.values) else None
            x = group_x + i * bar_w
            if value is None:
                parts.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{upper + plot_h - 4}" class="value" '
                    f'text-anchor="middle">-</text>'
                )
                continue
            h = plot_h * min(value, top) / top if top else 0
            y = upper + plot_h - h
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[i % len(PALETTE)]}"><title>{escape(s.label)}, {escape(category)}: '
                f"{_fmt(value)}{escape(unit)}</title></rect>"
            )
            if bar_w >= 14:
                parts.append(
                    f'<text x="{x + bar_w / 2 - 1:.1f}" y="{y - 3:.1f}" class="value" '
                    f'text-anchor="middle">{_fmt(value)}</text>'
                )
        centre = left + c * slot + slot / 2
        for n, line in enumerate(labels[c]):
            parts.append(
                f'<text x="{centre:.1f}" y="{upper + plot_h + 18 + 13 * n}" class="axis" '
                f'text-anchor="middle">{escape(line)}<title>{escape(category)}</title></text>'
            )
    parts.append(f'<line x1="{left}" y1="{upper + plot_h}" x2="{left + plot_w}" y2="{upper + plot_h}" class="base"/>')
    parts.append("</svg>")
    return "".join(parts)
