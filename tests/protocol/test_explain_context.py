"""kernel/explain in context (issue 17): recommendations fire only where
their preconditions hold (GPU generation, framework), the whole-profile
ranking decides what is "first", and the detectors (serial launches,
unified-memory migrations, wave quantisation) report evidence. Each case is
a generated profile modified with SQL to show one situation; the ranking is
checked against independent SQL; real exports where they show the case."""
from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need_real, real_profiles
from nsys_rpc import Server

ROOT = Path(__file__).resolve().parents[2]
FP32_GEMM = "ampere_sgemm_128x64_tn"
TOP_GEMM = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
            "execute_segment_k_off_kernel__5x_cublas")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ctx") / "base.sqlite"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_profile.py"), "-o", str(out), "--preset", "tiny"],
                   check=True, capture_output=True)
    return out


def variant(base: Path, tmp_path: Path, name: str, *sql: tuple) -> Path:
    p = tmp_path / f"{name}.sqlite"
    shutil.copy(base, p)
    db = sqlite3.connect(p)
    for stmt in sql:
        db.execute(*stmt) if isinstance(stmt, tuple) else db.execute(stmt)
    db.commit()
    db.close()
    return p


def gpu(name: str, major: int, minor: int, sms: int) -> tuple:
    return ("UPDATE TARGET_INFO_GPU SET name = ?, computeMajor = ?, computeMinor = ?, smCount = ?",
            (name, major, minor, sms))


def rename(old: str, new: str) -> tuple:
    return ("UPDATE StringIds SET value = ? WHERE value = ?", (new, old))


def explain(path: Path, name: str) -> dict:
    with Server() as s:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        return s.request("kernel/explain", {"profileId": pid, "name": name})


def said(res: dict) -> str:
    return "\n".join(res["suggestions"] + res["boundReasons"])


# ---------------------------------------------------------------------------
# GPU generation


@pytest.mark.parametrize("gpu_row,tf32", [
    (("NVIDIA GeForce RTX 2070 SUPER", 7, 5, 40), False),
    (("Tesla V100-SXM2-16GB", 7, 0, 80), False),
    (("NVIDIA A100-SXM4-80GB", 8, 0, 108), True),
    (("NVIDIA H100 80GB HBM3", 9, 0, 132), True),
])
def test_tf32_only_from_cc_8_0(base, tmp_path, gpu_row, tf32):
    p = variant(base, tmp_path, "tf32", gpu(*gpu_row), rename(TOP_GEMM, FP32_GEMM))
    res = explain(p, FP32_GEMM)
    assert res["context"]["gpu"]["computeCapability"] == f"{gpu_row[1]}.{gpu_row[2]}"
    assert ("tf32" in res["context"]["gpu"]["tensorCorePrecisions"]) == tf32
    recommends_tf32 = any("allow TF32" in s or "allow_tf32" in s for s in res["suggestions"])
    assert recommends_tf32 == tf32, said(res)
    if not tf32:
        assert any("compute capability 8.0" in w["reason"] for w in res["suggestionsWithheld"])
        # FP16 tensor cores exist from 7.0: that is what is recommended instead
        assert any("float16" in s and "GradScaler" in s for s in res["suggestions"]), said(res)


@pytest.mark.parametrize("major,minor,fp8", [(8, 0, False), (8, 6, False), (8, 9, True), (9, 0, True)])
def test_fp8_only_from_cc_8_9(base, tmp_path, major, minor, fp8):
    kernel = "reshape_and_cache_flash_kernel"  # vLLM: "FP8 KV cache halves its bytes" needs 8.9
    p = variant(base, tmp_path, "fp8", gpu("NVIDIA Test GPU", major, minor, 100), rename("cunn_SoftMaxForward", kernel))
    res = explain(p, kernel)
    assert res["origin"] == "vllm"
    assert any("FP8" in s for s in res["suggestions"]) == fp8, said(res)
    if not fp8:
        assert any("8.9" in w["reason"] and "FP8" in w["text"] for w in res["suggestionsWithheld"])


# ---------------------------------------------------------------------------
# framework


def test_generated_profile_is_pytorch(base):
    res = explain(base, TOP_GEMM)
    assert res["context"]["framework"] == "pytorch", res["context"]["frameworkEvidence"]


def test_no_pytorch_advice_for_tensorrt(base, tmp_path):
    p = variant(base, tmp_path, "trt", "UPDATE PROCESSES SET name = 'trtexec' WHERE name = 'python3'",
                rename("cunn_SoftMaxForward", "trt_turing_h1688cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1"))
    res = explain(p, "trt_turing_h1688cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1")
    assert res["context"]["framework"] == "tensorrt"
    assert res["origin"] == "tensorrt" and res["category"] == "convolution"
    assert "torch" not in said(res)
    assert any("trtexec" in s for s in res["suggestions"])
    # a cuBLAS GEMM in a TensorRT engine: no PyTorch knobs either
    gemm = explain(p, TOP_GEMM)
    assert "torch" not in said(gemm), said(gemm)
    assert any("pytorch" in w["reason"] for w in gemm["suggestionsWithheld"])


def test_nccl_tests_get_no_ddp_advice(base, tmp_path):
    p = variant(base, tmp_path, "nccltests", "UPDATE PROCESSES SET name = 'all_reduce_perf' WHERE name = 'python3'",
                rename("cunn_SoftMaxBackward", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"),
                rename("cunn_SoftMaxForward", "ncclDevKernel_AllGather_RING_LL"))
    with Server() as s:
        pid = s.request("profile/open", {"path": str(p)})["profileId"]
        names = [r[0] for r in sqlite3.connect(p).execute(
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
            "WHERE s.value LIKE 'nccl%'")]
        assert len(names) == 2
        for n in names:
            res = s.request("kernel/explain", {"profileId": pid, "name": n})
            assert res["context"]["framework"] == "nccl-tests"
            assert "DDP" not in said(res) and "FSDP" not in said(res) and "torch" not in said(res), said(res)


def test_cutlass_gets_no_library_switch(base, tmp_path):
    """The user's own CUTLASS SIMT GEMM (CUTLASS's basic_gemm example): no cuBLAS/PyTorch TF32 switch,
    its template fixes the math. (cutlass::Kernel2<cutlass_80_*> names are cuBLAS's: tested elsewhere.)"""
    full = ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<"
            "cutlass::gemm::GemmShape<128, 128, 8>, float, cutlass::layout::RowMajor, cutlass::arch::OpClassSimt> > >"
            "(cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<cutlass::gemm::GemmShape<128, 128, 8>"
            " > >::Params)")
    old = "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8"
    ids = "(SELECT {c} FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName = (SELECT id FROM StringIds WHERE value = ?))"
    p = variant(base, tmp_path, "cutlass", gpu("NVIDIA A100-SXM4-80GB", 8, 0, 108),
                (f"UPDATE StringIds SET value = ? WHERE id IN {ids.format(c='demangledName')}", (full, old)),
                rename(old, "Kernel"))
    res = explain(p, "Kernel")
    assert res["precision"]["tensorCores"] is False, res["precision"]
    assert res["origin"] == "cutlass"
    assert not any("allow_tf32" in s or "set_float32_matmul_precision" in s or "cublasSetMathMode" in s
                   for s in res["suggestions"]), said(res)


def all_kernels_renamed(base: Path, tmp_path: Path, name: str, fmt: str, *extra) -> Path:
    db = sqlite3.connect(base)
    ids = [r[0] for r in db.execute(
        "SELECT DISTINCT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION "
        "SELECT DISTINCT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    db.close()
    stmts = [("UPDATE StringIds SET value = ? WHERE id = ?", (fmt.format(i=i), sid)) for i, sid in enumerate(ids)]
    return variant(base, tmp_path, name, *stmts, *extra)


def test_openacc_serial_loop(base, tmp_path):
    p = all_kernels_renamed(base, tmp_path, "acc", "solve_{i}_gpu",
                            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 1, gridY = 1, gridZ = 1, "
                            "blockX = 1, blockY = 1, blockZ = 1")
    res = explain(p, "solve_0_gpu")
    assert res["context"]["framework"] == "nvhpc", res["context"]["frameworkEvidence"]
    assert res["origin"] == "nvhpc"
    assert res["bound"] == "serial"
    assert any("-Minfo" in s and "parallelise" in s for s in res["suggestions"]), said(res)
    assert "batch more work" not in said(res) and "another stream" not in said(res)
    assert "torch" not in said(res)


def test_serial_plain_cuda(base, tmp_path):
    p = all_kernels_renamed(base, tmp_path, "cuda", "my_kernel_{i}",
                            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 1, gridY = 1, gridZ = 1, "
                            "blockX = 1, blockY = 1, blockZ = 1")
    res = explain(p, "my_kernel_0")
    assert res["context"]["framework"] == "cuda"
    assert res["bound"] == "serial"
    assert any("one thread of one block" in s for s in res["suggestions"]), said(res)
    assert not any("occupancy" in s.lower() for s in res["suggestions"])


# ---------------------------------------------------------------------------
# detectors


def test_unified_memory_migrations_during_kernel(base, tmp_path):
    db = sqlite3.connect(base)
    rows = db.execute(
        "SELECT k.start, k.end, k.deviceId, k.contextId, k.streamId, k.globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'flash_fwd_kernel'").fetchall()
    db.close()
    inserts = []
    for (st, en, dev, ctx, stream, gpid) in rows:
        for j in range(4):  # four 64 KiB migrations inside each launch
            a = st + (en - st) * j // 4
            inserts.append(("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                            "globalPid, bytes, copyKind, migrationCause) VALUES (?, ?, ?, ?, ?, ?, 65536, 11, 1)",
                            (a, a + (en - st) // 8, dev, ctx, stream + 1000, gpid)))
    p = variant(base, tmp_path, "um", *inserts)
    res = explain(p, "flash_fwd_kernel")
    text = said(res)
    assert f"{len(inserts)} unified-memory migrations" in text, text
    assert f"while {len(rows)} of its {len(rows)} launches" in text, text
    assert res["bound"] == "memory"
    assert any("cudaMemPrefetchAsync" in s for s in res["suggestions"])
    assert res["context"]["unifiedMemoryMigrations"] == len(inserts)
    # a kernel the migrations do not overlap is not blamed
    other = explain(p, TOP_GEMM)
    assert "unified-memory" not in said(other)


@pytest.mark.parametrize("blocks,latency,phrase", [
    (128, False, "one wave"),   # 128 blocks on 132 SMs: every block runs at once
    (132, False, None),
    (40, True, "SMs idle"),     # fewer than half the SMs
    (1, True, "SMs idle"),
])
def test_waves(base, tmp_path, blocks, latency, phrase):
    p = variant(base, tmp_path, "waves", gpu("NVIDIA H100 80GB HBM3", 9, 0, 132),
                ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = ?, gridY = 1, gridZ = 1, blockX = 256, blockY = 1, "
                 "blockZ = 1 WHERE shortName IN (SELECT id FROM StringIds WHERE value = ?)", (blocks, TOP_GEMM)))
    res = explain(p, TOP_GEMM)
    assert (res["bound"] == "latency") == latency, res["boundReasons"]
    if phrase:
        assert any(phrase in r for r in res["boundReasons"]), res["boundReasons"]


def test_wave_quantisation_tail(base, tmp_path):
    # 300 blocks at 1 block/SM (255 regs x 256 threads) on 132 SMs: 2 full waves and a 27% tail
    p = variant(base, tmp_path, "tail", gpu("NVIDIA H100 80GB HBM3", 9, 0, 132),
                ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 300, gridY = 1, gridZ = 1, blockX = 256, blockY = 1, "
                 "blockZ = 1, registersPerThread = 255 WHERE shortName IN (SELECT id FROM StringIds WHERE value = ?)",
                 (TOP_GEMM,)))
    res = explain(p, TOP_GEMM)
    assert res["occupancy"]["blocksPerSm"] == 1, res["occupancy"]
    assert any("Wave quantisation" in r and "2 full waves" in r and "27% full" in r for r in res["boundReasons"]), \
        res["boundReasons"]


# ---------------------------------------------------------------------------
# whole-profile priority


def sql_ranking(path: Path) -> dict:
    """Independent SQL: summed time per copy kind, and idle time between each
    device's first and last GPU operation (kernels, copies, memsets)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    copy = dict(db.execute("SELECT copyKind, SUM(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1"))
    idle = 0
    for (dev,) in db.execute("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        iv = sorted(db.execute(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = ?1 UNION ALL "
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE deviceId = ?1 UNION ALL "
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE deviceId = ?1", (dev,)))
        reach = iv[0][1]
        for s, e in iv[1:]:
            if s > reach:
                idle += s - reach
            reach = max(reach, e)
    db.close()
    return {"htod": copy.get(1, 0), "idle": idle}


def test_ranking_matches_sql(base):
    res = explain(base, TOP_GEMM)
    ranking = {r["item"]: r for r in res["context"]["ranking"]}
    ref = sql_ranking(base)
    assert ranking["[CUDA memcpy HtoD]"]["ns"] == ref["htod"]
    assert ranking["GPU idle"]["ns"] == ref["idle"]
    assert res["context"]["idleNs"] == ref["idle"]
    ns = [r["ns"] for r in res["context"]["ranking"]]
    assert ns == sorted(ns, reverse=True)
    pr = res["priority"]
    assert pr["first"]["item"] == res["context"]["ranking"][0]["item"]
    assert pr["isFirst"] == (pr["rank"] == 1)
    assert any("first place to optimise" in s for s in res["suggestions"]) == pr["isFirst"]


def test_copies_first_not_the_kernel(base, tmp_path):
    """Per-call copies take most of the GPU time: the kernel is not 'first'."""
    p = variant(base, tmp_path, "copies", "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start + 5000000000 "
                "WHERE copyKind = 1")
    res = explain(p, TOP_GEMM)
    pr = res["priority"]
    assert pr["first"]["item"] == "[CUDA memcpy HtoD]"
    assert pr["isFirst"] is False and pr["rank"] > 1
    assert not any("first place to optimise" in s for s in res["suggestions"])
    assert any("ranks #%d" % pr["rank"] in s and "[CUDA memcpy HtoD]" in s for s in res["suggestions"])
    # and no kernel is "first": the copies are
    assert first_kernels(p) == []


def first_kernels(path: Path) -> list[str]:
    """The kernel names whose explanation says they are the first place to optimise."""
    with Server() as s:
        pid = s.request("profile/open", {"path": str(path)})["profileId"]
        names = [r[0] for r in sqlite3.connect(path).execute(
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName")]
        return [n for n in names if s.request("kernel/explain", {"profileId": pid, "name": n})["priority"]["isFirst"]]


def test_exactly_one_first_kernel_when_kernels_lead(base, tmp_path):
    # the cuBLAS GEMMs stretched to lead: exactly one name (the largest of them) is "first"
    p = variant(base, tmp_path, "lead", ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 100000000 WHERE shortName IN "
                                         "(SELECT id FROM StringIds WHERE value = ?)", (TOP_GEMM,)))
    res = explain(p, TOP_GEMM)
    assert res["context"]["ranking"][0]["item"] == "cublas gemm"
    assert first_kernels(p) == [TOP_GEMM]
    assert len(first_kernels(base)) <= 1


# ---------------------------------------------------------------------------
# real exports


def test_real_exports_respect_preconditions():
    need_real()
    with Server() as s:
        for path in real_profiles():
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                names = [r[0] for r in db.execute(
                    "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                    "GROUP BY 1 ORDER BY SUM(k.end - k.start) DESC LIMIT 3")]
            except sqlite3.OperationalError:
                continue
            finally:
                db.close()
            if not names:
                continue
            pid = s.request("profile/open", {"path": str(path)})["profileId"]
            firsts = 0
            for n in names:
                res = s.request("kernel/explain", {"profileId": pid, "name": n})
                cx = res["context"]
                cc = cx["gpu"]["computeCapability"]
                text = said(res)
                if cc is not None and float(cc) < 8.0:
                    assert "allow TF32" not in text and "allow_tf32" not in text, (path.name, n, text)
                    assert "bfloat16" not in text, (path.name, n, text)
                if cx["framework"] != "pytorch":
                    assert "torch." not in text, (path.name, n, text)
                firsts += res["priority"]["isFirst"]
            assert firsts <= 1, path.name
            s.request("profile/close", {"profileId": pid})


def test_real_julia_export():
    need_real()
    path = next((p for p in real_profiles() if p.name == "nsys2023_v100_julia.sqlite"), None)
    if path is None:
        pytest.skip("nsys2023_v100_julia.sqlite not in the real exports")
    name = sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute(
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName LIMIT 1").fetchone()[0]
    res = explain(path, name)
    assert res["context"]["framework"] == "julia"
    assert res["origin"] == "julia"
    assert "torch" not in said(res)


# ---------------------------------------------------------------------------
# the project's own H200 captures (tests/fixtures/gpu on main; skipped where absent)

FIXTURES = ROOT / "tests" / "fixtures" / "gpu"


def captured(name: str, tmp_path: Path) -> Path:
    import gzip
    src = FIXTURES / f"{name}.sqlite.gz"
    if not src.exists():
        pytest.skip(f"captured H200 export absent: {src}")
    out = tmp_path / f"{name}.sqlite"
    out.write_bytes(gzip.decompress(src.read_bytes()))
    return out


def test_h200_cudawork_detectors(tmp_path):
    p = captured("h200_cudawork", tmp_path)
    with Server() as s:
        pid = s.request("profile/open", {"path": str(p)})["profileId"]
        ex = {n: s.request("kernel/explain", {"profileId": pid, "name": n})
              for n in ("serial_loop", "um_touch", "gen_mtgp")}
    assert ex["serial_loop"]["bound"] == "serial"
    assert ex["um_touch"]["bound"] == "memory"
    assert any("unified-memory migrations" in r for r in ex["um_touch"]["boundReasons"])
    assert ex["gen_mtgp"]["origin"] == "curand" and ex["gen_mtgp"]["category"] == "random"
    for res in ex.values():
        assert res["context"]["framework"] == "cuda"
        assert res["context"]["gpu"]["computeCapability"] == "9.0"
        assert "torch" not in said(res)


def test_h200_gpt_full_wave_not_latency(tmp_path):
    p = captured("h200_gpt_train", tmp_path)
    res = explain(p, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")
    assert res["context"]["framework"] == "pytorch"
    assert res["launch"]["grid"][0] * res["launch"]["grid"][1] == 128
    assert res["bound"] != "latency"
    assert any("one wave" in r for r in res["boundReasons"]), res["boundReasons"]
