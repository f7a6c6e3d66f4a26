"""profile/openSet: ranks aligned on utcEpochNs, per-rank tables and
straggler detection, checked against an independent computation."""
from __future__ import annotations

import pytest

import analysis_ref as ref
from conftest import check_schema, need_real
from nsys_rpc import RpcError


def straggler_ref(files):
    """files: [(path, offset)] -> (matched, last counts per rank in (file, device) order)."""
    ranks = []
    for path, off in files:
        by = {}
        for s, e, d, _st, n in ref.kernels(ref.connect(path)):
            if ref.is_nccl(n):
                by.setdefault(d, []).append(s + off)
        devs = sorted({d for _, _, d, _ in ref.gpu_ops(ref.connect(path))})
        ranks += [sorted(by.get(d, [])) for d in devs]
    common = min(len(r) for r in ranks) if len(ranks) > 1 else 0
    last = [0] * len(ranks)
    for k in range(common):
        starts = [r[k] for r in ranks]
        last[max(range(len(ranks)), key=lambda i: (starts[i], -i))] += 1
    return common, last


def utc(path):
    return ref.connect(path).execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]


def test_openset_single_file_two_gpus(server):
    p = need_real("nsys2026_2gpu_nccl_before")
    res = server.request("profile/openSet", {"paths": [str(p)]})
    check_schema("profile/openSet", "result", res)
    assert [r["device"] for r in res["ranks"]] == [0, 1]
    common, last = straggler_ref([(p, 0)])
    assert res["stragglers"]["matchedCollectives"] == common
    assert [r["lastCount"] for r in res["stragglers"]["ranks"]] == last
    want = ref.overlap(ref.connect(p))
    for row in res["overlap"]:
        assert row["commOnlyNs"] == want[row["device"]]["commOnlyNs"]


def test_openset_two_files_aligned(server):
    a, b = need_real("nsys2026_2gpu_nccl_before"), need_real("nsys2026_2gpu_nccl_after")
    res = server.request("profile/openSet", {"paths": [str(a), str(b)]})
    check_schema("profile/openSet", "result", res)
    ua, ub = utc(a), utc(b)
    m = min(ua, ub)
    assert [f["offsetNs"] for f in res["files"]] == [ua - m, ub - m]
    assert [f["utcEpochNs"] for f in res["files"]] == [ua, ub]
    assert len(res["ranks"]) == 4
    common, last = straggler_ref([(a, ua - m), (b, ub - m)])
    assert res["stragglers"]["matchedCollectives"] == common
    assert [r["lastCount"] for r in res["stragglers"]["ranks"]] == last


def test_openset_errors(server):
    with pytest.raises(RpcError) as e:
        server.request("profile/openSet", {"paths": []})
    assert e.value.code == -32602
    with pytest.raises(RpcError) as e:
        server.request("profile/openSet", {"paths": ["/no/such/file.sqlite"]})
    assert e.value.code == -32001


def test_ranks_cli():
    import json
    import os
    import subprocess

    from nsys_rpc import server_binary
    p = need_real("nsys2026_2gpu_nccl_before")
    r = subprocess.run([server_binary(), "ranks", str(p), "--format", "json"], capture_output=True, timeout=120,
                       env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    assert r.returncode == 0, r.stderr.decode()
    res = json.loads(r.stdout)
    check_schema("profile/openSet", "result", res)
    common, last = straggler_ref([(p, 0)])
    assert [x["lastCount"] for x in res["stragglers"]["ranks"]] == last
    t = subprocess.run([server_binary(), "ranks", str(p)], capture_output=True, timeout=120)
    assert t.returncode == 0 and b"Stragglers" in t.stdout
