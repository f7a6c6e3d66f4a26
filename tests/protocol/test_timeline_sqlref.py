"""Independent reference implementations (Python + sqlite3, written from the
nsys schema documentation, not from the C code) used by the timeline, tree,
search, export and details tests. No tests here."""
from __future__ import annotations

import bisect
import sqlite3
from collections import defaultdict
from pathlib import Path

GPID_MASK = -16777216  # 0xFFFFFFFFFF000000 as a signed 64-bit integer

COPY_NAMES = {1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP", 11: "Unified HtoD", 12: "Unified DtoH", 13: "Unified DtoD", 0: "Unknown"}


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def tables(db) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(db, table: str) -> set[str]:
    return {r[1] for r in db.execute(f'PRAGMA table_info("{table}")')}


def gpu_ops(db) -> list[tuple]:
    """(kind, deviceId, streamId, pid, start, end, correlationId, globalPid, nameId-or-copyKind-or-graphId);
    kind "graph": a whole CUDA graph launch (graph-level tracing, CUPTI_ACTIVITY_KIND_GRAPH_TRACE)"""
    out = []
    t = tables(db)
    for kind, table in (("kernel", "CUPTI_ACTIVITY_KIND_KERNEL"), ("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"),
                        ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"), ("graph", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")):
        if table not in t:
            continue
        extra = {"kernel": "shortName", "memcpy": "copyKind", "graph": "graphId"}.get(kind, "0")
        for dev, stream, gpid, s, e, corr, name in db.execute(
                f'SELECT deviceId, streamId, globalPid, start, "end", correlationId, {extra} FROM {table}'):
            gpid = gpid or 0
            e = max(e, s)
            out.append((kind, dev, stream, (gpid >> 24) & 0xFFFFFF, s, e, corr or 0, gpid, name))
    return out


def union_length(intervals: list[tuple[int, int]], lo: int | None = None, hi: int | None = None) -> int:
    """Measure of the union of [s, e) clipped to [lo, hi)."""
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if lo is not None:
            s = max(s, lo)
        if hi is not None:
            e = min(e, hi)
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def one_row_per_call(db, alias: str = "r") -> str:
    """A WHERE clause over CUPTI_ACTIVITY_KIND_RUNTIME `alias` leaving out the
    CUDA-backtrace rows (eventClass 67-69, `nsys profile --cudabacktrace`)
    that repeat a call which has its ordinary row (same globalTid and
    correlationId): one row per call."""
    if "eventClass" not in columns(db, "CUPTI_ACTIVITY_KIND_RUNTIME"):
        return ""
    return (f"WHERE NOT ({alias}.eventClass BETWEEN 67 AND 69 AND EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME "
            f"t WHERE t.globalTid = {alias}.globalTid AND t.correlationId = {alias}.correlationId "
            "AND t.eventClass NOT BETWEEN 67 AND 69))")


def runtime_calls(db) -> list[tuple]:
    """(globalTid, start, end, correlationId, nameId), one row per call"""
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables(db):
        return []
    return [(g, s, max(e, s), c or 0, n) for g, s, e, c, n in db.execute(
        'SELECT globalTid, start, "end", correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME r '
        + one_row_per_call(db))]


def nvtx_ranges(db) -> list[tuple]:
    """Closed push/pop and start/end ranges that end on their own thread:
    (globalTid, start, end, name)."""
    if "NVTX_EVENTS" not in tables(db):
        return []
    cols = columns(db, "NVTX_EVENTS")
    text_id = "textId" if "textId" in cols else "NULL"
    egt = "endGlobalTid" if "endGlobalTid" in cols else "NULL"
    sid = "StringIds" in tables(db)
    strings = dict(db.execute("SELECT id, value FROM StringIds")) if sid else {}
    out = []
    for g, s, e, text, tid_, eg in db.execute(
            f'SELECT globalTid, start, "end", text, {text_id}, {egt} FROM NVTX_EVENTS '
            'WHERE eventType IN (59, 60, 70, 71) AND "end" IS NOT NULL'):
        if e < s or (eg is not None and eg != g):
            continue
        name = text if text is not None else strings.get(tid_, "") if tid_ is not None else ""
        out.append((g, s, e, name))
    return out


def projection(db) -> dict[tuple, tuple[int, int, int]]:
    """nvtx_gpu_proj_trace: for each range (globalTid, start, end, name, k) ->
    (opCount, gpuStart, gpuEnd) where the ops are those launched by runtime
    calls on the same thread fully inside the range, joined on
    (correlationId, globalPid == globalTid & mask). k disambiguates equal keys."""
    ops_by_key = defaultdict(list)
    for kind, dev, stream, pid, s, e, corr, gpid, name in gpu_ops(db):
        ops_by_key[(corr, gpid)].append((s, e))
    calls_by_thread = defaultdict(list)
    for g, s, e, corr, _ in runtime_calls(db):
        ops = ops_by_key.get((corr, g & GPID_MASK)) if corr else None
        if ops:
            calls_by_thread[g].append((s, e, len(ops), min(o[0] for o in ops), max(o[1] for o in ops)))
    for v in calls_by_thread.values():
        v.sort()
    starts = {g: [c[0] for c in v] for g, v in calls_by_thread.items()}
    out: dict[tuple, tuple[int, int, int]] = {}
    seen = defaultdict(int)
    for g, s, e, name in nvtx_ranges(db):
        key = (g, s, e, name)
        k = seen[key]
        seen[key] += 1
        calls = calls_by_thread.get(g, [])
        n, lo, hi = 0, None, None
        if calls:
            i = bisect.bisect_left(starts[g], s)
            while i < len(calls) and calls[i][0] <= e:
                cs, ce, cnt, gs, ge = calls[i]
                if ce <= e:
                    n += cnt
                    lo = gs if lo is None else min(lo, gs)
                    hi = ge if hi is None else max(hi, ge)
                i += 1
        out[key + (k,)] = (n, lo, hi)
    return out


class Coverage:
    """Sorted intervals with fast per-bucket queries (bisect over the merged union)."""

    def __init__(self, intervals: list[tuple[int, int]]):
        self.iv = sorted(intervals)
        self.starts = [s for s, _ in self.iv]
        merged: list[list[int]] = []
        for s, e in self.iv:
            if e <= s:
                continue
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self.m_starts = [m[0] for m in merged]
        self.m_ends = [m[1] for m in merged]

    def members(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """intervals whose start is in [lo, hi)"""
        return self.iv[bisect.bisect_left(self.starts, lo):bisect.bisect_left(self.starts, hi)]

    def busy(self, lo: int, hi: int) -> int:
        total = 0
        i = bisect.bisect_right(self.m_ends, lo)
        while i < len(self.m_starts) and self.m_starts[i] < hi:
            total += max(0, min(hi, self.m_ends[i]) - max(lo, self.m_starts[i]))
            i += 1
        return total
