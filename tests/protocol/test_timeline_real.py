"""timeline/tracks and timeline/range on every real profile: per-stream op
counts and busy time equal independent SQL; zoom buckets sum to the ops that
start in the grid, busyNs equals the covered time, edges are aligned and
stable across pans; events mode returns exactly the overlapping ops."""
from __future__ import annotations

import random
from collections import defaultdict

import pytest

from conftest import PROFILES, check_schema, real_path, real_profiles
from test_timeline_sqlref import Coverage, connect, gpu_ops, union_length

NAMES = [p.name for p in real_profiles()] or ["<absent>"]


def open_profile(server, name: str) -> str:
    if name == "<absent>":
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    return server.request("profile/open", {"path": str(real_path(name))}, timeout=300)["profileId"]


def gpu_track_key(t: dict, dup: bool) -> tuple:
    return (t["device"], t["stream"], t["pid"]) if dup else (t["device"], t["stream"])


def reference(name: str):
    with connect(real_path(name)) as db:
        ops = gpu_ops(db)
    by_stream = defaultdict(list)
    by_stream_pid = defaultdict(list)
    for kind, dev, stream, pid, s, e, *_ in ops:
        by_stream[(dev, stream)].append((s, e))
        by_stream_pid[(dev, stream, pid)].append((s, e))
    return by_stream, by_stream_pid


def intervals_for(track: dict, by_stream, by_stream_pid):
    parts = track["id"].split(":")
    if len(parts) == 4:
        return by_stream_pid[(track["device"], track["stream"], track["pid"])]
    return by_stream[(track["device"], track["stream"])]


@pytest.mark.parametrize("name", NAMES)
def test_tracks_match_sql(server, name):
    pid = open_profile(server, name)
    res = server.request("timeline/tracks", {"profileId": pid})
    check_schema("timeline/tracks", "result", res)
    by_stream, by_stream_pid = reference(name)
    gpu = [t for t in res["tracks"] if t["kind"] == "gpu"]
    assert sum(t["count"] for t in gpu) == sum(len(v) for v in by_stream.values())
    assert {(t["device"], t["stream"]) for t in gpu} == set(by_stream)
    for t in gpu:
        iv = intervals_for(t, by_stream, by_stream_pid)
        assert t["count"] == len(iv), t["id"]
        assert t["busyNs"] == union_length(iv), t["id"]
    assert [t["order"] for t in res["tracks"]] == list(range(len(res["tracks"])))
    assert len({t["id"] for t in res["tracks"]}) == len(res["tracks"])


def check_range(server, pid, tracks, by_stream, by_stream_pid, start, end, width):
    res = server.request("timeline/range", {"profileId": pid, "start": start, "end": end, "width": width})
    check_schema("timeline/range", "result", res)
    r, gs, ge = res["resolution"], res["start"], res["end"]
    assert r & (r - 1) == 0 and gs % r == 0 and ge % r == 0 and gs <= start and ge >= end
    assert (ge - gs) // r <= width + 1
    by_id = {t["id"]: t for t in tracks}
    assert [t["id"] for t in res["tracks"]] == [t["id"] for t in tracks]
    for tr in res["tracks"]:
        t = by_id[tr["id"]]
        if t["kind"] != "gpu":
            continue
        iv = intervals_for(t, by_stream, by_stream_pid)
        if "events" in tr:
            expect = sorted((s, e) for s, e in iv if s < end and e >= start)
            assert sorted((e["start"], e["end"]) for e in tr["events"]) == expect, tr["id"]
        else:
            in_grid = [(s, e) for s, e in iv if gs <= s < ge]
            assert sum(b["count"] for b in tr["buckets"]) == len(in_grid), tr["id"]
            assert sum(b["busyNs"] for b in tr["buckets"]) == union_length(iv, gs, ge), tr["id"]
            cov = Coverage(iv)
            for b in tr["buckets"]:
                assert b["end"] - b["start"] == r and b["start"] % r == 0
                assert 0 <= b["busyNs"] <= r
                members = cov.members(b["start"], b["end"])
                assert b["count"] == len(members)
                assert b["busyNs"] == cov.busy(b["start"], b["end"])
                if members:
                    assert b["longest"]["dur"] == max(e - s for s, e in members)
    return res


@pytest.mark.parametrize("name", NAMES)
def test_range_matches_sql(server, name):
    pid = open_profile(server, name)
    tracks = server.request("timeline/tracks", {"profileId": pid})
    by_stream, by_stream_pid = reference(name)
    s, e = tracks["start"], tracks["end"]
    if e <= s:
        e = s + 1
    rng = random.Random(name)
    check_range(server, pid, tracks["tracks"], by_stream, by_stream_pid, s, e, 2000)
    check_range(server, pid, tracks["tracks"], by_stream, by_stream_pid, s, e, 50)
    for _ in range(3):
        span = max(1, (e - s) // rng.choice([3, 40, 1000]))
        a = rng.randint(s, max(s, e - span))
        check_range(server, pid, tracks["tracks"], by_stream, by_stream_pid, a, a + span, rng.choice([300, 2000]))


def test_bucket_edges_stable_across_pans(server):
    name = "nsys2026_2gpu_nccl_before.sqlite"
    if name not in NAMES:
        pytest.skip(f"real profile {name} not found in {PROFILES}")
    pid = open_profile(server, name)
    tracks = server.request("timeline/tracks", {"profileId": pid})
    s, e = tracks["start"], tracks["end"]
    w = (e - s) // 4
    a = server.request("timeline/range", {"profileId": pid, "start": s + w, "end": s + 2 * w, "width": 1000,
                                          "maxEvents": 0})
    r = a["resolution"]
    b = server.request("timeline/range", {"profileId": pid, "start": s + w + 137 * r + 5, "end": s + 2 * w + 137 * r + 5,
                                          "width": 1000, "maxEvents": 0})
    assert b["resolution"] == r
    lo, hi = b["start"], a["end"]  # the part of the timeline both windows cover
    compared = 0
    for ta, tb in zip(a["tracks"], b["tracks"]):
        ba = {x["start"]: x for x in ta["buckets"] if lo <= x["start"] < hi}
        bb = {x["start"]: x for x in tb["buckets"] if lo <= x["start"] < hi}
        assert ba == bb, ta["id"]
        compared += len(ba)
    assert compared > 0


def test_range_bad_params(server):
    name = "nsys2026_tiny.sqlite"
    if name not in NAMES:
        pytest.skip(f"real profile {name} not found in {PROFILES}")
    pid = open_profile(server, name)
    from nsys_rpc import RpcError
    for params, code in (({"start": 10, "end": 5, "width": 10}, -32602),
                         ({"start": 0, "end": 5, "width": 0}, -32602),
                         ({"start": 0, "end": 5}, -32602),
                         ({"start": 0, "end": 5, "width": 10, "tracks": ["gpu:42:42"]}, -32008),
                         ({"start": "x", "end": 5, "width": 10}, -32602)):
        with pytest.raises(RpcError) as ei:
            server.request("timeline/range", {"profileId": pid, **params})
        assert ei.value.code == code, params
