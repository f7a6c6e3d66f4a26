"""analysis/list and analysis/run over JSON-RPC: shapes, params, errors."""
from __future__ import annotations

import pytest

from conftest import check_schema
from nsys_rpc import RpcError


def test_list(server):
    res = server.request("analysis/list", {})
    check_schema("analysis/list", "result", res)
    names = {a["name"] for a in res["analyses"]}
    assert {"top_kernels", "gpu_idle_gaps", "overlap", "nccl_breakdown", "iterations", "memory_transfers",
            "kernel_launch_overhead", "sync_cost", "stream_classification", "nvtx_summary", "thread_utilization",
            "schema_inspect", "stage_overlap", "mfu"} <= names
    for a in res["analyses"]:
        assert {"start", "end", "device"} <= {p["name"] for p in a["params"]}


def test_run_all_on_small(server, small_profile):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    for a in server.request("analysis/list", {})["analyses"]:
        params = {"modelFlops": 1e12, "peakTflops": 989} if a["name"] == "mfu" else {}
        req = {"profileId": pid, "name": a["name"], "params": params}
        check_schema("analysis/run", "params", req)
        res = server.request("analysis/run", req)
        check_schema("analysis/run", "result", res)
        assert res["name"] == a["name"]
        for p in a["params"]:
            assert p["name"] in res["params"]


def test_window_and_params(server, small_profile):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    full = server.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 0}})
    w = full["window"]
    mid = (w["start"] + w["end"]) // 2
    half = server.request("analysis/run", {"profileId": pid, "name": "top_kernels",
                                           "params": {"limit": "0", "start": mid}})
    assert half["window"] == {"start": mid, "end": w["end"]}
    assert 0 < half["summary"]["kernelCount"] < full["summary"]["kernelCount"]
    dev = server.request("analysis/run", {"profileId": pid, "name": "overlap", "params": {"device": 1}})
    assert [d["device"] for d in dev["summary"]["devices"]] == [1]


@pytest.mark.parametrize("req,code", [
    ({"name": "nope"}, -32010),
    ({"name": "top_kernels", "params": {"limt": 1}}, -32602),
    ({"name": "top_kernels", "params": {"limit": "many"}}, -32602),
    ({"name": "top_kernels", "params": {"start": 10, "end": 5}}, -32602),
    ({"name": "top_kernels", "params": []}, -32602),
    ({"name": "mfu", "params": {}}, -32602),
])
def test_errors(server, small_profile, req, code):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    with pytest.raises(RpcError) as e:
        server.request("analysis/run", {"profileId": pid, **req})
    assert e.value.code == code


def test_unknown_profile(server):
    with pytest.raises(RpcError) as e:
        server.request("analysis/run", {"profileId": "p999", "name": "top_kernels"})
    assert e.value.code == -32005
