"""profile/diff and `nsys-ai diff`: planted changes found and ranked first, same
workload with other seeds "no change", the real before/after pair against
independent SQL, the gate's exit codes and its config refused when bad."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

import analysis_ref as ref
from conftest import check_schema, generate, need_real
from nsys_rpc import server_binary

ENV = {**os.environ, "NSYS_AI_NO_PROGRESS": "1"}
# 12 iterations (10 steady after the warm-up and the checkpoint bubble), ~3k kernels a side
SHAPE = ("--preset", "small", "--kernels", "6000", "--iterations", "12")
PAIRS = {
    "base": (), "seed2": ("--seed", "2"), "seed3": ("--seed", "3"),
    "gemm": ("--plant-slow-kernels", "gemm"),
    "nccl": ("--plant-nccl-factor", "2"),
    "launch": ("--plant-launch-config", "gelu"),
    "loader0": ("--plant-loader-stall", "0"), "loader": ("--plant-loader-stall", "3000000"),
    "onegpu": ("--gpus", "1"),
}


@pytest.fixture(scope="session")
def gen(generated_dir):
    return lambda name: generate(generated_dir / f"diff_{name}.sqlite", *SHAPE, *PAIRS[name])


def cli(*args, rc=0):
    r = subprocess.run([server_binary(), "diff", *map(str, args)], capture_output=True, timeout=120, env=ENV)
    assert r.returncode == rc, (r.returncode, r.stderr.decode())
    return r


def diff(a, b, *args):
    d = json.loads(cli(a, b, "--format", "json", "--limit", "1000", *args).stdout)
    check_schema("profile/diff", "result", d, strict_integers=True)
    return d


def comp(d, name):
    return next(c for c in d["components"] if c["name"] == name)


def significant(d):
    return [x for x in d["deltas"] if x["change"] != "no_change"]


@pytest.mark.parametrize("other", ["seed2", "seed3"])
def test_same_workload_other_seed_is_no_change(gen, other):
    d = diff(gen("base"), gen(other))
    assert d["comparability"]["comparable"] and d["comparability"]["score"] > 0.9
    assert d["verdict"]["overall"] == "no_change"
    assert all(c["verdict"] == "no_change" for c in d["components"]), [(c["name"], c["verdict"]) for c in d["components"]]
    # no kernel, family or launch-configuration change (seed3 only adds the empty data_loader range)
    assert [x for x in significant(d) if x["kind"] in ("kernel", "family", "launchConfig")] == []
    assert d["base"]["steady"] == d["compare"]["steady"] == 10


def test_slower_kernel_family_ranked_first(gen):
    d = diff(gen("base"), gen("gemm"))
    assert d["verdict"]["overall"] == "slower" and d["verdict"]["confidence"] > 0.99
    assert comp(d, "step")["verdict"] == "slower" and comp(d, "compute")["verdict"] == "slower"
    top = d["deltas"][0]
    assert (top["kind"], top["key"], top["change"]) == ("family", "gemm", "slower")
    assert abs(top["deltaPct"] - 30) < 1  # --plant-factor 1.3
    assert top["evidence"]["base"]["end"] > top["evidence"]["base"]["start"]
    assert top["evidence"]["compare"]["end"] > top["evidence"]["compare"]["start"]
    # every kernel of the family slower by the factor
    gemm = [x for x in d["deltas"] if x["kind"] == "kernel" and x["family"] == "gemm"]
    assert gemm and all(abs(x["deltaPct"] - 30) < 1.5 for x in gemm)


def test_more_exposed_nccl_ranked_first(gen):
    d = diff(gen("base"), gen("nccl"))
    assert comp(d, "ncclExposed")["verdict"] == "slower" and comp(d, "compute")["verdict"] == "no_change"
    assert (d["deltas"][0]["kind"], d["deltas"][0]["key"]) == ("family", "nccl")
    assert d["verdict"]["overall"] == "slower"


def test_loader_stall_ranked_first(gen):
    d = diff(gen("loader0"), gen("loader"))
    assert comp(d, "idle")["verdict"] == "slower" and comp(d, "compute")["verdict"] == "no_change"
    st = comp(d, "step")
    assert st["verdict"] == "slower" and abs(st["deltaNs"] - 3_000_000) < 100_000
    top = d["deltas"][0]
    assert top["kind"] == "nvtx" and top["key"].endswith("data_loader") and top["change"] == "slower"
    # 3 ms of host self time per rank and iteration (2 ranks)
    assert abs(top["deltaNs"] - 6_000_000) < 50_000


def test_launch_config_change_ranked_first(gen):
    d = diff(gen("base"), gen("launch"))
    top = d["deltas"][0]
    assert top["kind"] == "launchConfig" and top["change"] == "changed" and "gelu" in top["key"]
    lb, lc = top["launch"]["base"], top["launch"]["compare"]
    assert lc["grid"][0] == 2 * lb["grid"][0] and lc["block"][0] * 2 == lb["block"][0]
    assert lc["registersPerThread"] == lb["registersPerThread"] + 8
    assert lb["count"] > 0 and lc["count"] == lb["count"]
    assert d["verdict"]["overall"] == "no_change"  # a 0.1 ms kernel: below the step's noise floor


def test_incomparable_runs_say_so_first(gen):
    d = diff(gen("base"), gen("onegpu"))
    cm = d["comparability"]
    assert not cm["comparable"] and any(r["code"] == "gpu_count" and r["severity"] == "error" for r in cm["reasons"])
    assert d["verdict"]["overall"] == "incomparable" and d["verdict"]["text"].startswith("INCOMPARABLE")
    text = cli(gen("base"), gen("onegpu")).stdout.decode()
    assert text.index("NOT comparable") < text.index("Steady-state")


def test_gate_exit_codes(gen, tmp_path):
    base = gen("base")
    cli(base, gen("seed2"), "--gate")                                      # pass
    r = cli(base, gen("gemm"), "--gate", "--threshold", "step=5%", rc=3)  # regression
    assert b"Gate: regression" in r.stdout
    cli(base, gen("gemm"), "--threshold", "step=50%")                      # within a generous threshold
    d = json.loads(cli(base, gen("gemm"), "--threshold", "kernel:gemm=10%", "--format", "json", rc=3).stdout)
    assert d["gate"]["status"] == "regression" and d["gate"]["failures"][0]["target"] == "kernel:gemm"
    cli(base, gen("nccl"), "--threshold", "compute=1%")                    # compute unchanged: pass
    cli(base, gen("nccl"), "--threshold", "ncclExposed=20%", rc=3)
    cli(base, gen("onegpu"), "--gate", rc=4)                               # incomparable
    cfg = tmp_path / "gate.conf"
    cfg.write_text("# CI\n[gate]\nstep = 5%\nkernel:gemm = 10%\n")
    cli(base, gen("gemm"), "--gate-config", cfg, rc=3)
    cli(base, gen("seed2"), "--gate-config", cfg)
    # usage errors: 1; an unreadable profile: 2
    for bad in ("step = 5%\nnot a line\n", "step = -3\n", "bogus = 5\n", "step = 5\x00\n"):
        cfg.write_text(bad)
        r = cli(base, gen("seed2"), "--gate-config", cfg, rc=1)
        assert b"gate config line" in r.stderr or b"threshold" in r.stderr
    cli(base, gen("seed2"), "--gate-config", tmp_path / "missing.conf", rc=1)
    cli(base, gen("seed2"), "--threshold", "step", rc=1)
    cli(base, gen("seed2"), "--threshold", "kernel:=5", rc=1)
    cli(base, gen("seed2"), "--bogus", rc=1)
    cli(base, tmp_path / "missing.sqlite", rc=2)


def test_rpc_params_paging_and_errors(server, gen):
    pa = server.request("profile/open", {"path": str(gen("base"))})["profileId"]
    pb = server.request("profile/open", {"path": str(gen("gemm"))})["profileId"]
    full = server.request("profile/diff", {"base": pa, "compare": pb, "limit": 1000})
    check_schema("profile/diff", "result", full, strict_integers=True)
    assert "gate" not in full and full["limit"] == 1000
    page = server.request("profile/diff", {"base": pa, "compare": pb, "offset": 3, "limit": 4, "iterationLimit": 2})
    assert page["deltas"] == full["deltas"][3:7] and page["deltasTotal"] == full["deltasTotal"]
    assert len(page["iterations"]["base"]) == 2 and page["iterations"]["truncated"]
    only = server.request("profile/diff", {"base": pa, "compare": pb, "kinds": ["stream", "device"], "limit": 1000})
    assert {x["kind"] for x in only["deltas"]} == {"stream", "device"}
    assert only["deltasTotal"] == sum(x["kind"] in ("stream", "device") for x in full["deltas"])
    g = server.request("profile/diff", {"base": pa, "compare": pb, "thresholds": {"step": 5, "families": {"gemm": 50}}})
    assert g["gate"]["status"] == "regression" and [f["target"] for f in g["gate"]["failures"]] == ["step"]
    for bad in ({"kinds": ["nope"]}, {"limit": 0}, {"thresholds": {"steps": 5}}, {"thresholds": {"step": -1}},
                {"thresholds": {"families": {"gemm": "x"}}}, {"thresholds": []}):
        with pytest.raises(Exception) as e:
            server.request("profile/diff", {"base": pa, "compare": pb, **bad})
        assert "-32602" in str(e.value) or "params" in str(e.value)
    # the server keeps serving
    same = server.request("profile/diff", {"base": pa, "compare": pa})
    assert same["verdict"]["overall"] == "no_change" and all(x["deltaNs"] == 0 for x in same["deltas"])
    assert any(r["code"] == "same_profile" for r in same["comparability"]["reasons"])


def test_real_pair_against_sql():
    a, b = need_real("nsys2026_2gpu_nccl_before"), need_real("nsys2026_2gpu_nccl_after")
    d = diff(a, b)
    # a 300 ms cut of a capture: the GPU gaps do not repeat like steps, so no step verdict
    assert d["base"]["steady"] == d["compare"]["steady"] == 0
    assert d["verdict"]["overall"] == "unknown" and d["comparability"]["comparable"]
    assert any(r["code"] == "no_iterations" for r in d["comparability"]["reasons"])
    # whole profiles: per stream and per device totals are the ops' summed durations
    for side, path in (("base", a), ("compare", b)):
        ops = ref.gpu_ops(ref.connect(path))
        by_stream, by_dev = {}, {}
        for s, e, dev, st in ops:
            by_stream[f"{dev}/{st}"] = by_stream.get(f"{dev}/{st}", 0) + e - s
            by_dev[str(dev)] = by_dev.get(str(dev), 0) + e - s
        key = "baseNs" if side == "base" else "compareNs"
        got = {x["key"]: x[key] for x in d["deltas"] if x["kind"] == "stream" and x[key]}
        assert got == by_stream
        assert {x["key"]: x[key] for x in d["deltas"] if x["kind"] == "device" and x[key]} == by_dev
    # the documented story: flash_fwd_kernel ran fewer times (less time), SendRecv got slower
    ka, kb = ref.top_kernels(ref.connect(a)), ref.top_kernels(ref.connect(b))
    def kernel(prefix):
        return [x for x in d["deltas"] if x["kind"] == "kernel" and x["key"].startswith(prefix)]
    flash, sr = kernel("flash_fwd_kernel"), kernel("ncclDevKernel_SendRecv")
    assert sum(x["baseNs"] for x in flash) == ka["flash_fwd_kernel"]["totalNs"]
    assert sum(x["compareNs"] for x in flash) == kb["flash_fwd_kernel"]["totalNs"]
    assert [x["change"] for x in flash] == ["faster"] and [x["change"] for x in sr] == ["slower"]
    assert sum(x["deltaNs"] for x in sr) == kb["ncclDevKernel_SendRecv"]["totalNs"] - ka["ncclDevKernel_SendRecv"]["totalNs"]
    assert sum(x["baseNs"] for x in d["deltas"] if x["kind"] == "kernel") == sum(v["totalNs"] for v in ka.values())
    # ranked: significant first, "what" kinds before "where" kinds, then by impact
    sig = significant(d)
    what = [x for x in sig if x["kind"] in ("kernel", "family", "launchConfig")]
    assert sig[:len(what)] == what
    assert [x["impactNs"] for x in what] == sorted((x["impactNs"] for x in what), reverse=True)
    text = cli(a, b).stdout.decode()
    assert text.startswith("nsys-ai diff") and "Where it changed" in text
