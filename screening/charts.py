"""Geometry for small inline SVG charts, rendered by templates (no JavaScript needed to read them)."""

from __future__ import annotations

WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 640, 220, 44, 28, 12
PAD_RIGHT = 24  # room for the last x label ("1.00"), centred on the plot's right edge


def count_ticks(top: int, base: float, plot_h: float) -> list[dict]:
    """Y ticks of a count axis from 0 to `top`: the middle one only where it is a whole count (a top of 1 or 3
    had a middle tick rounded to 0 or 2)."""
    steps = (0, 1, 2) if top % 2 == 0 else (0, 2)
    return [{"y": round(base - plot_h * t / 2, 1), "label": top * t // 2} for t in steps]


def histogram(counts: list[int], *, low: float, high: float, marker: float | None = None) -> dict:
    """Bars for `counts` over equal bins of [low, high], with y ticks and an optional vertical marker."""
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_BOTTOM - PAD_TOP
    top = max(counts) if counts and max(counts) else 1
    step = plot_w / max(len(counts), 1)
    width = (high - low) / max(len(counts), 1)
    bars = []
    for i, count in enumerate(counts):
        h = plot_h * count / top
        # numpy's bins are half-open but the last: [a, b) ... [y, z]; `below` is the largest score in [a, b).
        last = i == len(counts) - 1
        bars.append({
            "x": round(PAD_LEFT + i * step + 1, 1), "y": round(PAD_TOP + plot_h - h, 1),
            "w": round(step - 2, 1), "h": round(h, 1), "count": count,
            "label": f"{low + i * width:.2f}–{low + (i + 1) * width:.2f}",
            "low": round(low + i * width, 6),
            "below": round(low + (i + 1) * width, 6) if last else round(low + (i + 1) * width - 1e-9, 10),
        })
    x_ticks = [{"x": round(PAD_LEFT + plot_w * t / 4, 1), "label": f"{low + (high - low) * t / 4:.2f}"}
               for t in range(5)]
    y_ticks = count_ticks(top, PAD_TOP + plot_h, plot_h)
    result = {"width": WIDTH, "height": HEIGHT, "bars": bars, "x_ticks": x_ticks, "y_ticks": y_ticks,
              "base": PAD_TOP + plot_h, "left": PAD_LEFT, "right": PAD_LEFT + plot_w, "total": sum(counts)}
    if marker is not None:
        x = round(PAD_LEFT + plot_w * (marker - low) / (high - low), 1)
        # Near the right edge the label goes to the left of the line, so it is never cut off.
        result["marker"] = {"x": x, "label": marker, "anchor": "end" if x > WIDTH * 0.7 else "start",
                            "dx": -4 if x > WIDTH * 0.7 else 4}
    return result


def lines(series: dict[str, list[tuple[float, float | None]]], *, low: float = 0.0, high: float = 1.0) -> dict:
    """Polylines over x in [low, high] and y in [0, 1]; None values break nothing (they are skipped)."""
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_BOTTOM - PAD_TOP

    def x(v):
        return round(PAD_LEFT + plot_w * (v - low) / (high - low), 1)

    def y(v):
        return round(PAD_TOP + plot_h * (1 - v), 1)

    out = []
    for i, (name, points) in enumerate(series.items()):
        coords = " ".join(f"{x(a)},{y(b)}" for a, b in points if b is not None)
        out.append({"name": name, "points": coords, "index": i})
    ticks = [{"x": x(low + (high - low) * t / 4), "label": f"{low + (high - low) * t / 4:.2f}"} for t in range(5)]
    y_ticks = [{"y": y(t / 2), "label": f"{t / 2:.1f}"} for t in range(3)]
    return {"width": WIDTH, "height": HEIGHT, "series": out, "x_ticks": ticks, "y_ticks": y_ticks,
            "base": PAD_TOP + plot_h, "left": PAD_LEFT, "right": PAD_LEFT + plot_w}


def paired_histogram(first: list[int], second: list[int], *, low: float = 0.0, high: float = 1.0) -> dict:
    """Two histograms over the same bins, drawn side by side in each bin."""
    chart = histogram([a + b for a, b in zip(first, second, strict=True)], low=low, high=high)
    top = max([*first, *second, 1])
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    bars = []
    for bar, a, b in zip(chart["bars"], first, second, strict=True):
        half = bar["w"] / 2
        for offset, count, name in ((0, a, "positives"), (half, b, "negatives")):
            h = round(plot_h * count / top, 1)
            bars.append({"x": round(bar["x"] + offset, 1), "y": round(chart["base"] - h, 1), "w": round(half, 1),
                         "h": h, "count": count, "label": bar["label"], "series": name})
    chart["bars"] = bars
    chart["y_ticks"] = count_ticks(top, chart["base"], plot_h)
    return chart
