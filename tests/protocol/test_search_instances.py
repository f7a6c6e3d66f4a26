"""search's instances (the timeline's next/previous match): every matching
kernel and NVTX range in time order, paged by offset or by a time (`at`),
within a window (`start`/`end`), checked against independent SQL on real
exports; pages agree with one another; bad params are -32602."""
from __future__ import annotations

import fnmatch

import pytest

from conftest import check_schema, real_path
from nsys_rpc import RpcError
from test_timeline_sqlref import connect, gpu_ops, nvtx_ranges, runtime_calls

# (profile, queries): kernels and NVTX, substring and glob
PROFILES = [("nsys2024_a100_lm_nvtx.sqlite", ("gemm", "*e*")), ("nsys2026_2gpu_nccl_before.sqlite", ("nccl", "*Reduce*")),
            ("nsys2022_nvtx_only_negative_ts.sqlite", ("myelin*Batch", "exec"))]


def matcher(query: str):
    if any(c in query for c in "*?["):
        return lambda s: fnmatch.fnmatchcase(s.lower(), query.lower())
    return lambda s: query.lower() in s.lower()


def sql_instances(path, query: str, lo=None, hi=None) -> list[tuple]:
    """(start, end, kind, track prefix) of every match, sorted by start then kind (kernels first)."""
    match = matcher(query)
    out = []
    with connect(path) as db:
        tabs = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        if "CUPTI_ACTIVITY_KIND_KERNEL" in tabs:
            strings = dict(db.execute("SELECT id, value FROM StringIds"))
            for sn, dn, s, e, dev, st in db.execute(
                    'SELECT shortName, demangledName, start, "end", deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL'):
                if match(strings[sn]) or match(strings[dn]):
                    out.append((s, max(e, s), 0, f"gpu:{dev}:{st}"))
        for g, s, e, nm in nvtx_ranges(db):
            if match(nm):
                out.append((s, e, 1, f"nvtx:{(g >> 24) & 0xFFFFFF}:{g & 0xFFFFFF}:"))
    if lo is not None:
        out = [x for x in out if x[0] < hi and x[1] >= lo]
    return sorted(out, key=lambda x: (x[0], x[2]))


def open_profile(server, name: str) -> tuple[str, object]:
    path = real_path(name)
    return server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"], path


def page(server, pid, query, check=True, **kw) -> dict:
    r = server.request("search", {"profileId": pid, "query": query, "limit": 1, **kw})
    if check:
        check_schema("search", "result", r, strict_integers=True)
    return r


@pytest.mark.parametrize("name,queries", PROFILES)
def test_instances_match_sql_in_time_order(server, name, queries):
    pid, path = open_profile(server, name)
    for query in queries:
        ref = sql_instances(path, query)
        assert ref, f"{query} matches something in {name}"
        got, off = [], 0
        while True:  # pages of 2999 (odd: pages end anywhere) until the end
            inst = page(server, pid, query, check=off == 0, instances=2999, offset=off)["instances"]
            assert inst["total"] == len(ref) and inst["offset"] == off
            got += inst["items"]
            names = inst["names"]
            assert all(0 <= it["name"] < len(names) for it in inst["items"])
            if not inst["items"]:
                break
            off += len(inst["items"])
        assert len(got) == len(ref), query
        assert [(g["start"], g["end"]) for g in got] == [(r[0], r[1]) for r in ref], query
        assert [g["kind"] for g in got] == ["kernel" if r[2] == 0 else "nvtx" for r in ref]
        # ties on start: kernels first, then by id; ids are unique per kind
        keys = [(g["start"], g["kind"] != "kernel", g["id"]) for g in got]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        for g, r in zip(got, ref):
            assert g["track"] == r[3] if r[2] == 0 else g["track"].startswith(r[3]), (g, r)


def test_instances_at_window_and_details(server):
    name = "nsys2024_a100_lm_nvtx.sqlite"
    pid, path = open_profile(server, name)
    ref = sql_instances(path, "sgemm")
    assert len(ref) > 100
    for k in (0, 1, len(ref) // 3, len(ref) - 1):
        at = ref[k][0]
        inst = page(server, pid, "sgemm", instances=5, at=at)["instances"]
        first = next(i for i, r in enumerate(ref) if r[0] >= at)
        assert inst["offset"] == first
        assert (inst["items"][0]["start"], inst["items"][0]["end"]) == ref[first][:2]
    assert page(server, pid, "sgemm", instances=5, at=ref[-1][0] + 1)["instances"] == \
        {"total": len(ref), "offset": len(ref), "names": [], "items": []}
    # a kernel's instance is the op kernel/details describes
    it = page(server, pid, "sgemm", instances=1, offset=len(ref) // 2)["instances"]["items"][0]
    d = server.request("kernel/details", {"profileId": pid, "kernelId": it["id"]})
    assert (d["start"], d["end"], d["track"]) == (it["start"], it["end"], it["track"])
    # a window restricts results, counts and instances to what overlaps it
    lo, hi = ref[len(ref) // 4][0], ref[len(ref) // 2][1]
    wref = sql_instances(path, "sgemm", lo, hi)
    r = page(server, pid, "sgemm", instances=10000, start=lo, end=hi)
    assert r["matches"] == r["instances"]["total"] == len(wref)
    assert [(g["start"], g["end"]) for g in r["instances"]["items"]] == [x[:2] for x in wref]
    assert sum(x["count"] for x in server.request("search", {"profileId": pid, "query": "sgemm", "start": lo, "end": hi})["results"]) == len(wref)


def test_instances_bad_params(server):
    pid, _ = open_profile(server, "nsys2024_a100_lm_nvtx.sqlite")
    for bad in ({"instances": 10001}, {"instances": -1}, {"offset": -1}, {"start": 10, "end": 10},
                {"start": 20, "end": 10}, {"at": "1"}, {"start": 2 ** 62}):
        with pytest.raises(RpcError) as ei:
            server.request("search", {"profileId": pid, "query": "gemm", **bad})
        assert ei.value.code == -32602, bad
    r = page(server, pid, "gemm", instances=3, offset=10 ** 9)
    assert r["instances"]["items"] == [] and r["instances"]["offset"] == 10 ** 9
    assert "instances" not in server.request("search", {"profileId": pid, "query": "gemm"})


def sql_exact(path, name: str, kind: str) -> list[tuple]:
    """(start, end) of every kernel whose short or demangled name is `name`, or every NVTX range
    named `name`, case-sensitively, by start."""
    out = []
    with connect(path) as db:
        tabs = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        if kind == "kernel" and "CUPTI_ACTIVITY_KIND_KERNEL" in tabs:
            strings = dict(db.execute("SELECT id, value FROM StringIds"))
            out = [(s, max(e, s)) for sn, dn, s, e in db.execute(
                'SELECT shortName, demangledName, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL')
                if name in (strings[sn], strings[dn])]
        elif kind == "nvtx":
            out = [(s, e) for _, s, e, nm in nvtx_ranges(db) if nm == name]
    return sorted(out)


def exact_cases(server, pid) -> list[tuple[str, str]]:
    """(kind, name): the top_kernels rows' names and the NVTX tree's root names (what w.show marks)."""
    top = server.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 4}})["rows"]
    roots = server.request("nvtx/tree", {"profileId": pid, "limit": 50})
    names = sorted({n["name"] for n in roots.get("roots", roots.get("nodes", []))})[:4]
    return [("kernel", r["name"]) for r in top] + [("nvtx", n) for n in names]


@pytest.mark.parametrize("name", ["small", "nsys2024_a100_lm_nvtx.sqlite", "nsys2022_nvtx_only_negative_ts.sqlite"])
def test_exact_names_match_sql(server, small_profile, name):
    """exact: a top_kernels row's or an NVTX node's name finds its instances and nothing else
    (not the names it is a substring of, not another case); counts and totals as SQL's."""
    pid, path = open_profile(server, name) if name != "small" else \
        (server.request("profile/open", {"path": str(small_profile)})["profileId"], small_profile)
    cases = exact_cases(server, pid)
    assert cases
    for kind, nm in cases:
        ref = sql_exact(path, nm, kind)
        assert ref, (kind, nm)
        r = page(server, pid, nm, exact=True, kinds=[kind], instances=10000)
        assert r["mode"] == "exact"
        assert r["matches"] == r["instances"]["total"] == len(ref), (kind, nm)
        assert sorted((g["start"], g["end"]) for g in r["instances"]["items"]) == ref[:10000]
        assert {it["kind"] for it in r["instances"]["items"]} == {kind}
        assert sum(x["totalNs"] for x in server.request("search", {"profileId": pid, "query": nm, "exact": True,
                                                                     "kinds": [kind]})["results"]) == \
            sum(e - s for s, e in ref)
        # a strict prefix or another case is not the name
        for other in (nm[:-1], nm.swapcase()):
            if other and other != nm and not sql_exact(path, other, kind):
                assert page(server, pid, other, exact=True, kinds=[kind])["matches"] == 0, other
    with pytest.raises(RpcError) as ei:
        server.request("search", {"profileId": pid, "query": "x", "exact": "yes"})
    assert ei.value.code == -32602


def sql_ops_and_calls(path, kind: str, query: str) -> list[tuple]:
    """(start, end, track) of every memcpy / memset op, or of every CUDA runtime call whose name
    (version suffix stripped) holds `query` case-insensitively, by start."""
    with connect(path) as db:
        if kind in ("memcpy", "memset"):
            out = [(s, e, f"gpu:{dev}:{st}") for k, dev, st, _, s, e, _, _, _ in gpu_ops(db) if k == kind]
        else:
            strings = dict(db.execute("SELECT id, value FROM StringIds"))
            out = []
            for g, s, e, _, nid in runtime_calls(db):
                nm = strings.get(nid, "")
                base = nm.split("_v")[0] if "_v" in nm and nm.rsplit("_v", 1)[1].isdigit() else nm
                if query.lower() in base.lower():
                    out.append((s, e, f"api:{(g >> 24) & 0xFFFFFF}:{g & 0xFFFFFF}"))
    return sorted(out)


@pytest.mark.parametrize("name", ["small", "nsys2024_a100_lm_nvtx.sqlite"])
def test_memcpy_memset_and_api_kinds_match_sql(server, small_profile, name):
    """kinds memcpy, memset, api: every copy, set and matching runtime call, counts, total time,
    instances in time order with their tracks, as SQL; the default kinds stay kernels, NVTX and graph launches."""
    pid, path = open_profile(server, name) if name != "small" else \
        (server.request("profile/open", {"path": str(small_profile)})["profileId"], small_profile)
    cases = (("memcpy", "memcpy"), ("memset", "memset"), ("api", "cudaLaunch"), ("api", "Synchronize"))
    for kind, query in cases if name == "small" else cases[::2]:  # a real export: one API query (SQL reads every call)
        ref = sql_ops_and_calls(path, kind, query)
        r = page(server, pid, query, kinds=[kind], instances=10000, limit=1000)
        if kind in ("memcpy", "memset") and name == "small":
            assert ref, kind  # the generated profile has both
        assert r["matches"] == r["instances"]["total"] == len(ref), (kind, query)
        assert {x["kind"] for x in r["results"]} <= {kind} and sum(x["count"] for x in r["results"]) == len(ref)
        assert sum(x["totalNs"] for x in r["results"]) == sum(e - s for s, e, _ in ref), (kind, query)
        items = r["instances"]["items"]
        assert [(g["start"], g["end"]) for g in items] == [(s, e) for s, e, _ in ref[:10000]], (kind, query)
        assert all(g["kind"] == kind for g in items)
        assert [g["track"] for g in items] == [t for _, _, t in ref[:10000]], (kind, query)
    # an API call's instance is the call timeline/range draws on its thread's API row
    r = page(server, pid, "cudaLaunch", kinds=["api"], instances=1, offset=0)
    it = r["instances"]["items"][0]
    tl = server.request("timeline/range", {"profileId": pid, "start": it["start"], "end": it["end"] + 1, "width": 100000,
                                           "tracks": [it["track"]]})
    assert any(e.get("id") == it["id"] and e["start"] == it["start"] for t in tl["tracks"] for e in t.get("events") or [])
    # mixed kinds: one time order, ops before NVTX before API calls at equal starts
    mixed = page(server, pid, "*", kinds=["memcpy", "api", "nvtx"], instances=3000)["instances"]["items"]
    order = {"memcpy": 0, "nvtx": 1, "api": 2}
    keys = [(g["start"], order[g["kind"]], g["id"]) for g in mixed]
    assert keys == sorted(keys) and {g["kind"] for g in mixed} >= {"api"}
    assert not {x["kind"] for x in server.request("search", {"profileId": pid, "query": "memcpy"})["results"]} - {"kernel", "nvtx", "graph"}
    with pytest.raises(RpcError) as ei:
        server.request("search", {"profileId": pid, "query": "x", "kinds": ["graphs"]})
    assert ei.value.code == -32602


@pytest.mark.parametrize("windowed", [False, True])
def test_cuda_graph_launches_are_found_as_the_timeline_names_them(server, windowed):
    """Graph-level tracing draws each CUDA graph launch as one op named "[CUDA graph N]"; search
    finds it by that name (default kinds and kinds ["graph"]), per graphId: count and GPU time
    against SQL, instances in time order with their timeline track; kinds ["kernel"] does not."""
    pid, path = open_profile(server, "nsys2024_a100_cudagraph.sqlite")
    with connect(path) as db:
        launches = sorted((s, max(e, s), g, dev, st) for s, e, g, dev, st in db.execute(
            'SELECT start, "end", graphId, deviceId, streamId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE'))
    assert launches, "the profile has graph launches"
    win = {}
    if windowed:  # a window holding the middle launches only
        lo, hi = launches[len(launches) // 3][0], launches[2 * len(launches) // 3][0]
        win = {"start": lo, "end": hi}
        launches = [x for x in launches if x[0] < hi and x[1] >= lo]
    by_graph: dict[int, list[tuple]] = {}
    for x in launches:
        by_graph.setdefault(x[2], []).append(x)
    for kinds in (None, ["graph"]):
        kw = {"kinds": kinds} if kinds else {}
        r = page(server, pid, "graph", instances=10000, **kw, **win)
        got = {h["name"]: (h["count"], h["totalNs"]) for h in r["results"] if h["kind"] == "graph"}
        assert got == {f"[CUDA graph {g}]": (len(v), sum(e - s for s, e, *_ in v)) for g, v in by_graph.items()}
        inst = [i for i in r["instances"]["items"] if i["kind"] == "graph"]
        assert [(i["start"], i["end"], i["track"]) for i in inst] == [(s, e, f"gpu:{d}:{st}") for s, e, _, d, st in launches]
        assert all(r["instances"]["names"][i["name"]].startswith("[CUDA graph") for i in inst)
    r = page(server, pid, "[CUDA graph", kinds=["kernel"], **win)
    assert r["matches"] == 0 and r["results"] == []
