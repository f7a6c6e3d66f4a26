"""nvtx/tree on the real profiles with NVTX: every range's inclusive op count
and GPU projection equal an independent Python implementation of NVIDIA's
nvtx_gpu_proj_trace rule (ops launched by runtime calls on the same thread
that lie inside the range; joined on correlationId within the process)."""
from __future__ import annotations

from collections import Counter

import pytest

from conftest import PROFILES, check_schema, real_profiles
from test_timeline_sqlref import connect, projection

NVTX_PROFILES = ["nsys2024_a100_lm_nvtx", "nsys2025_h200_nvtx13k", "nsys2026_h100_2gpu_1s",
                 "nsys2026_2gpu_nccl_before", "nsys2026_2gpu_nccl_after"]


def open_profile(server, name: str) -> str:
    path = PROFILES / f"{name}.sqlite"
    if not path.exists():
        pytest.skip(f"real profile {path.name} not found in {PROFILES}")
    return server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]


def whole(server, pid: str, **params) -> dict:
    """The whole tree, asked for explicitly (every depth, every root, no byte cap)."""
    res = server.request("nvtx/tree", {"profileId": pid, "maxDepth": 65535, "limit": 10**9,
                                       "maxBytes": 2**40, **params}, timeout=300)
    check_schema("nvtx/tree", "result", res)
    assert res["truncated"] is False and res["next"] is None and len(res["nodes"]) == res["total"]
    return res


def walk(nodes, out, tid=None):
    for n in nodes:
        t = n.get("tid", tid)
        out.append((t, n))
        walk(n["children"], out, t)
    return out


@pytest.mark.parametrize("name", NVTX_PROFILES)
def test_tree_projection_matches_reference(server, name):
    pid = open_profile(server, name)
    res = whole(server, pid)
    with connect(PROFILES / f"{name}.sqlite") as db:
        ref = projection(db)
    nodes = walk(res["nodes"], [])
    assert len(nodes) == len(ref) == res["nodeCount"]
    got = Counter((tid, n["start"], n["end"], n["name"], n["opCount"], n["gpuStart"], n["gpuEnd"]) for tid, n in nodes)
    want = Counter((g & 0xFFFFFF, s, e, nm, v[0], v[1], v[2]) for (g, s, e, nm, _), v in ref.items())
    assert got == want
    # inclusive: a parent counts at least what each child counts
    for _, n in nodes:
        for c in n["children"]:
            assert c["opCount"] <= n["opCount"]
            assert n["start"] <= c["start"] and c["end"] <= n["end"]
    assert any(n["opCount"] for _, n in nodes)


@pytest.mark.parametrize("name", NVTX_PROFILES[:2])
def test_tree_aggregate_and_filters(server, name):
    pid = open_profile(server, name)
    full = whole(server, pid)
    agg = whole(server, pid, aggregate=True)
    assert agg["aggregated"] is True
    assert sum(r["opCount"] for r in agg["nodes"]) == sum(r["opCount"] for r in full["nodes"])
    assert sum(r["instances"] for r in agg["nodes"]) == len(full["nodes"])
    names = [(r["name"], r["domain"]) for r in agg["nodes"]]
    assert len(names) == len(set(names))
    shallow = whole(server, pid, maxDepth=0)
    assert all(not r["children"] for r in shallow["nodes"])
    assert [r["opCount"] for r in shallow["nodes"]] == [r["opCount"] for r in full["nodes"]]
    # a window keeps exactly the ranges that overlap it
    roots = full["nodes"]
    mid = roots[len(roots) // 2]
    win = whole(server, pid, start=mid["start"], end=mid["end"])
    assert all(r["end"] >= mid["start"] and r["start"] <= mid["end"] for r in win["nodes"])
    assert any(r["start"] == mid["start"] and r["name"] == mid["name"] for r in win["nodes"])


def test_tree_device_filter(server):
    name = "nsys2026_h100_2gpu_1s"
    pid = open_profile(server, name)
    full = whole(server, pid)
    total = sum(r["opCount"] for r in full["nodes"])
    per_dev = 0
    for dev in (0, 1):
        t = whole(server, pid, device=dev)
        per_dev += sum(r["opCount"] for r in t["nodes"])
        assert all(r["opCount"] > 0 for r in t["nodes"])
    assert per_dev == total
