"""Inline SVG plots (no library, no script): a histogram and a bar chart, labels escaped.

Every label is placed so that it fits inside the plot whatever the numbers and names: the left
margin grows with the widest value label (`24,803`, `1,234,567`), task names under the bars are
shortened and spaced so neighbours never overlap, and the title is cut to the plot's width. Text
widths are estimated generously from DejaVu Sans' advance widths (the widest common sans-serif
font; bold and CJK glyphs counted wider): a browser's own font is no wider.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from datasolver.clip import ELLIPSIS

WIDTH, HEIGHT, PAD = 460, 180, 28
RIGHT_PAD = 12
TITLE_PX, LABEL_PX = 12, 10
"""Font sizes of the title (class `pt`, bold) and of the labels (class `pl`), as page.css sets them."""
GAP = 4
"""Pixels between a label and the axis, the plot's edge or its neighbour."""
LABEL_CHARS = 10
"""A label under a bar is cut to at most this many characters (the bar's tooltip has it whole)."""

_NARROW = set("iIjJlftr.,:;'`|!/\\()[]- ")
_WIDE = set("mwMW%@")
_SYMBOLS = set("#+<=>^~&")
_BOLD = 1.15


def text_width(text: str, px: float, *, bold: bool = False) -> float:
    """A generous estimate of `text`'s width in pixels at font size `px` (per-character em widths at
    or above DejaVu Sans'; any non-ASCII character counts a full em, as CJK glyphs are)."""
    em = 0.0
    for char in text:
        if char.isdigit() and char.isascii():
            em += 0.64
        elif char in _NARROW:
            em += 0.42
        elif char in _WIDE or not char.isascii():
            em += 1.0
        elif char in _SYMBOLS:
            em += 0.84
        elif char.isupper():
            em += 0.8
        else:
            em += 0.65
    return em * px * (_BOLD if bold else 1.0)


def fit(text: str, room: float, px: float, *, bold: bool = False, most: int | None = None) -> str:
    """`text`, cut with "…" (and to at most `most` characters) so that it fits `room` pixels."""
    if most is not None and len(text) > most:
        text = text[: max(0, most - 1)] + ELLIPSIS
    if text_width(text, px, bold=bold) <= room:
        return text
    body = text.removesuffix(ELLIPSIS)
    while body and text_width(body + ELLIPSIS, px, bold=bold) > room:
        body = body[:-1]
    return body + ELLIPSIS if body else ""


def histogram(values: Sequence[float], bins: Sequence[tuple[float, float, str]], title: str) -> str:
    """Counts of `values` per (low, high, label) bin (low inclusive; the last bin includes high)."""
    counts = []
    for index, (low, high, _) in enumerate(bins):
        last = index == len(bins) - 1
        counts.append(sum(1 for v in values if low <= v < high or (last and v == high)))
    return bar_chart([label for _, _, label in bins], counts, title, x_title="", every_label=True)


def bar_chart(labels: Sequence[str], values: Sequence[float], title: str, *, x_title: str = "",
              every_label: bool = False, unit: str = "") -> str:
    """Vertical bars, one per label, scaled to the largest value; each bar has a <title> tooltip.

    With `every_label` each bar keeps its label (cut to the bar's width); otherwise labels are
    spaced out (every k-th bar) so that each fits whole up to LABEL_CHARS characters."""
    n = max(len(values), 1)
    top = max(values, default=0) or 1
    top_label = _num(top)
    left = max(PAD, math.ceil(max(text_width(top_label, LABEL_PX), text_width("0", LABEL_PX)) + 2 * GAP))
    inner_w, inner_h = WIDTH - left - RIGHT_PAD, HEIGHT - 2 * PAD
    step = inner_w / n
    base = HEIGHT - PAD
    parts = [f'<svg class="plot" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
             f'<title>{_e(title)}</title>',
             f'<text x="{GAP}" y="16" class="pt">{_e(fit(title, WIDTH - 2 * GAP, TITLE_PX, bold=True))}</text>',
             f'<line x1="{left}" y1="{base}" x2="{WIDTH - RIGHT_PAD}" y2="{base}" class="ax"/>',
             f'<text x="{left - GAP}" y="{PAD + 4}" class="pl" text-anchor="end">{_e(top_label)}</text>',
             f'<text x="{left - GAP}" y="{base}" class="pl" text-anchor="end">0</text>']
    shown = [fit(str(label), math.inf, LABEL_PX, most=LABEL_CHARS) for label in labels]
    if every_label:
        every = 1
    else:
        widest = max((text_width(s, LABEL_PX) for s in shown), default=0.0)
        every = max(1, math.ceil((widest + GAP) / step))
    taken = 0.0  # where the last label under the bars ends
    for i, (label, value) in enumerate(zip(labels, values)):
        h = inner_h * (value / top)
        x = left + i * step
        parts.append(f'<rect x="{x + step * 0.1:.1f}" y="{base - h:.1f}" width="{max(step * 0.8, 0.5):.1f}" '
                     f'height="{h:.1f}" class="bar"><title>{_e(label)}: {_num(value)}{_e(unit)}</title></rect>')
        if i % every == 0:
            text = fit(shown[i], step * every - GAP, LABEL_PX)
            half = text_width(text, LABEL_PX) / 2
            centre = min(max(x + step / 2, half + 1), WIDTH - half - 1)  # the first and last stay inside
            if text and centre - half >= taken:  # one pushed in from the edge may meet its neighbour: left out
                taken = centre + half + GAP
                parts.append(f'<text x="{centre:.1f}" y="{base + 12}" class="pl" text-anchor="middle">'
                             f'{_e(text)}</text>')
    if x_title:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 2}" class="pl" text-anchor="middle">'
                     f'{_e(fit(x_title, WIDTH - 2 * GAP, LABEL_PX))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _num(value: float) -> str:
    """`24,803`, `1,234,567`, `12.5`: whole numbers (and any from 100 up) with thousands separators."""
    return f"{value:,.0f}" if float(value).is_integer() or value >= 100 else f"{value:,.1f}"
