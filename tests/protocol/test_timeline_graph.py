"""CUDA graph launches traced at graph level (CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
one row per cudaGraphLaunch, the graph's kernels not reported) are GPU ops of
kind "graph" on their (device, stream) track, joined to their launching call
on (globalPid, correlationId): per-stream counts and busy time, timeline/range
events, kernel/details, nvtx/tree projection and export/perfetto, checked
against independent SQL on the real nsys2024_a100_cudagraph export and on a
generated profile extended with graph-trace rows and NVTX ranges."""
from __future__ import annotations

import json
import shutil
import sqlite3
from collections import defaultdict

import pytest

from conftest import check_schema, need_real
from test_timeline_sqlref import union_length

REAL = "nsys2024_a100_cudagraph"
GRAPH_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
    greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
    graphId INTEGER NOT NULL, graphExecId INTEGER NOT NULL)"""


def graph_rows(path) -> list[tuple]:
    """(rowid, deviceId, streamId, start, end, correlationId, globalPid, graphId, graphExecId)"""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute('SELECT rowid, deviceId, streamId, start, max("end", start), correlationId, globalPid, '
                          "graphId, graphExecId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchall()


def launching_calls(path) -> dict[tuple, tuple]:
    """(correlationId, globalPid) -> (API name without _v suffix, start, end) for every runtime call."""
    out = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        for corr, gtid, name, s, e in db.execute(
                "SELECT r.correlationId, r.globalTid, s.value, r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                "JOIN StringIds s ON s.id = r.nameId"):
            base = name.rsplit("_v", 1)[0] if "_v" in name and name.rsplit("_v", 1)[1].isdigit() else name
            out.setdefault((corr, gtid & ~0xFFFFFF), (base, s, e))
    return out


def check_graph_ops(server, path) -> dict:
    """Checks tracks, range events and details of every graph launch; returns {rowid: kernelId}."""
    rows = graph_rows(path)
    assert rows, "the profile has graph-trace rows"
    pid = server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    tracks = server.request("timeline/tracks", {"profileId": pid})
    by_stream = defaultdict(list)
    for _rid, dev, stream, s, e, *_ in rows:
        by_stream[(dev, stream)].append((s, e))
    # every graph launch appears as an event of kind "graph" on its stream track, nowhere else
    gpu_ids = [t["id"] for t in tracks["tracks"] if t["kind"] == "gpu"]
    span = server.request("timeline/range", {"profileId": pid, "start": tracks["start"], "end": tracks["end"],
                                             "width": 2000, "tracks": gpu_ids, "maxEvents": 1000000}, timeout=300)
    check_schema("timeline/range", "result", span)
    got = defaultdict(list)
    ids = {}
    gpu = {t["id"]: t for t in tracks["tracks"] if t["kind"] == "gpu"}
    for tr in span["tracks"]:
        for ev in tr.get("events") or []:
            if ev.get("kind") == "graph":
                t = gpu[tr["id"]]
                got[(t["device"], t["stream"])].append((ev["start"], ev["end"]))
                ids[(ev["start"], ev["end"], t["device"], t["stream"])] = ev["id"]
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in by_stream.items()}
    for (dev, stream), iv in by_stream.items():
        assert len(got[(dev, stream)]) == len(iv)
        assert union_length(got[(dev, stream)]) == union_length(iv)
        # the track's busy time covers the graph launches
        t = next(t for t in gpu.values() if t["device"] == dev and t["stream"] == stream)
        assert t["busyNs"] >= union_length(iv)
    # kernel/details: kind graph, the graph-trace row in columns, the launching call joined in-process
    calls = launching_calls(path)
    out = {}
    for rid, dev, stream, s, e, corr, gpid, graph_id, exec_id in rows:
        kid = ids[(s, e, dev, stream)]
        d = server.request("kernel/details", {"profileId": pid, "kernelId": kid})
        assert d["kind"] == "graph"
        assert d["rowid"] == rid
        assert (d["start"], d["end"], d["device"], d["stream"]) == (s, e, dev, stream)
        assert d["name"] == f"[CUDA graph {graph_id}]"
        assert d["columns"]["graphId"] == graph_id and d["columns"]["graphExecId"] == exec_id
        assert d["columns"]["correlationId"] == corr
        want = calls.get((corr, gpid))
        if want is None:
            assert "api" not in d or d["api"] is None
        else:
            assert d["api"]["name"] == want[0]
            assert d["api"]["correlationId"] == corr
            assert (d["api"]["start"], d["api"]["end"]) == (want[1], want[2])
        out[rid] = kid
    # export/perfetto: one "graph" slice per launch
    return {"pid": pid, "ids": out}


def test_real_cudagraph_graph_ops(server, tmp_path):
    path = need_real(REAL)
    res = check_graph_ops(server, path)
    calls = launching_calls(path)
    rows = graph_rows(path)
    assert all(calls[(r[5], r[6])][0] == "cudaGraphLaunch" for r in rows)
    out = tmp_path / "trace.json"
    server.request("export/perfetto", {"profileId": res["pid"], "path": str(out)}, timeout=300)
    slices = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X" and e["cat"] == "graph"]
    assert len(slices) == len(rows)
    assert sorted(s["args"]["kernelId"] for s in slices) == sorted(res["ids"].values())


def test_real_cudagraph_kernel_ids_stable(server, tmp_path):
    """Graph ops do not disturb the kernels: every kernel row keeps one id, kind kernel."""
    path = need_real(REAL)
    pid = server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    tracks = server.request("timeline/tracks", {"profileId": pid})
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        n_kernels = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    n_graph = len(graph_rows(path))
    assert sum(t["count"] for t in tracks["tracks"] if t["kind"] == "gpu") == n_kernels + n_graph
    kinds = defaultdict(int)
    for kid in range(n_kernels + n_graph):
        d = server.request("kernel/details", {"profileId": pid, "kernelId": kid})
        kinds[d["kind"]] += 1
        if d["kind"] == "graph":
            check_schema("kernel/details", "result", d)
    assert kinds == {"kernel": n_kernels, "graph": n_graph}


@pytest.fixture(scope="module")
def graph_profile(small_profile, tmp_path_factory):
    """The generated small profile plus graph launches: on the first thread with NVTX ranges, new
    cudaGraphLaunch calls inside its first ranges, each with a graph-trace row on a new stream
    (the user's profile is never touched: this is a private copy)."""
    path = tmp_path_factory.mktemp("graph") / "small_graphs.sqlite"
    shutil.copyfile(small_profile, path)
    db = sqlite3.connect(path)
    db.execute(GRAPH_DDL)
    gtid, = db.execute("SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL "
                       "GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1").fetchone()
    ranges = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND globalTid = ? AND "
                        "end - start > 1000 ORDER BY start LIMIT 5", (gtid,)).fetchall()
    dev, = db.execute("SELECT min(deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    max_corr, = db.execute("SELECT max(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    name_id = db.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    db.execute("INSERT INTO StringIds (id, value) VALUES (?, 'cudaGraphLaunch_v10000')", (name_id,))
    cols = [r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_RUNTIME)")]
    for k, (s, e) in enumerate(ranges):
        corr = max_corr + 1000 + k
        a_s, a_e = s + (e - s) // 4, s + (e - s) // 4 + 100
        vals = {"start": a_s, "end": a_e, "eventClass": 1, "globalTid": gtid, "correlationId": corr,
                "nameId": name_id, "returnValue": 0}
        use = [c for c in cols if c in vals]
        db.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME ({', '.join(use)}) VALUES ({', '.join('?' * len(use))})",
                   [vals[c] for c in use])
        g_s = a_e + 500
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, ?, 1, NULL, 4242, ?, ?, ?, ?)",
                   (g_s, g_s + 5000 + 10 * k, dev, corr, gtid & ~0xFFFFFF, 7 + k % 2, 100 + k))
    # one launch without a launching call (unattributed), overlapping the first
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, ?, 1, NULL, 4242, 987654321, ?, 9, 109)",
               (ranges[0][0] + 1, ranges[0][0] + 20000, dev, gtid & ~0xFFFFFF))
    db.commit()
    db.close()
    return path, gtid, dev


def test_generated_graph_ops(server, graph_profile):
    path, gtid, dev = graph_profile
    res = check_graph_ops(server, path)
    pid = res["pid"]
    tracks = server.request("timeline/tracks", {"profileId": pid})
    t = next(t for t in tracks["tracks"] if t["kind"] == "gpu" and t["device"] == dev and t["stream"] == 4242)
    rows = graph_rows(path)
    assert t["count"] == len(rows)
    assert t["busyNs"] == union_length([(r[3], r[4]) for r in rows])
    # nvtx/tree: each NVTX range enclosing a cudaGraphLaunch projects onto its graph launch on the GPU
    tree = server.request("nvtx/tree", {"profileId": pid, "device": dev, "thread": gtid & 0xFFFFFF,
                                         "maxDepth": 65535, "limit": 10**9, "maxBytes": 2**40}, timeout=300)
    assert not tree["truncated"]
    calls = launching_calls(path)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        ranges = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND globalTid = ? AND "
                            "end IS NOT NULL", (gtid,)).fetchall()
    nodes = []

    def walk(n):
        nodes.append(n)
        for c in n.get("children", []):
            walk(c)

    for r in tree["nodes"]:
        walk(r)
    by_span = defaultdict(list)
    for n in nodes:
        by_span[(n["start"], n["end"])].append(n)
    checked = 0
    for _rid, _dev, _st, g_s, g_e, corr, gpid, *_ in rows:
        call = calls.get((corr, gpid))
        if call is None:
            continue
        _name, a_s, a_e = call
        for s, e in ranges:
            if s <= a_s and e >= a_e:
                for n in by_span[(s, e)]:
                    assert n["gpuStart"] is not None and n["gpuStart"] <= g_s
                    assert n["gpuEnd"] is not None and n["gpuEnd"] >= g_e
                    checked += 1
    assert checked > 0
