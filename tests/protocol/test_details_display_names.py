"""Display names (issue 3: simplified names derived from the short and
demangled names, one per distinct kernel name): kernel/details carries
`displayName`, search matches and returns it, export/perfetto names GPU slices
with it (the recorded names in args), and the ids are stable across reopen,
from the index cache and after a fresh build."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import check_schema, need_real
from nsys_rpc import Server

PROFILE = "nsys2024_a100_lm_nvtx"


def open_profile(s: Server, path: Path) -> str:
    return s.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]


def op_count(s: Server, pid: str) -> int:
    tracks = s.request("timeline/tracks", {"profileId": pid})["tracks"]
    return sum(t["count"] for t in tracks if t["kind"] == "gpu")


def all_details(s: Server, pid: str, n: int, step: int = 1) -> list[dict]:
    return [s.request("kernel/details", {"profileId": pid, "kernelId": k}) for k in range(0, n, step)]


def check_display(d: dict) -> None:
    disp, full = d["displayName"], d["demangledName"]
    assert disp, d
    assert len(disp.encode()) <= len(full.encode()), (disp, full)
    assert len(disp.encode()) <= 160
    if d["kind"] != "kernel":
        assert disp == d["name"] == full
    elif "::" in full and "(" in full:  # a demangled C++ name: return type and arguments go
        assert not disp.startswith("void ") and "(" not in disp, (disp, full)


def test_kernel_details_display_name(tmp_path):
    p = need_real(PROFILE)
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path)}) as s:
        pid = open_profile(s, p)
        n = op_count(s, pid)
        details = all_details(s, pid, n, max(1, n // 400))
    kinds = set()
    for d in details:
        check_schema("kernel/details", "result", d)
        check_display(d)
        kinds.add(d["kind"])
    assert "kernel" in kinds
    # the templated at::native kernels are shortened, and keep their short name first
    shortened = [d for d in details if d["kind"] == "kernel" and len(d["displayName"]) < len(d["demangledName"])]
    assert shortened
    assert all(d["displayName"].startswith(d["name"]) for d in shortened if "<" in d["displayName"])


def test_display_names_stable_across_reopen(tmp_path):
    p = need_real("nsys2026_2gpu_nccl_after")
    seen = []
    for cache in ("a", "a", "b"):  # build, reopen from the index cache, fresh build
        with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path / cache)}) as s:
            pid = open_profile(s, p)
            n = op_count(s, pid)
            seen.append([(d["id"], d["name"], d["displayName"]) for d in all_details(s, pid, n, max(1, n // 200))])
    assert seen[0] == seen[1] == seen[2]


def test_search_matches_and_returns_display_names(tmp_path):
    p = need_real(PROFILE)
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path)}) as s:
        pid = open_profile(s, p)
        res = first = s.request("search", {"profileId": pid, "query": "sum_functor<float>", "limit": 1000})
        check_schema("search", "result", res)
        # the demangled name says "sum_functor<float, float, float>": only the display name matches
        assert res["results"], res
        for r in res["results"]:
            assert r["kind"] == "kernel"
            assert "sum_functor<float>" in r["displayName"]
            assert "sum_functor<float>" not in r["demangledName"]
        res = s.request("search", {"profileId": pid, "query": "elementwise", "limit": 1000})
        check_schema("search", "result", res)
        ks = [r for r in res["results"] if r["kind"] == "kernel"]
        assert ks
        for r in ks:
            assert r["displayName"] and len(r["displayName"].encode()) <= len(r["demangledName"].encode())
    # counts equal SQL: sum_functor<float, float, float> folds to sum_functor<float> in the display name
    import re
    pat = re.compile(r"sum_functor<float(, float)*>")
    with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as db:
        n = sum(1 for (v,) in db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                         "JOIN StringIds s ON s.id = k.demangledName") if pat.search(v))
    assert n > 0 and first["matches"] == n == sum(r["count"] for r in first["results"])


def test_perfetto_slices_use_display_names(tmp_path):
    p = need_real(PROFILE)
    out = tmp_path / "t.json"
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path / "c")}) as s:
        pid = open_profile(s, p)
        s.request("export/perfetto", {"profileId": pid, "path": str(out)}, timeout=300)
        n = op_count(s, pid)
        details = {d["id"]: d for d in all_details(s, pid, n, max(1, n // 100))}
    ev = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X" and "kernelId" in e["args"]]
    assert len(ev) == n
    checked = 0
    for e in ev:
        d = details.get(e["args"]["kernelId"])
        if not d:
            continue
        assert e["name"] == d["displayName"]
        if d["kind"] == "kernel":
            assert e["args"]["demangledName"] == d["demangledName"]
            assert e["args"]["shortName"] == d["name"]
        checked += 1
    assert checked == len(details)


def test_search_group_names_the_heaviest_instance(tmp_path):
    """A short name covers many template instances: the group's demangledName
    (and so its displayName) is the instance with the most matched GPU time."""
    p = need_real(PROFILE)
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path)}) as s:
        pid = open_profile(s, p)
        res = s.request("search", {"profileId": pid, "query": "elementwise", "kinds": ["kernel"], "limit": 1000})
        check_schema("search", "result", res)
    with sqlite3.connect(f"file:{p}?mode=ro", uri=True) as db:
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        per = {}
        for sn, dn, st, en in db.execute('SELECT shortName, demangledName, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL'):
            short, full = strings[sn], strings[dn]
            if "elementwise" in short.lower() or "elementwise" in full.lower():
                g = per.setdefault(short, {})
                g[full] = g.get(full, 0) + max(en - st, 0)
    got = {r["name"]: r["demangledName"] for r in res["results"]}
    assert set(got) == set(per)
    multi = 0
    for short, fulls in per.items():
        top = max(fulls.values())
        assert fulls[got[short]] == top, short
        multi += len(fulls) > 1
    assert multi > 0  # the profile has short names with several instances
