"""Self-contained SVG charts (no script, no font file, no external reference): a line chart of
a metric over runs with one series per backend, regressions marked, and a horizontal bar
chart. Every text is escaped; each chart carries a title and a description for screen readers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "bar_chart", "line_chart"]

# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), darkened where
# needed for at least 3:1 contrast against white as WCAG asks of graphics.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#806000", "#56429B", "#B8336A", "#333333")
REGRESSION = "#B00020"
WIDTH, HEIGHT = 640, 280
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 56


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    step = 10 ** math.floor(math.log10((hi - lo) / n))
    for mult in (1, 2, 2.5, 5, 10):
        if (hi - lo) / (step * mult) <= n:
            step *= mult
            break
    start = math.floor(lo / step) * step
    out = [round(start, 12)]
    while out[-1] < hi - step * 1e-9 and len(out) < 3 * n:  # the last tick at or above hi
        out.append(round(start + len(out) * step, 12))
    return out if len(out) >= 2 else [lo, hi]


def line_chart(
    chart_id: str,
    title: str,
    unit: str,
    series: Mapping[str, Sequence[tuple[str, float, bool]]],
    *,
    note: str = "",
) -> str:
    """Points (x label, value, regression) per series, drawn over their run index."""
    values = [v for pts in series.values() for _, v, _ in pts]
    n = max((len(p) for p in series.values()), default=0)
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    lo = min(lo, 0.0) if lo >= 0 and lo < hi * 0.5 else lo
    ticks = _ticks(lo, hi)
    lo, hi = ticks[0], ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * (i + 0.5) / max(n, 1))

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / ((hi - lo) or 1.0))

    desc = "; ".join(
        f"{name}: " + ", ".join(f"{label} {_fmt(v)}{' (regression)' if r else ''}" for label, v, r in pts)
        for name, pts in series.items()
    )
    parts = [_open(chart_id, title, (note + " " if note else "") + desc)]
    for t in ticks:
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{escape(_fmt(t))}</text>'
        )
    parts.append(
        f'<text class="axis" x="14" y="{TOP + plot_h / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.0f})">{escape(unit or "value")}</text>'
        f'<text class="axis" x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 26}" text-anchor="middle">'
        "run (oldest first)</text>"
    )
    step = max(1, math.ceil(n / 20))  # at most about 20 run numbers under the axis
    for i in range(0, n, step):
        parts.append(
            f'<text class="tick" x="{x(i):.1f}" y="{TOP + plot_h + 14}" text-anchor="middle">{i + 1}</text>'
        )
    for k, (name, pts) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        coords = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, (_, v, _) in enumerate(pts))
        if len(pts) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
        for i, (label, v, regression) in enumerate(pts):
            tip = f"{name} {label}: {_fmt(v)} {unit}".strip() + (" — regression" if regression else "")
            parts.append(
                f'<circle class="point" cx="{x(i):.1f}" cy="{y(v):.1f}" r="4" fill="{colour}">'
                f"<title>{escape(tip)}</title></circle>"
            )
            if regression:
                cx, cy = x(i), y(v) - 10
                parts.append(
                    f'<path class="regression" d="M{cx - 6:.1f},{cy - 8:.1f} L{cx + 6:.1f},{cy - 8:.1f} '
                    f'L{cx:.1f},{cy:.1f} Z" fill="{REGRESSION}"><title>{escape(tip)}</title></path>'
                )
    parts.append(_legend(list(series)))
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(
    chart_id: str, title: str, unit: str, bars: Sequence[tuple[str, float]], *, note: str = ""
) -> str:
    """Horizontal bars (label, value), one per row; values are printed beside their bar."""
    height = TOP + 28 * max(len(bars), 1) + 24
    top = max((v for _, v in bars), default=1.0) or 1.0
    label_w = 180
    plot_w = WIDTH - label_w - 80
    desc = "; ".join(f"{label} {_fmt(v)} {unit}".strip() for label, v in bars)
    parts = [_open(chart_id, title, (note + " " if note else "") + desc, height=height)]
    for i, (label, v) in enumerate(bars):
        y0 = TOP + 28 * i
        w = max(plot_w * v / top, 1.0) if v > 0 else 1.0
        shown = label if len(label) <= 28 else label[:27] + "…"
        parts.append(
            f'<text class="tick" x="{label_w - 8}" y="{y0 + 15}" text-anchor="end">{escape(shown)}</text>'
            f'<rect x="{label_w}" y="{y0 + 2}" width="{w:.1f}" height="18" '
            f'fill="{PALETTE[i % len(PALETTE)]}">'
            f"<title>{escape(label)}: {escape(_fmt(v))} {escape(unit)}</title></rect>"
            f'<text class="tick" x="{label_w + w + 6:.1f}" y="{y0 + 15}">'
            f"{escape(_fmt(v))} {escape(unit)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _open(chart_id: str, title: str, desc: str, *, height: int = HEIGHT) -> str:
    cid = escape(chart_id)
    return (
        f'<svg class="chart" id="{cid}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-labelledby="{cid}-t {cid}-d">'
        f'<title id="{cid}-t">{escape(title)}</title><desc id="{cid}-d">{escape(desc)}</desc>'
    )


def _legend(names: list[str]) -> str:
    parts = []
    x0 = LEFT
    for k, name in enumerate(names):
        colour = PALETTE[k % len(PALETTE)]
        parts.append(
            f'<rect x="{x0}" y="{HEIGHT - 18}" width="12" height="12" fill="{colour}"/>'
            f'<text class="tick" x="{x0 + 16}" y="{HEIGHT - 8}">{escape(name)}</text>'
        )
        x0 += 24 + 8 * len(name)
    parts.append(
        f'<path d="M{x0 + 4},{HEIGHT - 18} L{x0 + 16},{HEIGHT - 18} L{x0 + 10},{HEIGHT - 7} Z" '
        f'fill="{REGRESSION}"/>'
        f'<text class="tick" x="{x0 + 20}" y="{HEIGHT - 8}">regression</text>'
    )
    return "".join(parts)
