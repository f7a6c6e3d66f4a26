"""One navigation trace of a timeline user, shared by the outline and windowed-search benches
(bench/bench_search_window.py, clients/jupyter/bench_outlines.py): a view 1/frac of the span at a
random place, then pans of a fifth of the view (mostly forward) and zooms of 1.5x about its centre."""
from __future__ import annotations

import random


def trace(span: tuple[int, int], steps: int, seed: int, frac: int) -> list[tuple[int, int]]:
    rnd = random.Random(seed)
    s0, s1 = span
    length = max((s1 - s0) // frac, 1000)
    start = rnd.randint(s0, max(s0, s1 - length))
    views = [(start, start + length)]
    for _ in range(steps):
        a, b = views[-1]
        n = b - a
        if rnd.random() < 0.8:
            d = n // 5 * (1 if rnd.random() < 0.8 else -1)
            views.append((a + d, b + d))
        else:
            c, half = (a + b) // 2, max(int(n * (1.5 if rnd.random() < 0.5 else 1 / 1.5)) // 2, 500)
            views.append((c - half, c + half))
    return views
