"""Geometry for small inline SVG charts, rendered by templates (no JavaScript needed to read them)."""

from __future__ import annotations

WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 640, 220, 44, 28, 12


def histogram(counts: list[int], *, low: float, high: float, marker: float | None = None) -> dict:
    """Bars for `counts` over equal bins of [low, high], with y ticks and an optional vertical marker."""
    plot_w, plot_h = WIDTH - PAD_LEFT - 8, HEIGHT - PAD_BOTTOM - PAD_TOP
    top = max(counts) if counts and max(counts) else 1
    step = plot_w / max(len(counts), 1)
    width = (high - low) / max(len(counts), 1)
    bars = []
    for i, count in enumerate(counts):
        h = plot_h * count / top
        bars.append({
            "x": round(PAD_LEFT + i * step + 1, 1), "y": round(PAD_TOP + plot_h - h, 1),
            "w": round(step - 2, 1), "h": round(h, 1), "count": count,
            "label": f"{low + i * width:.2f}–{low + (i + 1) * width:.2f}",
        })
    x_ticks = [{"x": round(PAD_LEFT + plot_w * t / 4, 1), "label": f"{low + (high - low) * t / 4:.2f}"}
               for t in range(5)]
    y_ticks = [{"y": round(PAD_TOP + plot_h - plot_h * t / 2, 1), "label": round(top * t / 2)} for t in range(3)]
    result = {"width": WIDTH, "height": HEIGHT, "bars": bars, "x_ticks": x_ticks, "y_ticks": y_ticks,
              "base": PAD_TOP + plot_h, "left": PAD_LEFT, "right": PAD_LEFT + plot_w, "total": sum(counts)}
    if marker is not None:
        result["marker"] = {"x": round(PAD_LEFT + plot_w * (marker - low) / (high - low), 1), "label": marker}
    return result
