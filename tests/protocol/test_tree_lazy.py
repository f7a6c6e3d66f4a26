"""nvtx/tree a level at a time: pages and `parent` requests give exactly the
whole tree (asked for explicitly), cursors are validated, windows trim
children, maxBytes pages, aggregate statistics follow from the ranges, and
PyTorch autograd names aggregate by op name."""
from __future__ import annotations

import shutil
import sqlite3
from collections import defaultdict

import pytest

from conftest import PROFILES, check_schema
from nsys_rpc import RpcError

MiB2 = 2 * 1024 * 1024
FIELDS = ("id", "name", "domain", "depth", "start", "end", "gpuStart", "gpuEnd", "opCount", "kernelNs",
          "childCount", "topKernels", "pid", "tid", "instances", "cpuNs", "minNs", "medianNs", "maxNs",
          "op", "seq", "opId")


def req(server, pid, **params):
    res = server.request("nvtx/tree", {"profileId": pid, **params}, timeout=300)
    if len(res["nodes"]) <= 20:  # (jsonschema is slow on thousands of nodes)
        check_schema("nvtx/tree", "result", res)
    return res


def whole(server, pid, **params):
    res = req(server, pid, maxDepth=65535, limit=10**9, maxBytes=2**40, **params)
    check_schema("nvtx/tree", "result", {**res, "nodes": res["nodes"][:3]})
    assert not res["truncated"] and res["next"] is None
    return res["nodes"]


def head(n):
    return {k: n[k] for k in FIELDS if k in n}


def pages(server, pid, limit, **params):
    """Every node of one level, page after page."""
    out, cursor, total = [], None, None
    while True:
        res = req(server, pid, limit=limit, **({"cursor": cursor} if cursor else {}), **params)
        assert res["total"] == (total if total is not None else res["total"])
        total = res["total"]
        out += res["nodes"]
        assert all("children" not in n for n in res["nodes"]) or "maxDepth" in params
        if res["next"] is None:
            assert not res["truncated"] and len(out) == total
            return out
        assert res["truncated"] and len(res["nodes"]) <= limit
        cursor = res["next"]


def walk(nodes):
    for n in nodes:
        yield n
        yield from walk(n.get("children", []))


@pytest.fixture()
def small(server, small_profile):
    return server.request("profile/open", {"path": str(small_profile)}, timeout=300)["profileId"]


@pytest.mark.parametrize("mode", ["ranges", "aggregate"])
def test_levels_are_the_whole_tree(server, small, mode):
    tree = whole(server, small, mode=mode)
    assert [head(n) for n in pages(server, small, 7, mode=mode)] == [head(n) for n in tree]
    checked = 0
    for n in walk(tree):
        kids = n["children"]
        assert n["childCount"] == len(kids)
        if kids and checked < 20:
            got = pages(server, small, 5, mode=mode, parent=n["id"])
            assert [head(c) for c in got] == [head(c) for c in kids]
            assert all(c["depth"] == n["depth"] + 1 for c in got)
            checked += 1
    assert checked > 10
    # ids are stable across calls
    assert [n["id"] for n in req(server, small, mode=mode)["nodes"]] == [n["id"] for n in tree[:200]]


def test_cursor_and_parent_are_validated(server, small):
    first = req(server, small, limit=3)
    assert first["total"] > 3
    tok = first["next"]
    assert isinstance(tok, str)
    assert req(server, small, limit=3, cursor=tok)["nodes"][0]["id"] != first["nodes"][0]["id"]
    flipped = tok[:-1] + ("0" if tok[-1] != "0" else "1")
    parent = next(n for n in first["nodes"] if n["childCount"])
    bad = [{"cursor": "zzz"}, {"cursor": flipped}, {"cursor": tok.upper() + "0"}, {"cursor": ""},
           {"cursor": tok, "parent": parent["id"]},            # a token of another level
           {"cursor": tok, "mode": "aggregate"},              # of another mode
           {"cursor": tok, "start": 0, "end": 1},             # of another window
           {"parent": 2**31}, {"parent": -1}, {"mode": "flat"},
           {"mode": "ranges", "aggregate": True}, {"limit": 0}, {"maxBytes": 10}]
    for extra in bad:
        with pytest.raises(RpcError) as e:
            server.request("nvtx/tree", {"profileId": small, "limit": 3, **extra})
        assert e.value.code == -32602, extra
    # the server keeps serving
    assert req(server, small, limit=3)["nodes"] == first["nodes"]


def test_window_trims_children(server, small):
    tree = whole(server, small)
    parent = max(walk(tree), key=lambda n: n["childCount"])
    kids = parent["children"]
    assert len(kids) >= 3
    ws, we = kids[1]["start"], kids[-2]["end"]
    want = [c["id"] for c in kids if c["start"] <= we and c["end"] >= ws]
    got = req(server, small, parent=parent["id"], start=ws, end=we, limit=10**6)
    assert [c["id"] for c in got["nodes"]] == want and got["total"] == len(want)
    assert next(n for n in walk(whole(server, small, start=ws, end=we)) if n["id"] == parent["id"]) \
        ["childCount"] == len(want)
    # a node outside the window is not a node of the windowed tree
    outside = next(n for n in tree if n["end"] < ws)
    with pytest.raises(RpcError) as e:
        server.request("nvtx/tree", {"profileId": small, "parent": outside["id"], "start": ws, "end": we})
    assert e.value.code == -32602


def test_max_bytes_pages_whole_subtrees(server, small):
    tree = whole(server, small)
    got, cursor = [], None
    while True:
        res = server.request("nvtx/tree", {"profileId": small, "maxDepth": 65535, "maxBytes": 4096,
                                           **({"cursor": cursor} if cursor else {})})
        got += res["nodes"]
        if not res["next"]:
            break
        cursor = res["next"]
    assert [n["id"] for n in got] == [n["id"] for n in tree]
    by_id = {n["id"]: n for n in tree}
    cut = 0
    for n in got:  # a node comes with its whole subtree, or (alone on its page) without children
        if "children" in n:
            assert n == by_id[n["id"]]
        else:
            cut += 1
            assert head(n) == head(by_id[n["id"]])
    assert cut >= 1  # the small profile's train steps do not fit in 4 KB


def test_default_reply_is_one_small_level(server, small):
    res = req(server, small)
    assert all("children" not in n for n in res["nodes"]) and len(res["nodes"]) <= 200
    agg = req(server, small, mode="aggregate")
    assert agg["aggregated"] and agg["mode"] == "aggregate"


def grouped_by_path(tree):
    """Ranges grouped by name path (what aggregate merges)."""
    groups = defaultdict(list)

    def go(nodes, path):
        for n in nodes:
            p = path + ((n.get("op", n["name"]), n["domain"]),)
            groups[p].append(n)
            go(n["children"], p)
    go(tree, ())
    return groups


def agg_by_path(tree):
    out = {}

    def go(nodes, path):
        for n in nodes:
            p = path + ((n["name"], n["domain"]),)
            assert p not in out
            out[p] = n
            go(n["children"], p)
    go(tree, ())
    return out


def check_aggregate(server, pid):
    ranges = grouped_by_path(whole(server, pid))
    agg = agg_by_path(whole(server, pid, mode="aggregate"))
    assert set(ranges) == set(agg)
    for path, members in ranges.items():
        a = agg[path]
        durs = sorted(m["end"] - m["start"] for m in members)
        assert a["instances"] == len(members)
        assert (a["minNs"], a["medianNs"], a["maxNs"]) == (durs[0], durs[(len(durs) - 1) // 2], durs[-1])
        assert a["cpuNs"] == sum(durs)
        assert a["opCount"] == sum(m["opCount"] for m in members)
        assert a["kernelNs"] == sum(m["kernelNs"] for m in members)
        assert a["start"] == min(m["start"] for m in members) and a["end"] == max(m["end"] for m in members)
        gs = [m["gpuStart"] for m in members if m["gpuStart"] is not None]
        assert a["gpuStart"] == (min(gs) if gs else None)
    return ranges, agg


def test_aggregate_statistics_follow_from_the_ranges(server, small):
    check_aggregate(server, small)


@pytest.mark.parametrize("name", ["nsys2024_a100_lm_nvtx", "nsys2025_h200_nvtx13k"])
def test_aggregate_statistics_real(server, name):
    path = PROFILES / f"{name}.sqlite"
    if not path.exists():
        pytest.skip(f"real profile {path.name} not found in {PROFILES}")
    pid = server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    check_aggregate(server, pid)


def autograd_copy(src, dst):
    """A copy of a generated profile whose 'attention' and 'mlp' ranges carry
    PyTorch autograd names (every call a distinct text), some 'mlp' plain."""
    shutil.copy(src, dst)
    with sqlite3.connect(dst) as db:
        db.execute("UPDATE NVTX_EVENTS SET text = 'aten::addmm, seq = ' || rowid || ', op_id = ' || (rowid + 7) "
                   "WHERE text = 'attention'")
        db.execute("UPDATE NVTX_EVENTS SET text = CASE WHEN rowid % 2 = 0 THEN 'aten::mm' ELSE "
                   "'aten::mm, seq = ' || rowid || ', op_id = ' || (rowid + 7) || ', sizes = [[2, 3], [3, 4]]' END "
                   "WHERE text = 'mlp'")
        n = db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'aten::%'").fetchone()[0]
    assert n > 100
    return dst


def test_autograd_names_aggregate_by_op(server, small_profile, tmp_path):
    before = server.request("profile/open", {"path": str(small_profile)}, timeout=300)["profileId"]
    plain = agg_by_path(whole(server, before, mode="aggregate"))
    path = autograd_copy(small_profile, tmp_path / "autograd.sqlite")
    pid = server.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    ranges, agg = check_aggregate(server, pid)
    rename = {"attention": "aten::addmm", "mlp": "aten::mm"}
    want = {tuple((rename.get(n, n), d) for n, d in p): v for p, v in plain.items()}
    assert set(agg) == set(want)  # one node per op, where there was one per name
    for p, a in agg.items():
        assert (a["instances"], a["opCount"], a["kernelNs"], a["cpuNs"]) == \
            (want[p]["instances"], want[p]["opCount"], want[p]["kernelNs"], want[p]["cpuNs"])
    # range nodes keep the sequence number
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        texts = {(s, e): t for s, e, t in db.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'aten::%'")}
    seen = 0
    for members in ranges.values():
        for m in members:
            t = texts.get((m["start"], m["end"]))
            if t is None:
                continue
            assert m["name"] == t
            if ", seq = " in t:
                seq = int(t.split(", seq = ")[1].split(",")[0])
                assert (m["op"], m["seq"], m["opId"]) == (t.split(",")[0], seq, seq + 7)
                seen += 1
            else:
                assert "seq" not in m and "op" not in m
    assert seen > 50
    # the aggregate first level stays small: one node per op
    level = req(server, pid, mode="aggregate")
    assert level["total"] == len([p for p in agg if len(p) == 1])


def test_aggregate_same_name_neighbours(server, small_profile, tmp_path):
    """Back-to-back ranges of one name that are not siblings of one path: a range nested in a range of its own
    name, the same name in another domain, the same name under another parent (the name-path pass reuses the
    previous range's path only for a true sibling)."""
    dst = tmp_path / "neighbours.sqlite"
    shutil.copy(small_profile, dst)
    with sqlite3.connect(dst) as db:
        gtid, t0 = db.execute("SELECT globalTid, min(start) FROM NVTX_EVENTS GROUP BY globalTid LIMIT 1").fetchone()
        fake = (gtid >> 24 << 24) | 0xBCDEF
        rows = [(t0, t0, 75, "dom7", fake, 7)]
        for i in range(60):
            s = t0 + i * 1000
            dom = 7 if i % 3 == 0 else 0
            rows.append((s, s + 900, 59, "X", fake, dom))           # X
            rows.append((s + 10, s + 800, 59, "X", fake, dom))      # X > X
            rows.append((s + 20, s + 30, 59, "X", fake, 0))         # X > X > X, default domain
            rows.append((s + 40, s + 50, 59, "X", fake, 7))         # ... and in dom7
            rows.append((s + 850, s + 880, 59, "Y" if i % 2 else "X", fake, dom))  # X > Y or X > X again
        db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                       "VALUES (?, ?, ?, ?, ?, ?)", rows)
    pid = server.request("profile/open", {"path": str(dst)}, timeout=300)["profileId"]
    ranges, agg = check_aggregate(server, pid)
    assert sum(1 for p in agg if all(n == "X" for n, _ in p)) >= 6
