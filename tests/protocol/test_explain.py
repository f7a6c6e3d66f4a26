"""kernel/explain: identity from the knowledge base, statistics checked
against independent SQL on the real profiles, launch configuration and
theoretical occupancy, errors, and the CLI."""
from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import check_schema, need_real, real_profiles
from nsys_rpc import RpcError, Server, server_binary


def open_profile(server, path: Path) -> str:
    return server.request("profile/open", {"path": str(path)})["profileId"]


def kernel_table(db: sqlite3.Connection) -> str:
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    if "CUPTI_ACTIVITY_KIND_KERNEL" in names:
        return "CUPTI_ACTIVITY_KIND_KERNEL"
    cand = sorted(n for n in names if n.startswith("CUPTI_ACTIVITY_KIND_KERNEL"))
    if not cand:
        pytest.skip("no kernel table")
    return cand[-1]


def nearest_rank(sorted_vals: list[int], q: float) -> int:
    """The one percentile definition (docs/analyses.md): linear interpolation
    between the closest ranks (numpy's default), rounded to the ns."""
    n = len(sorted_vals)
    pos = q * (n - 1)
    i = math.floor(pos)
    if i + 1 >= n:
        return sorted_vals[-1]
    a, b = sorted_vals[i], sorted_vals[i + 1]
    v = a + (pos - i) * (b - a)
    return int(math.floor(v + 0.5))


def sql_stats(path: Path, where: str, args: tuple) -> dict:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    t = kernel_table(db)
    durs = sorted(r[0] for r in db.execute(
        f"SELECT k.end - k.start FROM {t} k JOIN StringIds s ON s.id = k.shortName "
        f"LEFT JOIN StringIds d ON d.id = k.demangledName WHERE {where}", args))
    all_kernel = db.execute(f"SELECT SUM(end - start) FROM {t}").fetchone()[0]
    db.close()
    return {"count": len(durs), "total": sum(durs), "min": durs[0], "max": durs[-1],
            "median": nearest_rank(durs, 0.5), "p95": nearest_rank(durs, 0.95), "all": all_kernel}


# ---------------------------------------------------------------------------
# knowledge base only


@pytest.mark.parametrize("name,origin,category", [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "cublas", "gemm"),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "nccl", "communication"),
    ("triton_poi_fused_add_mul_0", "triton", "elementwise"),
    ("flash_fwd_kernel", "flash-attention", "attention"),
    ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
     "std::array<char *, (unsigned long)1>>(int, T2, T3)", "pytorch", "memset"),
])
def test_explain_from_kb_only(server, name, origin, category):
    r = server.request("kernel/explain", {"name": name})
    check_schema("kernel/explain", "result", r)
    assert r["origin"] == origin and r["category"] == category
    assert r["known"] is True and r["inProfile"] is False and r["stats"] is None
    assert r["suggestions"] and r["markdown"].startswith("**")


def test_display_name_and_precision(server):
    r = server.request("kernel/explain", {
        "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
                "execute_segment_k_off_kernel__5x_cublas"})
    assert r["precision"] == {"dtype": "bf16", "tensorCores": True, "mma": "wgmma", "tile": "128x256x64", "smArch": 90}
    r = server.request("kernel/explain", {
        "name": "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
                "std::array<char *, (unsigned long)1>>(int, T2, T3)"})
    assert r["displayName"] == "vectorized_elementwise_kernel<FillFunctor<float>>"
    r = server.request("kernel/explain", {"name": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"})
    assert r["nccl"] == {"collective": "ReduceScatter", "algorithm": "RING", "protocol": "LL", "op": "Sum", "dtype": "bf16"}
    assert r["bound"] == "communication"


def test_unknown_kernel_is_honest(server):
    r = server.request("kernel/explain", {"name": "my_custom_stencil_kernel"})
    check_schema("kernel/explain", "result", r)
    assert r["origin"] == "unknown" and r["known"] is False and r["pattern"] is None
    assert "unknown" in r["description"].lower()
    assert "Origin unknown" in r["markdown"]


# ---------------------------------------------------------------------------
# errors


def test_errors(server):
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {})
    assert e.value.code == -32602
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"name": ""})
    assert e.value.code == -32602
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"name": 3})
    assert e.value.code == -32602 and "name" in e.value.message
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"kernelId": 0})
    assert e.value.code == -32602 and "profileId" in e.value.message
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"profileId": "p999", "name": "x"})
    assert e.value.code == -32005
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"name": "x", "kernelId": 1, "profileId": "p1"})
    assert e.value.code == -32602


def test_llm_not_configured(cache_dir):
    env = {k: "" for k in ("NSYS_AI_LLM_BASE_URL", "NSYS_AI_LLM_MODEL", "NSYS_AI_LLM_PROVIDER")}
    env.update({"NSYS_AI_CACHE_DIR": str(cache_dir), "NSYS_AI_CONFIG": "/nonexistent/config.json"})
    with Server(env=env) as s:
        with pytest.raises(RpcError) as e:
            s.request("kernel/explain", {"name": "flash_fwd_kernel", "llm": True})
        assert e.value.code == -32014
        cfg = s.request("agent/configure", {})
        check_schema("agent/configure", "result", cfg)
        assert cfg["configured"] is False and cfg["source"] == "none"


# ---------------------------------------------------------------------------
# real profiles: statistics against independent SQL


def test_stats_match_sql_a100(server):
    path = need_real("nsys2024_a100_lm_nvtx")
    pid = open_profile(server, path)
    r = server.request("kernel/explain", {"profileId": pid, "name": "ampere_sgemm_128x64_tn"})
    check_schema("kernel/explain", "result", r)
    ref = sql_stats(path, "s.value = ?", ("ampere_sgemm_128x64_tn",))
    st = r["stats"]
    assert st["count"] == ref["count"]
    assert st["totalNs"] == ref["total"]
    assert st["minNs"] == ref["min"] and st["maxNs"] == ref["max"]
    assert st["medianNs"] == ref["median"] and st["p95Ns"] == ref["p95"]
    assert st["avgNs"] == pytest.approx(ref["total"] / ref["count"])
    assert st["pctKernelTime"] == pytest.approx(100.0 * ref["total"] / ref["all"], rel=1e-9)
    assert r["origin"] == "cublas" and r["precision"]["tensorCores"] is False
    assert r["inProfile"] is True
    # the FP32 GEMM suggestion is there
    assert any("TF32" in s for s in r["suggestions"])
    # launch configuration of the representative (longest) instance, from SQL
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE s.value = ? "
        "AND k.end - k.start = ?", ("ampere_sgemm_128x64_tn", ref["max"])).fetchall()
    db.close()
    l = r["launch"]
    got = (*l["grid"], *l["block"], l["registersPerThread"], l["staticSharedMemory"], l["dynamicSharedMemory"])
    assert got in rows
    # theoretical occupancy on an A100 (cc 8.0), worked out here independently
    regs, threads, smem = l["registersPerThread"], l["block"][0] * l["block"][1] * l["block"][2], \
        l["staticSharedMemory"] + l["dynamicSharedMemory"]
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = (65536 // per_warp) // 4 * 4 // warps
    by_smem = (164 * 1024) // (-(-(smem + 1024) // 128) * 128) if smem else 32
    blocks = min(64 // warps, by_regs, by_smem, 32)
    occ = r["occupancy"]
    assert occ["gpu"]["computeCapability"] == "8.0" and occ["gpu"]["smCount"] == 108
    assert occ["blocksPerSm"] == blocks
    assert occ["theoretical"] == pytest.approx(blocks * warps / 64)


def test_explain_by_kernel_id_and_demangled(server):
    path = need_real("nsys2026_h100_2gpu_1s")
    pid = open_profile(server, path)
    by_name = server.request("kernel/explain", {"profileId": pid, "name": "vectorized_elementwise_kernel"})
    st = by_name["stats"]
    ref = sql_stats(path, "s.value = ?", ("vectorized_elementwise_kernel",))
    assert st["count"] == ref["count"] and st["totalNs"] == ref["total"]
    assert st["variants"] > 1  # many template instantiations share this short name
    kid = st["longestKernelId"]
    by_id = server.request("kernel/explain", {"profileId": pid, "kernelId": kid})
    check_schema("kernel/explain", "result", by_id)
    assert by_id["kernelId"] == kid and by_id["name"] == "vectorized_elementwise_kernel"
    # by kernelId the statistics are those of the exact demangled name
    full = by_id["demangledName"]
    ref_full = sql_stats(path, "d.value = ?", (full,))
    assert by_id["stats"]["count"] == ref_full["count"]
    assert by_id["stats"]["totalNs"] == ref_full["total"]
    assert by_id["stats"]["variants"] == 1
    # asking by the demangled name gives the same group
    by_full = server.request("kernel/explain", {"profileId": pid, "name": full})
    assert by_full["stats"]["count"] == ref_full["count"]
    # the H100 export has per-op NVTX (aten::...) ranges on the launching thread
    assert by_id["nvtxPath"]
    with pytest.raises(RpcError) as e:
        server.request("kernel/explain", {"profileId": pid, "kernelId": 10 ** 9})
    assert e.value.code == -32008


def test_unknown_user_kernel_in_profile(server):
    path = need_real("nsys2023_rtx3060_23k")
    pid = open_profile(server, path)
    r = server.request("kernel/explain", {"profileId": pid, "name": "calcAllFullSum"})
    check_schema("kernel/explain", "result", r)
    # not in the knowledge base; the program is a CuPy one, so CuPy compiled it
    assert r["known"] is False and r["context"]["framework"] == "cupy" and r["origin"] == "cupy"
    ref = sql_stats(path, "s.value = ?", ("calcAllFullSum",))
    assert r["stats"]["count"] == ref["count"] and r["stats"]["totalNs"] == ref["total"]
    assert r["occupancy"]["gpu"]["spec"] == "RTX 3060"
    r = server.request("kernel/explain", {"profileId": pid, "name": "no_such_kernel_anywhere"})
    assert r["inProfile"] is False and r["stats"] is None


def test_every_real_kernel_name_explains():
    """Every distinct kernel name of every real profile: valid result, and
    the share with a known origin is reported (and high)."""
    profiles = real_profiles()
    if not profiles:
        pytest.skip("real profiles not available")
    known = total = 0
    with Server() as s:
        for path in profiles:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                names = [r[0] for r in db.execute(
                    "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")]
            except sqlite3.Error:
                names = []
            db.close()
            if not names:
                continue
            pid = open_profile(s, path)
            for i, n in enumerate(names):
                r = s.request("kernel/explain", {"profileId": pid, "name": n})
                if i < 3:
                    check_schema("kernel/explain", "result", r)
                assert r["inProfile"] is True and r["stats"]["count"] >= 1
                total += 1
                known += r["known"]
    print(f"real kernel names explained: {total}, known origin: {known} ({100.0 * known / total:.1f}%)")
    assert known / total > 0.6


def test_cli_explain(tmp_path):
    path = need_real("nsys2024_a100_lm_nvtx")
    env = dict(os.environ, NSYS_AI_CACHE_DIR=str(tmp_path), NSYS_AI_NO_PROGRESS="1")
    out = subprocess.run([server_binary(), "explain", str(path), "ampere_sgemm_128x64_tn", "--format", "json"],
                         capture_output=True, text=True, env=env, check=True)
    cli = json.loads(out.stdout)
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path)}) as s:
        pid = open_profile(s, path)
        rpc = s.request("kernel/explain", {"profileId": pid, "name": "ampere_sgemm_128x64_tn"})
    assert cli == rpc
    md = subprocess.run([server_binary(), "explain", str(path), "ampere_sgemm_128x64_tn", "--format", "md"],
                        capture_output=True, text=True, env=env, check=True).stdout
    assert md == rpc["markdown"]
    text = subprocess.run([server_binary(), "explain", str(path), "ampere_sgemm_128x64_tn"],
                          capture_output=True, text=True, env=env, check=True).stdout
    assert "cublas" in text and "what to do" in text
    kb = subprocess.run([server_binary(), "explain", "-", "flash_fwd_kernel"], capture_output=True, text=True, env=env)
    assert kb.returncode == 0 and "flash-attention" in kb.stdout
    bad = subprocess.run([server_binary(), "explain", str(tmp_path / "missing.sqlite"), "x"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.startswith("nsys-ai:")
    usage = subprocess.run([server_binary(), "explain"], capture_output=True, text=True, env=env)
    assert usage.returncode == 1


def test_generated_profile(server, small_profile):
    """Always runs (no real data needed): every kernel name of the generated
    profile explains, and its count matches SQL."""
    pid = open_profile(server, small_profile)
    db = sqlite3.connect(f"file:{small_profile}?mode=ro", uri=True)
    names = db.execute(
        "SELECT s.value, COUNT(*), SUM(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.shortName GROUP BY s.value").fetchall()
    db.close()
    assert names
    for name, count, total in names:
        r = server.request("kernel/explain", {"profileId": pid, "name": name})
        check_schema("kernel/explain", "result", r)
        assert r["stats"]["count"] == count and r["stats"]["totalNs"] == total


def test_kb_is_compiled_in(tmp_path, cache_dir):
    """The knowledge base is C tables generated at build time: no JSON file is
    read at run time (the NSYS_AI_DATA_DIR override of earlier versions is gone),
    so a kernels/ folder in the environment changes nothing."""
    kdir = tmp_path / "kernels"
    kdir.mkdir()
    (kdir / "mine.json").write_text(json.dumps({
        "family": "mine", "defaults": {"origin": "user", "category": "custom", "bound": "memory"},
        "patterns": [{"id": "mine.k", "prefix": "flash_fwd", "priority": 99, "description": "Shadow.",
                      "suggestions": ["x"], "examples": ["flash_fwd_kernel"]}]}))
    (kdir / "broken.json").write_text("{ not json")
    with Server(env={"NSYS_AI_DATA_DIR": str(tmp_path), "NSYS_AI_CACHE_DIR": str(cache_dir)}) as s:
        r = s.request("kernel/explain", {"name": "flash_fwd_kernel"})
        assert r["origin"] == "flash-attention" and r["pattern"]["id"] != "mine.k"
        s.close()
        assert "broken.json" not in s.stderr and "knowledge base" not in s.stderr
