"""Turning RPC results into pandas DataFrames (when pandas is installed)."""
from __future__ import annotations

from typing import Any, Iterable, Optional

try:  # pandas is optional: without it results stay plain dicts and lists
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the clean-venv smoke test
    _pd = None


def have_pandas() -> bool:
    return _pd is not None


# Times on the profile's clock, in ns, besides the `...Ns` durations (docs: the README's "DataFrames").
TIME_COLUMNS = frozenset({"start", "end", "gpuStart", "gpuEnd"})


def ns_columns(cols: Iterable[str]) -> dict[str, str]:
    """The columns in ns: durations named `...Ns` (totalNs, avgNs, busyNs, ...) and the times
    start, end, gpuStart, gpuEnd (ns on the profile's clock)."""
    return {c: "ns" for c in cols if c.endswith("Ns") or c in TIME_COLUMNS}


def frame(rows: list[dict], attrs: Optional[dict] = None, columns: Optional[Iterable[str]] = None) -> Any:
    """A DataFrame of `rows` (column order: `columns` first, then first-seen keys). Integer
    columns stay exact: int64, or pandas' nullable Int64 where some rows have none (never
    float64, which would round an epoch clock's ns). `df.attrs["units"]` names the columns in
    ns (ns_columns)."""
    assert _pd is not None
    cols: list[str] = list(columns or [])
    seen = set(cols)
    for r in rows[:64]:  # rows of one result share their keys; sampling keeps this O(1)
        for k in r:
            if k not in seen:
                seen.add(k)
                cols.append(k)
    df = _pd.DataFrame.from_records(rows, columns=cols) if rows else _pd.DataFrame(columns=cols)
    for c in cols:  # a column of ints with gaps: nullable Int64 from the exact Python ints
        if rows and df[c].dtype.kind in "fO":
            vals = [r.get(c) for r in rows]
            if any(v is not None for v in vals) and \
                    all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in vals):
                df[c] = _pd.array(vals, dtype="Int64")
    if attrs:
        df.attrs.update(attrs)
    df.attrs["units"] = ns_columns(cols)
    return df


def flatten_tree(roots: list[dict]) -> list[dict]:
    """NVTX tree nodes depth-first, each with `depth`, `path` (' > '-joined) and no `children`."""
    out: list[dict] = []
    stack: list[tuple[dict, int, str]] = [(n, 0, "") for n in reversed(roots)]
    while stack:
        node, depth, parent = stack.pop()
        name = str(node.get("name", ""))
        path = f"{parent} > {name}" if parent else name
        row = {k: v for k, v in node.items() if k != "children"}
        row["depth"] = depth
        row["path"] = path
        row["children"] = len(node.get("children") or [])
        out.append(row)
        for child in reversed(node.get("children") or []):
            stack.append((child, depth + 1, path))
    return out


def timeline_rows(result: dict) -> list[dict]:
    """One row per event or bucket of a timeline/range result, tagged with its track."""
    rows: list[dict] = []
    for t in result.get("tracks", []):
        tid = t.get("id")
        for e in t.get("events") or []:
            rows.append({"track": tid, "type": "event", **e})
        for b in t.get("buckets") or []:
            longest = b.get("longest") or {}
            rows.append({"track": tid, "type": "bucket", "start": b.get("start"), "end": b.get("end"),
                         "count": b.get("count"), "busyNs": b.get("busyNs"),
                         "id": longest.get("id"), "name": longest.get("name"),
                         "longestNs": longest.get("dur")})
    return rows
