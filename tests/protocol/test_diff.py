"""profile/diff and `nsys-ai diff A B` on the before/after NCCL pair."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import analysis_ref as ref
from conftest import check_schema, need_real
from nsys_rpc import server_binary

ENV = {**os.environ, "NSYS_AI_NO_PROGRESS": "1"}


def cli_diff(a, b, fmt="json"):
    r = subprocess.run([server_binary(), "diff", str(a), str(b), "--format", fmt], capture_output=True, timeout=300,
                       env=ENV)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout) if fmt == "json" else r.stdout.decode()


def test_diff_before_after():
    a, b = need_real("nsys2026_2gpu_nccl_before"), need_real("nsys2026_2gpu_nccl_after")
    d = cli_diff(a, b)
    check_schema("profile/diff", "result", d)
    ka, kb = ref.top_kernels(ref.connect(a)), ref.top_kernels(ref.connect(b))
    rows = {r["name"]: r for r in d["rows"]}
    assert set(rows) == set(ka) | set(kb)
    for n, r in rows.items():
        ta, tb = ka.get(n, {}).get("totalNs", 0), kb.get(n, {}).get("totalNs", 0)
        assert (r["baseTotalNs"], r["compareTotalNs"], r["deltaNs"]) == (ta, tb, tb - ta)
        if n not in ka:
            assert r["status"] == "added"
        elif n not in kb:
            assert r["status"] == "removed"
        elif tb < ta * 0.95:
            assert r["status"] == "faster"
        elif tb > ta * 1.05:
            assert r["status"] == "slower"
        else:
            assert r["status"] == "same"
        if n in ka and n in kb:
            aa, ab = ka[n]["totalNs"] / ka[n]["count"], kb[n]["totalNs"] / kb[n]["count"]
            assert abs(r["avgDeltaPct"] - 100 * (ab - aa) / aa) < 0.05
            assert r["perCall"] == ("faster" if ab < aa * 0.95 else "slower" if ab > aa * 1.05 else "same")
    # the documented before/after story: flash_fwd_kernel only ran fewer times, SendRecv got slower per call
    assert rows["flash_fwd_kernel"]["perCall"] == "same" and rows["ncclDevKernel_SendRecv"]["perCall"] == "slower"
    deltas = [abs(r["deltaNs"]) for r in d["rows"]]
    assert deltas == sorted(deltas, reverse=True)
    s = d["summary"]
    assert s["kernelNs"]["base"] == sum(v["totalNs"] for v in ka.values())
    assert s["kernelNs"]["compare"] == sum(v["totalNs"] for v in kb.values())
    oa, ob = ref.overlap(ref.connect(a)), ref.overlap(ref.connect(b))
    assert s["idleNs"]["base"] == sum(v["idleNs"] for v in oa.values())
    assert s["idleNs"]["compare"] == sum(v["idleNs"] for v in ob.values())
    assert s["commOnlyNs"]["delta"] == sum(v["commOnlyNs"] for v in ob.values()) - sum(v["commOnlyNs"] for v in oa.values())
    assert "flash_fwd_kernel" in s["text"] or "Biggest change" in s["text"]
    text = cli_diff(a, b, "text")
    assert text.startswith("nsys-ai diff") and "Kernel changes" in text


def test_diff_rpc(server):
    a, b = need_real("nsys2026_2gpu_nccl_before"), need_real("nsys2026_2gpu_nccl_after")
    pa = server.request("profile/open", {"path": str(a)})["profileId"]
    pb = server.request("profile/open", {"path": str(b)})["profileId"]
    d = server.request("profile/diff", {"base": pa, "compare": pb})
    check_schema("profile/diff", "result", d)
    same = server.request("profile/diff", {"base": pa, "compare": pa})
    assert all(r["status"] == "same" and r["deltaNs"] == 0 for r in same["rows"])
