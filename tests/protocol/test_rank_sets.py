"""Rank sets (profile/openSet + set/*): a generated 4-rank job on two nodes
with a planted data-loader straggler (rank 2, every 7th step) and a planted
clock offset (node 1 off by 3 ms); the real two-GPU NCCL exports against
independent SQL."""
from __future__ import annotations

import base64
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


COLUMNS = ["start", "end", "bytes", "commSize", "step", "window", "compute", "dataLoad", "h2d", "sync", "launchGap"]


def unpack(c):
    """The packed collectives decoded independently of the server (docs/multirank.md)."""
    raw, pos, cols = base64.b64decode(c["packed"], validate=True), 0, []
    for _ in range(len(COLUMNS) + 2):
        prev, col = 0, []
        for _ in range(c["n"]):
            z = shift = 0
            while True:
                b = raw[pos]
                pos += 1
                z |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            prev = (prev + ((z >> 1) ^ -(z & 1))) % 2**64
            col.append(prev - 2**64 if prev >= 2**63 else prev)
        cols.append(col)
    assert pos == len(raw)
    out = dict(zip(COLUMNS, cols))
    out["comm"] = [c["comms"][i] for i in cols[-2]]
    out["type"] = [c["types"][i] for i in cols[-1]]
    return out


def test_packed_summaries_are_the_columns_and_reduce_alike(server, rank_files, generated_dir):
    epoch = generated_dir / "ranks2_epoch"  # times past 2^53: exact through the packing
    generate(generated_dir / "ranks2_epoch_all.sqlite", "--preset", "tiny", "--gpus", "2", "--kernels", "600",
             "--shape", "nccl-nvtx", "--epoch-clock", "--rank-files", str(epoch))
    for f in rank_files + [str(epoch / "rank1.sqlite")]:
        plain = server.request("set/summarize", {"path": f})
        packed = server.request("set/summarize", {"path": f, "packed": True})
        check_schema("set/summarize", "result", packed)
        for a, b in zip(plain["summaries"], packed["summaries"]):
            assert b["collectives"]["n"] == len(a["collectives"]["start"]) > 0
            assert unpack(b["collectives"]) == a["collectives"]
            assert {k: v for k, v in a.items() if k != "collectives"} == {k: v for k, v in b.items() if k != "collectives"}
    assert max(unpack(packed["summaries"][0]["collectives"])["start"]) > 2**53
    sums = lambda packed: [x for f in rank_files for x in server.request(  # noqa: E731
        "set/summarize", {"path": f, "packed": packed})["summaries"]]
    a, b = server.request("set/reduce", {"summaries": sums(False)}), server.request("set/reduce", {"summaries": sums(True)})
    assert {**a, "setId": None} == {**b, "setId": None} and b["stragglers"]["straggler"] == 2


@pytest.mark.parametrize("bad, why", [
    ({"packed": "!!!!"}, ".packed: expected base64"),
    ({"packed": "AAAA"}, "cannot hold"),
    ({"n": 1}, "cannot hold"),
    ({"comms": []}, "outside its dictionary"),
    ({"comms": ["x12"]}, ".comms[0]: expected p<hex>"),
    ({"types": [7]}, ".types: expected an array"),
    ({"n": -1}, ".n: expected a count"),
    ({"packed": None}, "expected path and collectives"),
])
def test_bad_packed_summaries_are_errors(server, rank_files, bad, why):
    good = server.request("set/summarize", {"path": rank_files[0], "packed": True})["summaries"][0]
    c = good["collectives"]
    n = c["n"]
    if "n" in bad and bad["n"] == 1:
        bad = {"n": n * 100}
    broken = {**good, "collectives": {k: v for k, v in {**c, **bad}.items() if v is not None}}
    if bad == {"packed": None}:
        broken["collectives"] = {"n": n}
    with pytest.raises(RpcError) as ei:
        server.request("set/reduce", {"summaries": [broken]})
    assert ei.value.code == -32602 and "params.summaries[0]" in ei.value.message and why in ei.value.message, ei.value.message
    # truncated bytes and a varint longer than 64 bits
    raw = base64.b64decode(c["packed"])
    for cut in (raw[:-1], raw + b"\x00", raw[:-1] + b"\xff" * 11):
        broken = {**good, "collectives": {**c, "packed": base64.b64encode(cut).decode()}}
        with pytest.raises(RpcError) as ei:
            server.request("set/reduce", {"summaries": [broken]})
        assert ei.value.code == -32602, cut[-12:]
    assert server.request("set/reduce", {"summaries": [good]})["ranks"]


def set_answers(server, res) -> str:
    """Everything a set answers (the reduce's reply, every page of collectives and stragglers,
    the NCCL summary) as one JSON text, without its id: byte-equal sets give equal texts."""
    import json
    sid = res["setId"]
    pages = lambda m, key: server.request(m, {"setId": sid, "limit": 100000})[key]  # noqa: E731
    out = {"reduce": {**res, "setId": None}, "collectives": pages("set/collectives", "rows"),
           "stragglers": pages("set/stragglers", "events"),
           "nccl": {**server.request("set/nccl", {"setId": sid}), "setId": None}}
    server.request("set/close", {"setId": sid})
    return json.dumps(out, sort_keys=False)


@pytest.mark.parametrize("groups", [[2, 2, 2, 2], [3, 3, 2], [1, 4, 3], [5, 3], [1] * 8, [8], [0, 3, 0, 5]])
def test_reduce_in_pieces_is_the_whole_reduce(server, derived_rank_files, groups):
    """The 8-rank derived set (straggler rank 5) sent to set/reduce in pieces of 2, 3, odd
    sizes and empty ones (partial, then partialId): the same set, to the byte, as one request."""
    sums = [x for f in derived_rank_files
            for x in server.request("set/summarize", {"path": f, "packed": True})["summaries"]]
    whole = server.request("set/reduce", {"summaries": sums})
    assert whole["stragglers"]["straggler"] == 5
    want = set_answers(server, whole)
    pid, at = None, 0
    for k, g in enumerate(groups):
        params = {"summaries": sums[at:at + g], **({"partialId": pid} if pid else {})}
        at += g
        if k < len(groups) - 1:
            part = server.request("set/reduce", {**params, "partial": True})
            check_schema("set/reduce", "result", part)
            assert part["ranks"] == at and (pid is None or part["partialId"] == pid)
            pid = part["partialId"]
        else:
            res = server.request("set/reduce", params)
    check_schema("set/reduce", "result", res)
    assert set_answers(server, res) == want
    if pid:  # the last request reduced it: the partial is gone
        with pytest.raises(RpcError) as ei:
            server.request("set/reduce", {"summaries": [], "partialId": pid})
        assert ei.value.code == -32008 and "no partial reduce" in ei.value.message


def test_partial_reduce_refusals_keep_the_partial(server, derived_rank_files):
    sums = server.request("set/summarize", {"path": derived_rank_files[0], "packed": True})["summaries"]
    part = server.request("set/reduce", {"summaries": sums, "partial": True})
    broken = {**sums[0], "collectives": {**sums[0]["collectives"], "packed": "!!!!"}}
    with pytest.raises(RpcError) as ei:  # a bad piece: refused, the partial as it was
        server.request("set/reduce", {"summaries": [sums[0], broken], "partialId": part["partialId"], "partial": True})
    assert ei.value.code == -32602 and "params.summaries[1]" in ei.value.message
    again = server.request("set/reduce", {"summaries": [], "partialId": part["partialId"], "partial": True})
    assert again == {"partialId": part["partialId"], "ranks": len(sums)}
    with pytest.raises(RpcError) as ei:
        server.request("set/reduce", {"summaries": [], "partialId": "p999999"})
    assert ei.value.code == -32008 and "params.partialId" in ei.value.message
    assert server.request("set/close", {"setId": part["partialId"]}) == {"closed": True}
    assert server.request("set/close", {"setId": part["partialId"]}) == {"closed": False}
