"""Independent Python/SQL reference computations for the analysis tests.
Written from the definitions in docs/analyses.md, not from the C code."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from test_timeline_sqlref import one_row_per_call


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def tables(db) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def kernels(db):
    """[(start, end, device, stream, shortName)]"""
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables(db):
        return []
    return db.execute("SELECT k.start, k.end, k.deviceId, k.streamId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                      "JOIN StringIds s ON s.id = k.shortName").fetchall()


def gpu_ops(db):
    """kernels + memcpy + memset + graph launches (graph-level tracing) as (start, end, device, stream)."""
    out = [(s, e, d, st) for s, e, d, st, _ in kernels(db)]
    t = tables(db)
    for tbl in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
        if tbl in t:
            out += db.execute(f"SELECT start, end, deviceId, streamId FROM {tbl}").fetchall()
    return out


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def total(u):
    return sum(e - s for s, e in u)


def intersect_len(a, b):
    i = j = 0
    t = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            t += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return t


def percentile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    n = len(sorted_vals)
    pos = q * (n - 1)
    i = int(pos)
    if i + 1 >= n:
        return sorted_vals[-1]
    return sorted_vals[i] + (pos - i) * (sorted_vals[i + 1] - sorted_vals[i])


def is_nccl(name: str) -> bool:
    return "nccl" in name.lower()


def top_kernels(db):
    groups = {}
    for s, e, _d, _st, n in kernels(db):
        groups.setdefault(n, []).append(e - s)
    grand = sum(sum(v) for v in groups.values())
    out = {}
    for n, v in groups.items():
        v.sort()
        out[n] = dict(count=len(v), totalNs=sum(v), minNs=v[0], maxNs=v[-1], medianNs=percentile(v, 0.5),
                      p95Ns=percentile(v, 0.95), pctOfGpu=100.0 * sum(v) / grand if grand else 0)
    return out


def overlap(db):
    """Compute vs NCCL on unions; a CUDA graph launch (graph-level tracing) counts as compute."""
    by_dev = {}
    for s, e, d, _st, n in kernels(db):
        by_dev.setdefault(d, []).append((s, e, is_nccl(n)))
    if "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables(db):
        for s, e, d in db.execute("SELECT start, end, deviceId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
            by_dev.setdefault(d, []).append((s, e, False))
    out = {}
    for d, ks in by_dev.items():
        comp = union([(s, e) for s, e, c in ks if not c])
        comm = union([(s, e) for s, e, c in ks if c])
        ov = intersect_len(comp, comm)
        span = max(e for _, e, _ in ks) - min(s for s, _, _ in ks)
        out[d] = dict(computeOnlyNs=total(comp) - ov, commOnlyNs=total(comm) - ov, overlapNs=ov,
                      idleNs=span - (total(comp) + total(comm) - ov))
    return out


def device_gaps(db, min_gap):
    by_dev = {}
    for s, e, d, _st in gpu_ops(db):
        by_dev.setdefault(d, []).append((s, e))
    out = {}
    for d, iv in by_dev.items():
        u = union(iv)
        out[d] = sorted((u[i][0] - u[i - 1][1] for i in range(1, len(u)) if u[i][0] - u[i - 1][1] >= min_gap),
                        reverse=True)
    return out


COLLS = ["ReduceScatter", "AllReduce", "AllGather", "Broadcast", "AllToAll", "SendRecv", "Reduce", "Send", "Recv"]


def collective(name: str) -> str:
    base = re.split(r"[(<]", name)[0]
    for tok in base.split("_"):
        if tok in COLLS or tok == "Generic":
            return tok
    low = name.lower()
    for c in COLLS:
        if c.lower() in low:
            return c
    return "other"


def nccl_by_collective(db):
    out = {}
    for s, e, _d, _st, n in kernels(db):
        if is_nccl(n):
            c = collective(n)
            cnt, t = out.get(c, (0, 0))
            out[c] = (cnt + 1, t + e - s)
    return out


def memcpy_groups(db):
    if "CUPTI_ACTIVITY_KIND_MEMCPY" not in tables(db):
        return {}
    rows = db.execute("SELECT copyKind, srcKind, dstKind, COUNT(*), SUM(bytes), SUM(end-start) "
                      "FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1,2,3").fetchall()
    return {(r[0], r[1], r[2]): (r[3], r[4], r[5]) for r in rows}


def api_name(n: str) -> str:
    return re.sub(r"_v\d+$", "", n)


def runtime(db):
    """CUDA API calls, one per call: a CUDA-backtrace row (eventClass 67-69,
    `--cudabacktrace`) repeating a call that has its ordinary row is left out."""
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables(db):
        return []
    return db.execute("SELECT r.start, r.end, r.globalTid, r.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                      f"JOIN StringIds s ON s.id = r.nameId {one_row_per_call(db)}").fetchall()


def union_len(ivs) -> int:
    """Length of the union of [start, end) intervals."""
    total, cs, ce = 0, 0, None
    for s, e in sorted(ivs):
        if ce is None or s > ce:
            if ce is not None:
                total += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return total + (ce - cs if ce is not None else 0)


def launch_pairs(db):
    """(api_start, api_end, k_start, k_end) for kernels launched by a launch API of the same process."""
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables(db):
        return []
    rt = {}
    for s, e, g, c, n in runtime(db):
        rt[(g & ~0xFFFFFF, c)] = (s, e, api_name(n))
    out = []
    for ks, ke, gpid, corr in db.execute("SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        r = rt.get((gpid, corr))
        if r and (r[2].startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch"))):
            out.append((r[0], r[1], ks, ke))
    return out


def sync_calls(db):
    out = {}
    for s, e, _g, _c, n in runtime(db):
        a = api_name(n)
        blocking_copy = a.startswith(("cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset")) and "Async" not in a
        if "Synchronize" in a or a.startswith(("cudaStreamWaitEvent", "cuStreamWaitEvent")) or blocking_copy:
            cnt, t = out.get(a, (0, 0))
            out[a] = (cnt + 1, t + e - s)
    return out


def nvtx_ranges(db):
    """(name, start, end) of closed ranges as the index keeps them."""
    if "NVTX_EVENTS" not in tables(db):
        return []
    cols = {r[1] for r in db.execute("PRAGMA table_info(NVTX_EVENTS)")}
    txt = "COALESCE(n.text, s.value, '')" if "textId" in cols else "COALESCE(n.text, '')"
    join = "LEFT JOIN StringIds s ON s.id = n.textId" if "textId" in cols else ""
    egt = "AND (n.endGlobalTid IS NULL OR n.endGlobalTid = n.globalTid)" if "endGlobalTid" in cols else ""
    return db.execute(f"SELECT {txt}, n.start, n.end FROM NVTX_EVENTS n {join} WHERE n.eventType IN (59,60,70,71) "
                      f"AND n.end IS NOT NULL AND n.end >= n.start {egt}").fetchall()


def launched_ops(db):
    """(api_start, api_end, globalTid, op_start, op_end) for kernels, memcpys and memsets joined to
    their launching call on (process, correlationId)."""
    t = tables(db)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in t:
        return []
    out = []
    for tbl in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if tbl in t:
            out += db.execute(f"SELECT r.start, r.end, r.globalTid, k.start, k.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                              f"JOIN {tbl} k ON k.correlationId = r.correlationId "
                              f"AND k.globalPid = (r.globalTid & ~0xFFFFFF)").fetchall()
    return out
