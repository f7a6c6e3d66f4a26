"""Rank sets (profile/openSet + set/*): a generated 4-rank job on two nodes
with a planted data-loader straggler (rank 2, every 7th step) and a planted
clock offset (node 1 off by 3 ms); the real two-GPU NCCL exports against
independent SQL."""
from __future__ import annotations

import sqlite3

import pytest

from conftest import check_schema, generate, need_real
from nsys_rpc import RpcError

OFFSET = 3_000_000


@pytest.fixture(scope="session")
def rank_files(generated_dir):
    out = generated_dir / "ranks4"
    generate(generated_dir / "ranks4_all.sqlite", "--preset", "tiny", "--gpus", "4", "--iterations", "15",
             "--kernels", "4000", "--shape", "nccl-nvtx", "--rank-files", str(out), "--ranks-per-node", "2",
             "--node-offset-ns", str(OFFSET), "--straggler-rank", "2")
    return [str(out / ("rank%d.sqlite" % r)) for r in range(4)]


def test_planted_straggler_and_clock_offsets(server, rank_files):
    res = server.request("profile/openSet", {"paths": rank_files[::-1], "threads": 2})
    check_schema("profile/openSet", "result", res)
    assert [r["globalRank"] for r in res["ranks"]] == [0, 1, 2, 3]
    assert {r["rankSource"] for r in res["ranks"]} == {"nccl"}
    ck = res["clock"]
    assert ck["method"] == "session+nccl"
    corr = {n["host"]: n["correctionNs"] for n in ck["nodes"]}
    assert corr["node0"] == 0
    assert abs(corr["node1"] - OFFSET) < 20_000, corr
    assert res["collectives"]["matchedBy"] == "payload"
    assert res["collectives"]["unmatched"] == 0
    assert res["stragglers"]["straggler"] == 2
    sid = res["setId"]
    st = server.request("set/stragglers", {"setId": sid, "rank": 2})
    check_schema("set/stragglers", "result", st)
    stalled = {e["step"] for e in st["events"] if e["cause"] == "dataLoad"}
    assert stalled == {0, 7, 14}, st["events"]
    for e in st["events"]:
        if e["step"] in (0, 7, 14):
            assert e["cause"] == "dataLoad", e  # the first measured, the rest of the step carried
        if e["cause"] == "dataLoad" and e["carriedFrom"] is None:
            assert e["dataLoadNs"] >= 1_000_000 and e["peerMedian"]["dataLoadNs"] == 0
    firsts = [e for e in st["events"] if e["carriedFrom"] is None and e["cause"] == "dataLoad"]
    assert [e["step"] for e in firsts] == [0, 7, 14]
    assert len(st["skew"]["rows"]) == 4 and st["skew"]["steps"] == 15
    late = st["skew"]["rows"][2]["lateNs"]
    assert all(late[s] > 1_000_000 for s in (0, 7, 14))
    # collectives: paged, every rank in each, the last rank's start is the latest
    first = server.request("set/collectives", {"setId": sid, "limit": 10})
    check_schema("set/collectives", "result", first)
    rows = first["rows"]
    while first["next"]:
        first = server.request("set/collectives", {"setId": sid, "limit": 10, "cursor": first["next"]})
        rows += first["rows"]
    assert len(rows) == res["collectives"]["count"] == first["total"]
    for c in rows:
        assert c["ranks"] == 4 and c["bytes"] is not None and c["busBwGBps"] is not None
        assert c["startsNs"][c["lastRank"]] == max(c["startsNs"])
        assert c["skewNs"] == max(c["startsNs"]) - min(c["startsNs"])
    nc = server.request("set/nccl", {"setId": sid})
    check_schema("set/nccl", "result", nc)
    assert sum(r["count"] for r in nc["rows"]) == len(rows)
    assert nc["link"]["kind"] == "unknown"  # two nodes
    with pytest.raises(RpcError) as ei:
        server.request("set/collectives", {"setId": sid, "cursor": "0" * 24})
    assert ei.value.code == -32602
    # rank + at: the collective holding that rank's kernel (what a client links on a click)
    for c in rows[::7]:
        for r in (0, c["lastRank"], 3):
            one = server.request("set/collectives", {"setId": sid, "rank": r, "at": c["startsNs"][r]})
            check_schema("set/collectives", "result", one)
            assert [x["id"] for x in one["rows"]] == [c["id"]] and one["rows"][0] == c
    miss = server.request("set/collectives", {"setId": sid, "rank": 1, "at": rows[0]["startsNs"][1] + 1})
    assert miss["rows"] == [] and miss["total"] == 0
    for bad in ({"rank": 1}, {"at": rows[0]["start"]}, {"rank": 4, "at": rows[0]["start"]}):
        with pytest.raises(RpcError) as ei:
            server.request("set/collectives", {"setId": sid, **bad})
        assert ei.value.code == -32602, bad
    assert server.request("set/close", {"setId": sid}) == {"closed": True}
    with pytest.raises(RpcError):
        server.request("set/nccl", {"setId": sid})


@pytest.fixture(scope="session")
def derived_rank_files(generated_dir):
    """The generator's fast path (--derive-ranks): 2 simulated ranks, 8 rank files copied from
    them in SQL (each its own pid, payload rank and clock), 4 nodes, the straggler rank 5."""
    out = generated_dir / "derived8"
    generate(generated_dir / "derived8_all.sqlite", "--preset", "tiny", "--iterations", "15", "--kernels", "2000",
             "--shape", "nccl-nvtx", "--rank-files", str(out), "--derive-ranks", "8", "--ranks-per-node", "2",
             "--node-offset-ns", str(OFFSET), "--straggler-rank", "5")
    return [str(out / ("rank%d.sqlite" % r)) for r in range(8)]


def test_derived_set_keeps_the_planted_straggler_and_clock_offsets(server, derived_rank_files):
    # each derived file is its own rank: pid, NCCL payload rank and size, session start (independent SQL)
    pids, starts = set(), []
    for r, f in enumerate(derived_rank_files):
        db = sqlite3.connect("file:%s?mode=ro" % f, uri=True)
        pid, gpids = db.execute("SELECT pid, globalPid FROM PROCESSES").fetchone()
        assert gpids >> 24 & 0xFFFFFF == pid and not pids & {pid}
        pids.add(pid)
        assert {g >> 24 & 0xFFFFFF for (g,) in db.execute("SELECT DISTINCT globalTid FROM NVTX_EVENTS")} == {pid}
        pay = db.execute("SELECT DISTINCT json_extract(jsonText, '$.Rank'), json_extract(jsonText, '$.\"No. of ranks\"') "
                         "FROM NVTX_EVENTS WHERE jsonText LIKE '%NCCL communicator ID%'").fetchall()
        assert pay == [(r, 8)], pay
        starts.append(db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])
        db.close()
    assert len(set(starts[:5] + starts[6:])) == 7  # every rank on its own file clock
    res = server.request("profile/openSet", {"paths": derived_rank_files, "threads": 2})
    check_schema("profile/openSet", "result", res)
    assert [r["globalRank"] for r in res["ranks"]] == list(range(8))
    assert {r["rankSource"] for r in res["ranks"]} == {"nccl"}
    assert res["clock"]["method"] == "session+nccl"
    corr = {n["host"]: n["correctionNs"] for n in res["clock"]["nodes"]}
    for k in range(4):
        assert abs(corr["node%d" % k] - k * OFFSET) < 20_000, corr
    assert res["collectives"]["matchedBy"] == "payload" and res["collectives"]["unmatched"] == 0
    assert res["stragglers"]["straggler"] == 5
    st = server.request("set/stragglers", {"setId": res["setId"], "rank": 5})
    firsts = [e["step"] for e in st["events"] if e["carriedFrom"] is None and e["cause"] == "dataLoad"]
    assert firsts == [0, 7, 14], st["events"]
    others = server.request("set/stragglers", {"setId": res["setId"], "limit": 100000})
    assert {e["rank"] for e in others["events"]} == {5}
    server.request("set/close", {"setId": res["setId"]})


def test_budget_closes_files(server, rank_files):
    res = server.request("profile/openSet", {"paths": rank_files, "memoryBudgetMb": 64, "threads": 1})
    assert res["parallel"]["keptOpen"] in (True, False)
    if not res["parallel"]["keptOpen"]:
        assert all(f["profileId"] is None for f in res["files"])
    assert res["stragglers"]["straggler"] == 2


def test_real_two_gpu_nccl_against_sql(server):
    p = need_real("nsys2026_2gpu_nccl_before")
    res = server.request("profile/openSet", {"paths": [str(p)]})
    db = sqlite3.connect("file:%s?mode=ro" % p, uri=True)
    want = dict(db.execute(
        "SELECT k.deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
        "WHERE s.value LIKE 'nccl%' GROUP BY 1").fetchall())
    assert {r["device"]: r["ncclKernels"] for r in res["ranks"]} == want
    assert res["collectives"]["matchedBy"] == "order"
    assert res["collectives"]["count"] == min(want.values())
    # every collective's per-rank durations are the kernels' own, in order per device
    rows = server.request("set/collectives", {"setId": res["setId"], "limit": 100000})["rows"]
    for r in res["ranks"]:
        durs = [e - s for s, e in db.execute(
            "SELECT k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
            "WHERE s.value LIKE 'nccl%' AND k.deviceId = ? ORDER BY k.start, k.end", (r["device"],))]
        assert sorted(c["durationsNs"][r["rank"]] for c in rows) == sorted(durs[:len(rows)])


def test_bad_sets_are_errors_and_the_server_keeps_serving(server, rank_files, tmp_path):
    with pytest.raises(RpcError) as ei:
        server.request("profile/openSet", {"paths": [rank_files[0], rank_files[0]]})
    assert ei.value.code == -32602 and "listed twice" in ei.value.message
    with pytest.raises(RpcError) as ei:
        server.request("profile/openSet", {"paths": [rank_files[0], str(tmp_path / "missing.sqlite")]})
    assert ei.value.code == -32001 and "params.paths[1]" in ei.value.message
    with pytest.raises(RpcError) as ei:
        server.request("set/reduce", {"summaries": [{"path": "x"}]})
    assert ei.value.code == -32602 and "params.summaries[0]" in ei.value.message
    assert server.request("set/close", {"setId": "s999"}) == {"closed": False}
    res = server.request("profile/openSet", {"paths": rank_files[:2]})
    assert res["collectives"]["count"] == 0 and res["collectives"]["unmatched"] > 0  # a 4-rank communicator
