"""Inline SVG plots (no library, no script): a histogram and a bar chart, labels escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence

from datasolver.clip import clip

WIDTH, HEIGHT, PAD = 460, 180, 28


def histogram(values: Sequence[float], bins: Sequence[tuple[float, float, str]], title: str) -> str:
    """Counts of `values` per (low, high, label) bin (low inclusive; the last bin includes high)."""
    counts = []
    for index, (low, high, _) in enumerate(bins):
        last = index == len(bins) - 1
        counts.append(sum(1 for v in values if low <= v < high or (last and v == high)))
    return bar_chart([label for _, _, label in bins], counts, title, x_title="", every_label=True)


def bar_chart(labels: Sequence[str], values: Sequence[float], title: str, *, x_title: str = "",
              every_label: bool = False, unit: str = "") -> str:
    """Vertical bars, one per label, scaled to the largest value; each bar has a <title> tooltip."""
    n = max(len(values), 1)
    top = max(values, default=0) or 1
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD
    step = inner_w / n
    parts = [f'<svg class="plot" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
             f'<title>{_e(title)}</title>',
             f'<text x="{PAD}" y="16" class="pt">{_e(title)}</text>',
             f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" class="ax"/>',
             f'<text x="{PAD - 4}" y="{PAD + 4}" class="pl" text-anchor="end">{_num(top)}</text>']
    label_every = 1 if every_label or n <= 12 else max(1, n // 8)
    for i, (label, value) in enumerate(zip(labels, values)):
        h = inner_h * (value / top)
        x = PAD + i * step
        parts.append(f'<rect x="{x + step * 0.1:.1f}" y="{HEIGHT - PAD - h:.1f}" width="{max(step * 0.8, 0.5):.1f}" '
                     f'height="{h:.1f}" class="bar"><title>{_e(label)}: {_num(value)}{_e(unit)}</title></rect>')
        if i % label_every == 0:
            parts.append(f'<text x="{x + step / 2:.1f}" y="{HEIGHT - PAD + 12}" class="pl" text-anchor="middle">'
                         f'{_e(_short(label))}</text>')
    if x_title:
        parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 2}" class="pl" text-anchor="middle">{_e(x_title)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _num(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() or value >= 100 else f"{value:.1f}"


def _short(label: str) -> str:
    return clip(label, 10)
