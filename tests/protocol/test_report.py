"""`nsys-ai report` / report/generate: the rules find the generator's
documented problems (tests/generator/README.md) on the example profile, and
stay quiet or correct on real exports."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import check_schema, generate, need_real
from nsys_rpc import server_binary

ENV = {**os.environ, "NSYS_AI_NO_PROGRESS": "1"}


@pytest.fixture(scope="session")
def example(generated_dir) -> tuple[Path, dict]:
    out = generated_dir / "example.sqlite"
    summary = generated_dir / "example.json"
    if not out.exists() or not summary.exists():
        out.unlink(missing_ok=True)
        r = subprocess.run([os.sys.executable, str(Path(__file__).resolve().parents[2] / "tools" / "gen_profile.py"),
                            "-o", str(out), "--preset", "example", "--summary"], capture_output=True, check=True)
        summary.write_bytes(r.stdout)
    return out, json.loads(summary.read_text())


def report(path: Path, fmt: str = "json"):
    r = subprocess.run([server_binary(), "report", str(path), "--format", fmt], capture_output=True, timeout=300, env=ENV)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout) if fmt == "json" else r.stdout.decode()


def by_id(rep):
    out = {}
    for f in rep["findings"]:
        out.setdefault(f["id"], []).append(f)
    return out


def test_example_finds_documented_problems(example):
    path, summary = example
    rep = report(path)
    check_schema("report/generate", "result", rep)
    f = by_id(rep)
    probs = summary["problems"]
    # P1: sync-induced bubble, host in save_checkpoint after cudaDeviceSynchronize
    (b,) = f["gpu_bubbles"]
    big = b["evidence"]["largestGap"]
    assert big["afterSync"].startswith("cudaDeviceSynchronize")
    assert big["cpuNvtx"] == "save_checkpoint"
    bub = {x["device"]: x for x in probs["bubbles"]}
    assert any(abs(big["start"] - x["start"]) < 100_000 for x in bub.values())
    assert sorted(b["evidence"]["devices"]) == sorted(bub)
    # P2: the outlier iteration
    (o,) = f["iteration_outliers"]
    assert [x["index"] for x in o["evidence"]["outlierIterations"]] == [probs["outlierIteration"]] * len(bub)
    # P3: exposed NCCL
    assert f["exposed_nccl"][0]["evidence"]["commOnlyNs"] > 0
    # P4: small-kernel storm
    assert f["small_kernel_storm"][0]["evidence"]["storms"] >= 1
    # P5: pageable H2D, 64 MiB per rank
    (p,) = f["pageable_h2d"]
    assert p["evidence"]["pageableH2dBytes"] == probs["pageableBytes"] * len(bub)
    # P6: hotspot kernel
    (h,) = f["hotspot_kernel"]
    assert h["evidence"]["kernel"] == probs["hotspotKernel"]
    # healthy parts are not flagged
    assert "cpu_bound_launch" not in f and "missing_nvtx" not in f
    # sorted by severity
    ranks = [{"critical": 0, "warning": 1, "info": 2}[x["severity"]] for x in rep["findings"]]
    assert ranks == sorted(ranks)
    for x in rep["findings"]:
        w = x["evidence"]["window"]
        assert w["start"] <= w["end"]


def test_example_text_is_readable(example):
    path, summary = example
    text = report(path, "text")
    assert text.startswith("nsys-ai report: ")
    assert "GPUs:" in text and "H100" in text and "Findings:" in text
    assert "save_checkpoint" in text and summary["problems"]["hotspotKernel"][:40] in text
    assert "Top kernels" in text and "Iterations" in text
    assert len(text.splitlines()) < 120
    md = report(path, "md")
    assert md.startswith("# nsys-ai report") and "| name" in md


def test_no_kernels_profile():
    rep = report(need_real("nsys2022_nvtx_only_negative_ts"))
    check_schema("report/generate", "result", rep)
    ids = [f["id"] for f in rep["findings"]]
    assert ids == ["profile_too_short"]


def test_no_nvtx_profile():
    rep = report(need_real("nsys2023_rtx3060_23k"))
    check_schema("report/generate", "result", rep)
    ids = {f["id"] for f in rep["findings"]}
    assert "missing_nvtx" in ids


@pytest.mark.parametrize("name", ["nsys2026_2gpu_nccl_before", "nsys2024_a100_lm_nvtx", "nsys2026_h100_2gpu_1s",
                                  "nsys2025_t4_memcpy", "nsys_failed_capture_no_meta", "nsys2021_a100_cuda_callchains"])
def test_real_profiles_report(name):
    rep = report(need_real(name))
    check_schema("report/generate", "result", rep)
    for f in rep["findings"]:
        assert f["title"] and f["recommendation"]


def test_nccl_before_exposed():
    """Independent check of the exposed-NCCL evidence on the NCCL profile."""
    import analysis_ref as ref
    path = need_real("nsys2026_2gpu_nccl_before")
    want = ref.overlap(ref.connect(path))
    rep = report(path)
    (f,) = [x for x in rep["findings"] if x["id"] == "exposed_nccl"]
    assert f["evidence"]["commOnlyNs"] == want[f["evidence"]["device"]]["commOnlyNs"]


def test_report_rpc(server, example):
    path, _ = example
    pid = server.request("profile/open", {"path": str(path)})["profileId"]
    rep = server.request("report/generate", {"profileId": pid, "format": "markdown"})
    check_schema("report/generate", "result", rep)
    assert rep["format"] == "markdown" and rep["rendered"].startswith("# nsys-ai report")
    rep = server.request("report/generate", {"profileId": pid})
    assert "rendered" not in rep
    from nsys_rpc import RpcError
    with pytest.raises(RpcError) as e:
        server.request("report/generate", {"profileId": pid, "format": "pdf"})
    assert e.value.code == -32602
