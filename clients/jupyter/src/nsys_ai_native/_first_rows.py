"""The tracks the widget's first frame shows: the rows of its track tree in their default state
(clients/vscode/src/client/trackTree.ts `trackTree` + `visibleRows`, which the widget imports;
nothing toggled, hidden or pinned) that fit its plot's height (js/src/timeline.ts
`visibleTracks`: the rows in view with two rows of margin). `show()` sends the first view's
data for these tracks only; the page asks for the rest right after its first frame. A row this
rule misses is not wrong, only slower: the page asks for the rows in view it lacks, as after any
scroll (the browser test checks that the first frame asked nothing)."""
from __future__ import annotations

import math
from typing import Any, Optional

# js/src/timeline.ts: the time axis's height and a row's (px)
AXIS_H = 22
ROW_H = 16


def _num(t: dict, key: str) -> float:
    v = t.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else 0  # JS `?? 0`


def _node(key: str, ids: list[str], children: list[dict], open_: bool) -> dict:
    return {"key": key, "ids": ids, "children": children, "open": open_}


def _nvtx_node(key: str, rows: list[dict]) -> Optional[dict]:
    if not rows:
        return None
    top, *deeper = sorted(rows, key=lambda t: _num(t, "depth"))
    return _node(key, [str(top["id"])], [_node(str(t["id"]), [str(t["id"])], [], True) for t in deeper], False)


def track_tree(tracks: list[dict]) -> list[dict]:
    """trackTree's nodes (key, ids drawn in the node's own row, children, open by default)."""
    out: list[dict] = []
    devices = sorted({_num(t, "device") for t in tracks if t.get("kind") in ("gpu", "nvtxProjected")})
    for d in devices:
        streams = sorted((t for t in tracks if t.get("kind") == "gpu" and _num(t, "device") == d),
                         key=lambda t: (_num(t, "stream"), _num(t, "pid")))
        children = [_node(str(t["id"]), [str(t["id"])], [], True) for t in streams]
        proj = _nvtx_node(f"proj:{d}", [t for t in tracks if t.get("kind") == "nvtxProjected" and _num(t, "device") == d])
        if proj:
            children.append(proj)
        out.append(_node(f"gpu:{d}", [str(t["id"]) for t in streams], children, True))
    host = [t for t in tracks if t.get("kind") in ("nvtx", "api")]
    for pid in sorted({_num(t, "pid") for t in host}):
        mine = [t for t in host if _num(t, "pid") == pid]
        threads = []
        for tid in sorted({_num(t, "tid") for t in mine}):
            rows = [t for t in mine if _num(t, "tid") == tid]
            kids: list[dict] = []
            nvtx = _nvtx_node(f"nvtx:{pid}:{tid}", [t for t in rows if t.get("kind") == "nvtx"])
            if nvtx:
                kids.append(nvtx)
            kids += [_node(str(t["id"]), [str(t["id"])], [], True) for t in rows if t.get("kind") == "api"]
            threads.append(_node(f"thread:{pid}:{tid}", [], kids, True))
        out.append(_node(f"proc:{pid}", [], threads, True))
    return out


def _summary(n: dict) -> list[str]:
    return n["ids"] if n["ids"] else [i for c in n["children"] for i in _summary(c)]


def default_rows(tracks: list[dict]) -> list[list[str]]:
    """visibleRows of the default state: each row's track ids, in order."""
    rows: list[list[str]] = []

    def walk(n: dict) -> None:
        is_open = bool(n["children"]) and n["open"]
        rows.append(n["ids"] if is_open else _summary(n))
        if is_open:
            for c in n["children"]:
                walk(c)
    for n in track_tree(tracks):
        walk(n)
    return rows


def first_tracks(tracks: list[Any], height: int) -> Optional[list[str]]:
    """The ids of the tracks the first frame draws in a widget `height` px tall (its plot's
    maximum height), or None when that is every track."""
    tracks = [t for t in tracks if isinstance(t, dict) and "id" in t]
    rows = default_rows(tracks)
    total_h = AXIS_H + max(1, len(rows)) * ROW_H + 4
    h = min(max(1, int(height)), total_h)
    shown = min(len(rows), math.ceil((h - AXIS_H) / ROW_H) + 2)
    ids = {i for r in rows[:shown] for i in r}
    return None if len(ids) >= len(tracks) else [str(t["id"]) for t in tracks if str(t["id"]) in ids]
