"""Reference answers for profile/info, computed straight from the SQLite file
with Python's sqlite3. Written from the schema reference, independently of the
C loader, so that the tests compare two implementations.
"""
from __future__ import annotations

import codecs
import sqlite3
from pathlib import Path


def _latin1_or_cp1252(err: UnicodeDecodeError):
    """Decode error handler: one bad byte -> its CP-1252 (else Latin-1) char."""
    b = err.object[err.start]
    if b == 0:
        ch = "\ufffd"
    elif 0x80 <= b <= 0x9F:
        try:
            ch = bytes([b]).decode("cp1252")
        except UnicodeDecodeError:
            ch = "\ufffd"
    else:
        ch = chr(b)
    return ch, err.start + 1


codecs.register_error("nsys_ref_repair", _latin1_or_cp1252)


def text(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="nsys_ref_repair")
    return str(v)


def connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con.text_factory = bytes
    return con


def tables(con) -> set[str]:
    return {r[0].decode() for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(con, table: str) -> set[str]:
    return {r[1].decode() for r in con.execute(f'PRAGMA table_info("{table}")')}


def count(con, table: str) -> int:
    if table not in tables(con):
        return 0
    return con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]


SPAN_TABLES = [
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "NVTX_EVENTS", "OSRT_API", "COMPOSITE_EVENTS",
]


def span(con):
    lo = hi = None
    have = tables(con)
    for t in SPAN_TABLES:
        if t not in have:
            continue
        cols = columns(con, t)
        if "start" not in cols:
            continue
        end = "max(coalesce(\"end\", start), start)" if "end" in cols else "start"
        a, b = con.execute(f'SELECT min(start), max({end}) FROM "{t}"').fetchone()
        if a is None:
            continue
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    return None if lo is None else {"start": lo, "end": hi}


def meta(con, key: str):
    for t in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if t in tables(con):
            r = con.execute(f"SELECT value FROM {t} WHERE name = ?", (key,)).fetchone()
            return text(r[0]) if r else None
    return None


def utc_epoch(con):
    if "TARGET_INFO_SESSION_START_TIME" not in tables(con):
        return None
    r = con.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME "
                    "WHERE utcEpochNs IS NOT NULL").fetchone()
    return r[0] if r else None


def _pos(v):
    return v if isinstance(v, int) and v > 0 else None


def gpus(con) -> list[dict]:
    have = tables(con)
    out: dict[int, dict] = {}
    if "TARGET_INFO_GPU" in have and "id" in columns(con, "TARGET_INFO_GPU"):
        for id_, name, sm, mem, bw, clk, ma, mi in con.execute(
                "SELECT id, name, smCount, totalMemory, memoryBandwidth, clockRate, computeMajor, "
                "computeMinor FROM TARGET_INFO_GPU"):
            out.setdefault(id_, dict(id=id_, name=text(name), smCount=_pos(sm), memoryBytes=_pos(mem),
                                     bandwidthBytesPerSec=_pos(bw), clockHz=_pos(clk),
                                     computeCapability=f"{ma}.{mi}" if ma else None))
    elif "TARGET_INFO_CUDA_GPU" in have:
        # 2021 units: bandwidth in kB/s, clock in kHz
        for id_, name, sm, mem, bw, clk, ma, mi in con.execute(
                "SELECT deviceId, name, numMultiprocessors, globalMemorySize, globalMemoryBandwidth, "
                "coreClockRate, computeCapabilityMajor, computeCapabilityMinor "
                "FROM TARGET_INFO_CUDA_GPU ORDER BY rowid"):
            out.setdefault(id_, dict(id=id_, name=text(name), smCount=_pos(sm), memoryBytes=_pos(mem),
                                     bandwidthBytesPerSec=_pos(bw * 1000 if bw else None),
                                     clockHz=_pos(clk * 1000 if clk else None),
                                     computeCapability=f"{ma}.{mi}" if ma else None))
    elif "TARGET_INFO_CUDA_DEVICE" in have:
        sm_col = "numMultiprocessors" if "numMultiprocessors" in columns(con, "TARGET_INFO_CUDA_DEVICE") else "NULL"
        for id_, sm in con.execute(f"SELECT cudaId, {sm_col} FROM TARGET_INFO_CUDA_DEVICE"):
            out.setdefault(id_, dict(id=id_, name=None, smCount=_pos(sm), memoryBytes=None,
                                     bandwidthBytesPerSec=None, clockHz=None, computeCapability=None))
    return [out[k] for k in sorted(out)]


def devices(con) -> list[dict]:
    have = tables(con)
    parts = [f'SELECT deviceId, streamId FROM "{t}"' for t in
             ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
             if t in have]
    if not parts:
        return []
    by_dev: dict[int, set[int]] = {}
    for dev, stream in con.execute(" UNION ".join(parts)):
        if dev is None:
            continue
        s = by_dev.setdefault(dev, set())
        if stream is not None:
            s.add(stream)
    return [{"id": d, "streams": sorted(by_dev[d])} for d in sorted(by_dev)]


def nccl(con) -> bool:
    if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables(con):
        return False
    return con.execute("SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                       "ON s.id = k.shortName WHERE s.value LIKE 'nccl%')").fetchone()[0] == 1


def processes(con) -> list[dict]:
    have = tables(con)
    names: dict[int, str | None] = {}
    threads: dict[int, dict[int, str | None]] = {}
    if "PROCESSES" in have:
        for gpid, name in con.execute("SELECT globalPid, name FROM PROCESSES ORDER BY rowid"):
            pid = (gpid >> 24) & 0xFFFFFF
            n = text(name)
            if n is not None or pid not in names:
                names[pid] = n
    if "ThreadNames" in have:
        q = ("SELECT t.globalTid, s.value FROM ThreadNames t LEFT JOIN StringIds s ON s.id = t.nameId "
             "WHERE t.rowid IN (SELECT max(rowid) FROM ThreadNames GROUP BY globalTid)")
        for gtid, name in con.execute(q):
            pid, tid = (gtid >> 24) & 0xFFFFFF, gtid & 0xFFFFFF
            threads.setdefault(pid, {})[tid] = text(name)
    out = []
    for pid in sorted(set(names) | set(threads)):
        th = threads.get(pid, {})
        out.append({"pid": pid, "name": names.get(pid),
                    "threads": [{"tid": t, "name": th[t]} for t in sorted(th)]})
    return out


def reference_info(path: Path) -> dict:
    con = connect(path)
    try:
        have = tables(con)
        c = {
            "kernels": count(con, "CUPTI_ACTIVITY_KIND_KERNEL"),
            "memcpy": count(con, "CUPTI_ACTIVITY_KIND_MEMCPY"),
            "memset": count(con, "CUPTI_ACTIVITY_KIND_MEMSET"),
            "runtime": count(con, "CUPTI_ACTIVITY_KIND_RUNTIME"),
            "nvtx": count(con, "NVTX_EVENTS"),
            "syncs": count(con, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
        }
        graphs = (count(con, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE") > 0
                  or count(con, "CUDA_GRAPH_EVENTS") > 0 or count(con, "CUDA_GRAPH_NODE_EVENTS") > 0)
        if "CUPTI_ACTIVITY_KIND_KERNEL" in have and "graphNodeId" in columns(con, "CUPTI_ACTIVITY_KIND_KERNEL"):
            graphs = graphs or con.execute("SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                           "WHERE graphNodeId IS NOT NULL)").fetchone()[0] == 1
        features = {
            "kernels": c["kernels"] > 0, "memcpy": c["memcpy"] > 0, "memset": c["memset"] > 0,
            "nvtx": c["nvtx"] > 0, "nccl": nccl(con), "cudaGraphs": graphs,
            "cudaCallchains": count(con, "CUDA_CALLCHAINS") > 0,
            "cpuSampling": count(con, "COMPOSITE_EVENTS") > 0,
            "osrt": count(con, "OSRT_API") > 0,
        }
        return {
            "nsysVersion": meta(con, "EXPORT_PRODUCT_VERSION"),
            "schemaVersion": meta(con, "EXPORT_SCHEMA_VERSION"),
            "span": span(con),
            "utcEpochNs": utc_epoch(con),
            "counts": c,
            "gpus": gpus(con),
            "devices": devices(con),
            "processes": processes(con),
            "features": features,
        }
    finally:
        con.close()
