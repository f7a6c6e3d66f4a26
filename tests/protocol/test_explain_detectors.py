"""kernel/explain's detectors (issue 17; docs/analyses.md "Detectors"):
pageable/synchronous copies next to a kernel on its stream, unified memory
per kernel (migrations with bytes, the page-fault tables), launch-bound
kernels, and the report's Hotspot verdict built on them. Every number is
checked against independent SQL over the export (window functions over the
raw tables, not the index), on the project's own H200 captures, on generated
profiles changed with SQL to make each detector fire or not, and on the real
exports of ../shared/profiles when present."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import captured_profiles, real_profiles
from test_explain_context import base, variant  # noqa: F401 (base: a fixture)
from nsys_rpc import Server, result_schema_errors

def captured(name: str) -> Path:
    (p,) = [p for p in captured_profiles() if p.name == name]
    return p


def has_table(db: sqlite3.Connection, t: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (t,)).fetchone() is not None


def cols(db: sqlite3.Connection, t: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({t})")}


def tracks_sql(db: sqlite3.Connection) -> str:
    """Every GPU op with its position on its track ((device, stream, process),
    ordered like the index: start, end, kind, rowid)."""
    parts = ["SELECT deviceId AS dev, streamId AS st, (globalPid >> 24) & 16777215 AS pid, start, end, 0 AS kind, "
             "shortName AS nm, rowid AS rid, NULL AS ck, NULL AS sk, NULL AS dk, 0 AS bytes, correlationId AS corr "
             "FROM CUPTI_ACTIVITY_KIND_KERNEL"]
    if has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"):
        parts.append("SELECT deviceId, streamId, (globalPid >> 24) & 16777215, start, end, 1, NULL, rowid, copyKind, "
                     "srcKind, dstKind, bytes, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    if has_table(db, "CUPTI_ACTIVITY_KIND_MEMSET"):
        parts.append("SELECT deviceId, streamId, (globalPid >> 24) & 16777215, start, end, 2, NULL, rowid, NULL, "
                     "NULL, NULL, 0, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET")
    if has_table(db, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):  # graph-level tracing: a whole graph is one op of the stream
        parts.append("SELECT deviceId, streamId, (globalPid >> 24) & 16777215, start, end, 3, NULL, rowid, NULL, "
                     "NULL, NULL, 0, correlationId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    return ("WITH ops AS (" + " UNION ALL ".join(parts) + "), o AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY dev, st, "
            "pid ORDER BY start, CASE WHEN end < start THEN start ELSE end END, kind, rid) AS rn FROM ops), "
            # 2021 exports hold each call twice (cudaLaunchKernel around cudaLaunchKernel_v7000): the inner one counts
            "api0 AS (SELECT r.correlationId AS corr, (r.globalTid >> 24) & 16777215 AS pid, r.start, r.end, "
            "s.value AS name, ROW_NUMBER() OVER (PARTITION BY r.correlationId, (r.globalTid >> 24) & 16777215 "
            "ORDER BY r.start DESC) AS dup FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId), "
            "api AS (SELECT * FROM api0 WHERE dup = 1) ")


def ref_copies(path: Path, name: str) -> dict:
    """The copies detector by SQL: for each instance, the ops just before and
    after it on its track that are HtoD/DtoH copies from/to pageable memory or
    launched by a blocking cudaMemcpy*/cuMemcpy* call."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if not has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"):
        return {"instancesNextToCopy": 0, "copies": 0, "pageable": 0, "synchronous": 0, "bytes": 0, "ns": 0}
    q = tracks_sql(db) + """,
      k AS (SELECT o.* FROM o JOIN StringIds s ON s.id = o.nm WHERE o.kind = 0 AND s.value = ?),
      nb AS (SELECT k.rid AS krid, c.* FROM k JOIN o c ON c.dev = k.dev AND c.st = k.st AND c.pid = k.pid
             AND c.rn IN (k.rn - 1, k.rn + 1) WHERE c.kind = 1 AND c.ck IN (1, 2)),
      q AS (SELECT nb.*, (ck = 1 AND sk = 0) OR (ck = 2 AND dk = 0) AS pageable,
            COALESCE((SELECT (a.name LIKE 'cudaMemcpy%' OR a.name LIKE 'cuMemcpy%') AND a.name NOT LIKE '%Async%'
                      AND a.name NOT LIKE '%Peer%' FROM api a WHERE a.corr = nb.corr AND a.pid = nb.pid), 0) AS sync
            FROM nb),
      hit AS (SELECT * FROM q WHERE pageable OR sync),
      d AS (SELECT DISTINCT rid, bytes, end - start AS ns, pageable, sync FROM hit)
      SELECT (SELECT COUNT(DISTINCT krid) FROM hit), COUNT(*), COALESCE(SUM(pageable), 0), COALESCE(SUM(sync), 0),
             COALESCE(SUM(bytes), 0), COALESCE(SUM(ns), 0) FROM d"""
    r = db.execute(q, (name,)).fetchone()
    db.close()
    return dict(zip(["instancesNextToCopy", "copies", "pageable", "synchronous", "bytes", "ns"], r))


def ref_launch(path: Path, name: str) -> dict:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = tracks_sql(db) + """,
      k AS (SELECT o.*, (SELECT p.end FROM o p WHERE p.dev = o.dev AND p.st = o.st AND p.pid = o.pid
                         AND p.rn = o.rn - 1) AS prev_end
            FROM o JOIN StringIds s ON s.id = o.nm WHERE o.kind = 0 AND s.value = ?),
      l AS (SELECT k.*, a.start AS a0, a.end AS a1 FROM k JOIN api a ON a.corr = k.corr AND a.pid = k.pid
            WHERE a.name LIKE '%LaunchKernel%' OR a.name LIKE '%LaunchCooperativeKernel%')
      SELECT COUNT(*), COALESCE(SUM(end - start < a1 - a0), 0), COALESCE(SUM(prev_end IS NULL OR prev_end <= a0), 0),
             COALESCE(SUM(a1 - a0), 0), COALESCE(SUM(end - start), 0) FROM l"""
    r = db.execute(q, (name,)).fetchone()
    db.close()
    return dict(zip(["launched", "shorterThanLaunch", "streamEmpty", "launchApiNs", "kernelNs"], r))


def ref_unified(path: Path, name: str) -> dict:
    """Unified-memory migrations and page faults around the kernel's instances
    (one device)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {"migrations": 0, "migrationBytes": 0, "migrationNs": 0, "gpuFaultGroups": 0, "gpuFaults": 0,
           "cpuFaults": 0}
    k = ("SELECT k.start, k.end, k.deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
         "WHERE s.value = ?")
    if has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"):
        r = db.execute(f"""SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(end - start), 0)
            FROM CUPTI_ACTIVITY_KIND_MEMCPY m WHERE copyKind IN (11, 12, 13) AND EXISTS
            (SELECT 1 FROM ({k}) k WHERE k.deviceId = m.deviceId AND m.start < k.end AND m.end > k.start)""",
                       (name,)).fetchone()
        out.update(migrations=r[0], migrationBytes=r[1], migrationNs=r[2])
    if has_table(db, "CUDA_UM_GPU_PAGE_FAULT_EVENTS"):
        r = db.execute(f"""SELECT COUNT(*), COALESCE(SUM(numberOfPageFaults), 0) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS g
            WHERE EXISTS (SELECT 1 FROM ({k}) k WHERE k.deviceId = g.deviceId AND g.start < k.end AND g.end > k.start)""",
                       (name,)).fetchone()
        out.update(gpuFaultGroups=r[0], gpuFaults=r[1])
    if has_table(db, "CUDA_UM_CPU_PAGE_FAULT_EVENTS"):
        q = tracks_sql(db) + """,
          k AS (SELECT o.*, (SELECT p.end FROM o p WHERE p.dev = o.dev AND p.st = o.st AND p.pid = o.pid
                             AND p.rn = o.rn - 1) AS prev_end,
                (SELECT n.start FROM o n WHERE n.dev = o.dev AND n.st = o.st AND n.pid = o.pid AND n.rn = o.rn + 1)
                AS next_start FROM o JOIN StringIds s ON s.id = o.nm WHERE o.kind = 0 AND s.value = ?)
          SELECT COUNT(*) FROM k JOIN CUDA_UM_CPU_PAGE_FAULT_EVENTS c ON ((c.globalPid >> 24) & 16777215) = k.pid
            AND ((c.start >= k.prev_end AND c.start < k.start) OR (c.start >= k.end AND c.start < k.next_start))"""
        out["cpuFaults"] = db.execute(q, (name,)).fetchone()[0]
    db.close()
    return out


def pick(d: dict, keys) -> dict:
    return {k: d[k] for k in keys}


@pytest.fixture(scope="module")
def cudawork():
    path = captured("h200_cudawork.sqlite")
    with Server() as s:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        yield path, s, pid


def explain(s: Server, pid: str, name: str) -> dict:
    r = s.request("kernel/explain", {"profileId": pid, "name": name})
    assert result_schema_errors("kernel/explain", r) == []
    return r


def test_unified_memory_um_touch(cudawork):
    """um_touch: thousands of migrations and the page-fault tables explain its
    time; the numbers are the SQL's."""
    path, s, pid = cudawork
    r = explain(s, pid, "um_touch")
    u = r["detectors"]["unifiedMemory"]
    ref = ref_unified(path, "um_touch")
    assert pick(u, ref) == ref
    assert u["migrations"] > 1000 and u["migrationBytes"] >= 64 << 20 and u["gpuFaults"] > 0 and u["cpuFaults"] > 0
    assert u["fires"] and u["faultTables"] and r["bound"] == "memory"
    assert any("cudaMemPrefetchAsync" in t for t in r["suggestions"])
    assert any("page faults" in t for t in r["boundReasons"])
    assert not r["detectors"]["copies"]["fires"] and not r["detectors"]["launch"]["fires"]


@pytest.mark.parametrize("name", ["vector_fft", "gen_mtgp", "regular_fft", "serial_loop", "one_wave",
                                  "DeviceRadixSortOnesweepKernel", "um_touch"])
def test_copies_cudawork(cudawork, name):
    """Pageable, synchronous cudaMemcpy next to cuFFT/cuRAND kernels fire;
    kernels between kernels do not."""
    path, s, pid = cudawork
    c = explain(s, pid, name)["detectors"]["copies"]
    ref = ref_copies(path, name)
    assert pick(c, ref) == ref
    assert c["fires"] == (name in ("vector_fft", "gen_mtgp", "regular_fft"))
    if c["fires"]:
        assert c["pageable"] > 0 and c["synchronous"] > 0 and c["bytes"] > 0


def test_serial_and_one_wave_fire_nothing_else(cudawork):
    path, s, pid = cudawork
    for name in ("serial_loop", "one_wave"):
        d = explain(s, pid, name)["detectors"]
        assert not any(d[k]["fires"] for k in ("copies", "unifiedMemory", "launch")), name
        assert d["unifiedMemory"]["migrations"] == 0 and d["unifiedMemory"]["gpuFaults"] == 0


def test_report_hotspot_uses_explain(cudawork):
    """The report's Hotspot finding stops saying "optimise um_touch first" when
    page migrations are its time."""
    path, s, pid = cudawork
    rep = s.request("report/generate", {"profileId": pid})
    (h,) = [f for f in rep["findings"] if f["id"] == "hotspot_kernel"]
    assert h["evidence"]["kernel"] == "um_touch" and h["evidence"]["cause"] == "unified_memory"
    assert "page migration" in h["title"] and "cudaMemPrefetchAsync" in h["recommendation"]
    assert "Optimise this kernel first" not in h["recommendation"]


def test_launch_bound_gpt_train():
    """PyTorch's small elementwise kernels in the H200 GPT step: the launch
    counts are the SQL's, and the advice is PyTorch's."""
    path = captured("h200_gpt_train.sqlite")
    with Server() as s:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        r = explain(s, pid, "vectorized_elementwise_kernel")
    ln = r["detectors"]["launch"]
    ref = ref_launch(path, "vectorized_elementwise_kernel")
    assert pick(ln, ref) == ref
    assert ln["fires"] and r["bound"] == "latency" and r["context"]["framework"] == "pytorch"
    assert any(t.startswith("Launch-bound") and "torch.compile" in t for t in r["suggestions"])
    assert "aten::" in r["context"]["frameworkEvidence"]


# ---- generated profiles changed with SQL: each detector on and off ---------------------------

@pytest.fixture(scope="module")
def tiny(base) -> Path:
    """The generated tiny profile (test_explain_context's `base`)."""
    return base


def first_kernel_after_copy(path: Path) -> str:
    """The name of the kernel right after the first HtoD copy on its stream."""
    db = sqlite3.connect(path)
    q = tracks_sql(db) + """SELECT s.value FROM o c JOIN o k ON k.dev = c.dev AND k.st = c.st AND k.pid = c.pid
        AND k.rn = c.rn + 1 JOIN StringIds s ON s.id = k.nm WHERE c.kind = 1 AND c.ck = 1 AND k.kind = 0
        ORDER BY c.start LIMIT 1"""
    (name,) = db.execute(q).fetchone()
    db.close()
    return name


@pytest.mark.parametrize("case", ["pageable", "pinned_async", "pinned_sync"])
def test_copies_variants(tiny, tmp_path, case):
    """All HtoD copies pinned and async: nothing fires; pageable: fires;
    pinned but launched by a blocking cudaMemcpy: fires as synchronous."""
    sql = ["UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 1 WHERE copyKind = 1",
           "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET dstKind = 1 WHERE copyKind = 2",
           "UPDATE StringIds SET value = 'cudaMemcpyAsync_v3020' WHERE value = 'cudaMemcpy_v3020'"]
    if case == "pageable":
        sql.append("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcKind = 0 WHERE copyKind = 1")
    if case == "pinned_sync":
        sql.append("UPDATE StringIds SET value = 'cudaMemcpy_v3020' WHERE value = 'cudaMemcpyAsync_v3020'")
    p = variant(tiny, tmp_path, case, *sql)
    name = first_kernel_after_copy(p)
    with Server() as s:
        pid = s.request("profile/open", {"path": str(p)})["profileId"]
        r = explain(s, pid, name)
    c = r["detectors"]["copies"]
    ref = ref_copies(p, name)
    assert pick(c, ref) == ref
    if case == "pinned_async":
        assert c["copies"] == 0 and not c["fires"]
        assert not any("pinned" in t for t in r["suggestions"])
    else:
        assert c["copies"] > 0 and c["fires"] == (c["instancesNextToCopy"] * 10 >= r["detectors"]["instances"])
        assert (c["pageable"] > 0) == (case == "pageable") and (c["synchronous"] > 0) == (case == "pinned_sync")


def test_gpu_fault_table_variant(tiny, tmp_path):
    """A GPU page-fault table whose events overlap every instance of a kernel
    makes the unified-memory detector fire on that kernel only."""
    db = sqlite3.connect(tiny)
    name = "vectorized_elementwise_kernel"
    rows = db.execute("SELECT k.start, k.end, k.deviceId, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                      "ON s.id = k.shortName WHERE s.value = ?", (name,)).fetchall()
    db.close()
    ins = [("INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES (?, ?, ?, ?, 0, 3, 1)",
            (a + 1, a + 1 + (b - a) // 2, g, d)) for a, b, d, g in rows]
    p = variant(tiny, tmp_path, "faults",
                "CREATE TABLE CUDA_UM_GPU_PAGE_FAULT_EVENTS (start INTEGER, end INTEGER, globalPid INTEGER, "
                "deviceId INTEGER, address INTEGER, numberOfPageFaults INTEGER, faultAccessType INTEGER)", *ins)
    with Server() as s:
        pid = s.request("profile/open", {"path": str(p)})["profileId"]
        r = explain(s, pid, name)
        other = explain(s, pid, "reduce_kernel")
    u = r["detectors"]["unifiedMemory"]
    assert u["faultTables"] and u["fires"] and u["gpuFaultGroups"] == len(rows) and u["gpuFaults"] == 3 * len(rows)
    assert u["instancesWithGpuFaults"] == len(rows) and r["bound"] == "memory"
    assert pick(u, ref_unified(p, name)) == ref_unified(p, name)
    ou = other["detectors"]["unifiedMemory"]
    assert ou["faultTables"] and not ou["fires"] and ou["gpuFaults"] == 0


def test_launch_bound_variant(tiny, tmp_path):
    """Stretch every launch call of one kernel past its duration and leave its
    stream empty: launch-bound fires only with >= 20 launches."""
    name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
    p = variant(tiny, tmp_path, "launch",
                # the calls end after their kernel ends, so the kernel is shorter than its launch call
                f"""UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = (SELECT k.end + 1000 FROM CUPTI_ACTIVITY_KIND_KERNEL k
                    WHERE k.correlationId = CUPTI_ACTIVITY_KIND_RUNTIME.correlationId)
                    WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s
                    ON s.id = k.shortName WHERE s.value = '{name}')""")
    with Server() as s:
        pid = s.request("profile/open", {"path": str(p)})["profileId"]
        r = explain(s, pid, name)
    ln = r["detectors"]["launch"]
    ref = ref_launch(p, name)
    assert pick(ln, ref) == ref
    assert ln["shorterThanLaunch"] == ln["launched"] > 0
    # the tiny preset has 18 launches of it: too few to judge, whatever the ratios
    assert ln["launched"] < 20 and not ln["fires"]


# ---- every real export: the detectors' numbers are the SQL's -------------------------------

def single_device_names(path: Path, limit: int) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if not has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL") or "shortName" not in cols(db, "CUPTI_ACTIVITY_KIND_KERNEL"):
        return []
    rows = db.execute("""SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
        GROUP BY s.value HAVING COUNT(DISTINCT k.deviceId) = 1 ORDER BY SUM(k.end - k.start) DESC LIMIT ?""",
                      (limit,)).fetchall()
    db.close()
    return [r[0] for r in rows]


@pytest.mark.parametrize("path", real_profiles(), ids=lambda p: p.name)
def test_real_exports_match_sql(path):
    names = single_device_names(path, 4)
    if not names:
        pytest.skip(f"{path.name}: no kernels")
    with Server() as s:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        for name in names:
            r = explain(s, pid, name)
            d = r["detectors"]
            ref = ref_copies(path, name)
            assert pick(d["copies"], ref) == ref, name
            ref = ref_launch(path, name)
            assert pick(d["launch"], ref) == ref, name
            ref = ref_unified(path, name)
            assert pick(d["unifiedMemory"], ref) == ref, name
            # a detector fires only on its evidence
            assert not d["copies"]["fires"] or d["copies"]["copies"] > 0
            assert not d["unifiedMemory"]["fires"] or d["unifiedMemory"]["migrations"] + d["unifiedMemory"]["gpuFaults"] > 0
            assert not d["launch"]["fires"] or d["launch"]["launched"] >= 20
