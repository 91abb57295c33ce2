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


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    unit: str = "",
    y_max: float | None = None,
    width: int = 760,
    height: int = 300,
) -> str:
    """A grouped bar chart: ``categories`` along x, one bar per series in each."""
    values = [v for s in series for v in s.values if v is not None]
    top = y_max if y_max is not None else _nice_max(max(values, default=0.0) * 1.08)
    left, right, upper, lower = 56, 16, 52, 46
    plot_w, plot_h = width - left - right, height - upper - lower
    slot = plot_w / max(1, len(categories))
    bar_w = max(3.0, min(38.0, (slot * 0.8) / max(1, len(series))))
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{left}" y="20" class="title">{escape(title)}</text>',
    ]
    for i, s in enumerate(series):  # legend, one swatch per series
        x = left + i * 150
        parts.append(
            f'<rect x="{x}" y="30" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 17}" y="41" class="legend">{escape(s.label[:20])}</text>'
        )
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
        parts.append(
            f'<text x="{left + c * slot + slot / 2:.1f}" y="{upper + plot_h + 18}" class="axis" '
            f'text-anchor="middle">{escape(category[:14])}</text>'
        )
    parts.append(f'<line x1="{left}" y1="{upper + plot_h}" x2="{left + plot_w}" y2="{upper + plot_h}" class="base"/>')
    parts.append("</svg>")
    return "".join(parts)
