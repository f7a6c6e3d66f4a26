"""export/perfetto (the Chrome Trace JSON parses; slice and flow counts equal
SQL counts), kernel/details (columns equal the SQL row, the launching API
call is joined within the process, ids are the same after a reopen with a
fresh cache), search (counts and totals equal SQL), and the CLI commands."""
from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict

import pytest

from conftest import PROFILES, check_schema, real_path, real_profiles
from nsys_rpc import RpcError, Server, server_binary
from test_timeline_sqlref import GPID_MASK, connect, gpu_ops, nvtx_ranges, runtime_calls, tables

NAMES = [p.name for p in real_profiles()] or ["<absent>"]
SOME = ["nsys2026_2gpu_nccl_before.sqlite", "nsys2024_a100_lm_nvtx.sqlite", "nsys2023_rtx3060_23k.sqlite",
        "nsys2025_h200_nvtx13k.sqlite", "nsys2022_nvtx_only_negative_ts.sqlite"]


def path_of(name: str):
    return real_path(name)


def open_profile(server, name: str) -> str:
    return server.request("profile/open", {"path": str(path_of(name))}, timeout=300)["profileId"]


@pytest.mark.parametrize("name", NAMES)
def test_perfetto_export_counts(server, name, tmp_path):
    pid = open_profile(server, name)
    out = tmp_path / "trace.json"
    res = server.request("export/perfetto", {"profileId": pid, "path": str(out)}, timeout=300)
    check_schema("export/perfetto", "result", res)
    trace = json.loads(out.read_text())
    ev = trace["traceEvents"]
    assert len(ev) == res["events"]
    cats = defaultdict(int)
    for e in ev:
        if e["ph"] == "X":
            cats[e["cat"]] += 1
            assert e["dur"] >= 0
    with connect(path_of(name)) as db:
        ops = gpu_ops(db)
        calls = runtime_calls(db)
        ranges = nvtx_ranges(db)
    assert cats["kernel"] + cats["memcpy"] + cats["memset"] + cats["graph"] == len(ops) == res["slices"]["gpu"]
    assert cats["graph"] == sum(1 for o in ops if o[0] == "graph")
    assert cats["kernel"] == sum(1 for o in ops if o[0] == "kernel")
    assert cats["nvtx"] == len(ranges) == res["slices"]["nvtx"]
    assert cats["cuda_api"] == len(calls) == res["slices"]["api"]
    keys = {(c[3], c[0] & GPID_MASK) for c in calls if c[3]}
    joined = sum(1 for o in ops if o[6] and (o[6], o[7]) in keys)
    starts = sum(1 for e in ev if e["ph"] == "s")
    ends = sum(1 for e in ev if e["ph"] == "f")
    assert starts == ends == joined == res["flows"]
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    devices = {o[1] for o in ops}
    assert {f"GPU {d}" for d in devices} <= names


def test_perfetto_window_and_errors(server, tmp_path):
    name = "nsys2026_2gpu_nccl_before.sqlite"
    pid = open_profile(server, name)
    tr = server.request("timeline/tracks", {"profileId": pid})
    mid = (tr["start"] + tr["end"]) // 2
    out = tmp_path / "w.json"
    res = server.request("export/perfetto", {"profileId": pid, "path": str(out), "start": mid, "end": mid + 10_000_000})
    with connect(path_of(name)) as db:
        n = sum(1 for o in gpu_ops(db) if o[4] <= mid + 10_000_000 and o[5] >= mid)
    assert res["slices"]["gpu"] == n
    json.loads(out.read_text())
    with pytest.raises(RpcError) as ei:
        server.request("export/perfetto", {"profileId": pid, "path": str(tmp_path / "no" / "such" / "dir.json")})
    assert ei.value.code == -32012


@pytest.mark.parametrize("name", SOME[:4])
def test_kernel_details(server, name):
    pid = open_profile(server, name)
    tracks = server.request("timeline/tracks", {"profileId": pid})["tracks"]
    gpu = [t for t in tracks if t["kind"] == "gpu"]
    total = sum(t["count"] for t in gpu)
    with connect(path_of(name)) as db:
        strings = dict(db.execute("SELECT id, value FROM StringIds")) if "StringIds" in tables(db) else {}
        rt = {}
        for g, s, e, corr, nid in runtime_calls(db):
            rt[(corr, g & GPID_MASK)] = (g, s, e, nid)
        for kid in sorted({0, total // 3, total // 2, total - 1}):
            d = server.request("kernel/details", {"profileId": pid, "kernelId": kid})
            check_schema("kernel/details", "result", d)
            table = {"kernel": "CUPTI_ACTIVITY_KIND_KERNEL", "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
                     "memset": "CUPTI_ACTIVITY_KIND_MEMSET"}[d["kind"]]
            row = db.execute(f'SELECT start, "end", deviceId, streamId, correlationId, globalPid FROM {table} '
                             f'WHERE rowid = ?', (d["rowid"],)).fetchone()
            assert (d["start"], d["end"], d["device"], d["stream"]) == tuple(row[:4])
            assert d["columns"]["start"] == row[0] and d["columns"]["deviceId"] == row[2]
            if d["kind"] == "kernel":
                assert d["columns"]["shortName"] == d["name"]
            api = rt.get((row[4], row[5] or 0)) if row[4] else None
            if api is None:
                assert d["api"] is None
            else:
                g, s, e, nid = api
                assert (d["api"]["start"], d["api"]["end"], d["api"]["tid"]) == (s, e, g & 0xFFFFFF)
                assert d["api"]["queueDelayNs"] == d["start"] - e
                import re
                assert d["api"]["name"] == re.sub(r"_v[0-9]+$", "", strings.get(nid, ""))
            for a, b in zip(d["nvtxPath"], d["nvtxPath"][1:]):
                assert a["start"] <= b["start"] and b["end"] <= a["end"]
    with pytest.raises(RpcError) as ei:
        server.request("kernel/details", {"profileId": pid, "kernelId": total})
    assert ei.value.code == -32008


def test_kernel_ids_stable_across_reopen(tmp_path):
    name = "nsys2026_2gpu_nccl_after.sqlite"
    p = path_of(name)
    seen = []
    for cache in ("a", "a", "b"):  # build, reopen from the cache, build again in a fresh cache
        with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path / cache)}) as s:
            pid = s.request("profile/open", {"path": str(p)}, timeout=300)["profileId"]
            seen.append([s.request("kernel/details", {"profileId": pid, "kernelId": k})
                         for k in (0, 17, 1234, 3000)])
    assert seen[0] == seen[1] == seen[2]
    assert any(f.name.startswith("index-") for f in (tmp_path / "a").iterdir())


@pytest.mark.parametrize("query", ["gemm", "nccl", "*Kernel*", "elementwise"])
def test_search_matches_sql(server, query):
    name = "nsys2026_2gpu_nccl_before.sqlite"
    pid = open_profile(server, name)
    res = server.request("search", {"profileId": pid, "query": query, "limit": 100000})
    check_schema("search", "result", res)
    import fnmatch
    def match(s):
        if any(c in query for c in "*?["):
            return fnmatch.fnmatch(s.lower(), query.lower())
        return query.lower() in s.lower()
    with connect(path_of(name)) as db:
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        kern = defaultdict(lambda: [0, 0])
        for s_id, d_id, s, e in db.execute('SELECT shortName, demangledName, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL'):
            if match(strings[s_id]) or match(strings[d_id]):
                kern[strings[s_id]][0] += 1
                kern[strings[s_id]][1] += e - s
        nv = defaultdict(lambda: [0, 0])
        for g, s, e, nm in nvtx_ranges(db):
            if match(nm):
                nv[nm][0] += 1
                nv[nm][1] += e - s
    got_k = {r["name"]: [r["count"], r["totalNs"]] for r in res["results"] if r["kind"] == "kernel"}
    got_n = {r["name"]: [r["count"], r["totalNs"]] for r in res["results"] if r["kind"] == "nvtx"}
    assert got_k == dict(kern)
    assert got_n == dict(nv)
    assert res["matches"] == sum(v[0] for v in kern.values()) + sum(v[0] for v in nv.values())


def cli(*args, cache=None):
    env = {**os.environ, "NSYS_AI_NO_PROGRESS": "1"}
    if cache:
        env["NSYS_AI_CACHE_DIR"] = str(cache)
    return subprocess.run([server_binary(), *args], capture_output=True, timeout=300, env=env)


def test_cli_commands(tmp_path):
    p = path_of("nsys2024_a100_lm_nvtx.sqlite")
    r = cli("timeline", str(p), "--width", "60", cache=tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"gpu:" in r.stdout
    r = cli("timeline", str(p), "--width", "500", "--format", "json", cache=tmp_path)
    assert r.returncode == 0
    j = json.loads(r.stdout)
    check_schema("timeline/range", "result", j)
    r = cli("tree", str(p), "--format", "json", "--aggregate", cache=tmp_path)
    assert r.returncode == 0
    check_schema("nvtx/tree", "result", json.loads(r.stdout))
    r = cli("tree", str(p), "--max-depth", "1", cache=tmp_path)
    assert r.returncode == 0 and b"ops" in r.stdout
    r = cli("search", str(p), "sgemm", cache=tmp_path)
    assert r.returncode == 0 and b"sgemm" in r.stdout
    r = cli("search", str(p), "sgemm", "--format", "json", cache=tmp_path)
    check_schema("search", "result", json.loads(r.stdout))
    out = tmp_path / "t.json"
    r = cli("export", str(p), "-o", str(out), cache=tmp_path)
    assert r.returncode == 0, r.stderr
    json.loads(out.read_text())
    assert cli("export", str(p), cache=tmp_path).returncode == 1
    assert cli("timeline", str(p), "--width", "abc", cache=tmp_path).returncode == 1
    assert cli("timeline", str(tmp_path / "missing.sqlite"), cache=tmp_path).returncode == 2
