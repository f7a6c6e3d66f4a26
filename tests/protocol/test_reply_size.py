"""The reply-size rule (docs/protocol.md, "Reply size"): every method, called
with its default params (only the required ones filled in), answers at most
2 MiB of JSON, on a 1M-kernel generated profile and on the largest real
exports. Errors are small by construction and count as answers."""
from __future__ import annotations

import json

import pytest

from conftest import PROFILES, generate, real_profiles
from nsys_rpc import Server
from nsys_rpc import RpcError

CAP = 2 * 1024 * 1024
SKIP = {"initialize", "shutdown", "exit", "initialized", "profile/close", "agent/configure"}


def params_for(method: str, pid: str, path: str, info: dict, tmp) -> dict:
    span = info.get("span") or {"start": 0, "end": 1}
    ws = str(tmp)
    return {
        "profile/open": {"path": path},
        "profile/list": {},
        "analysis/list": {},
        "profile/openSet": {"paths": [path]},
        "profile/diff": {"base": pid, "compare": pid},
        "timeline/range": {"profileId": pid, "start": span["start"], "end": max(span["end"], span["start"] + 1),
                           "width": 2000},
        "kernel/details": {"profileId": pid, "kernelId": 0},
        "kernel/explain": {"profileId": pid, "kernelId": 0},
        "search": {"profileId": pid, "query": "e"},
        "export/perfetto": {"profileId": pid, "path": str(tmp / "trace.json")},
        "agent/ask": {"profileId": pid, "question": "why is this slow?"},
        "source/map": {"profileId": pid, "workspaceRoot": ws},
        "source/kernelsAt": {"profileId": pid, "file": str(tmp / "train.py"), "line": 1, "workspaceRoot": ws},
        "source/annotate": {"file": str(tmp / "train.py"), "workspaceRoot": ws},
        "source/unannotate": {"file": str(tmp / "train.py"), "workspaceRoot": ws},
        "source/refine": {"profileId": pid, "workspaceRoot": ws},
    }.get(method, {"profileId": pid})


def check_all_methods(server, path, tmp) -> dict:
    (tmp / "train.py").write_text("import torch\n\ndef step(x):\n    return x @ x\n")
    methods = server.request("initialize", {"processId": None, "capabilities": {}})["capabilities"]["methods"]
    server.notify("initialized", {})
    r = server.request("profile/open", {"path": str(path)}, timeout=600)
    pid, info = r["profileId"], r["info"]
    sizes = {}
    for m in methods:
        if m in SKIP:
            continue
        calls = [params_for(m, pid, str(path), info, tmp)]
        if m == "analysis/run":
            calls = [{"profileId": pid, "name": a["name"], "params": {"modelFlops": 1e15} if a["name"] == "mfu" else {}}
                     for a in server.request("analysis/list", {})["analyses"]]
        for p in calls:
            try:
                res = server.request(m, p, timeout=600)
            except RpcError:
                continue
            size = len(json.dumps(res, separators=(",", ":"), ensure_ascii=False).encode())
            key = m if m != "analysis/run" else f"{m}:{p['name']}"
            sizes[key] = size
    too_big = {k: v for k, v in sizes.items() if v > CAP}
    assert not too_big, f"replies over 2 MiB with default params: {too_big}"
    assert "nvtx/tree" in sizes and "timeline/range" in sizes
    return sizes


@pytest.fixture()
def raw_server(cache_dir):
    """A server not yet initialized (the test reads the method list from initialize)."""
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)}, initialize=False)
    yield s
    s.close()


@pytest.fixture(scope="session")
def profile_1m(generated_dir):
    return generate(generated_dir / "1m.sqlite", "--preset", "1m")


@pytest.mark.not_sanitized("reply sizes on a generated 1M profile; the real-profile cases take the same paths")
def test_every_reply_within_2mib_1m(raw_server, profile_1m, tmp_path):
    sizes = check_all_methods(raw_server, profile_1m, tmp_path)
    assert sizes["timeline/range"] > CAP // 2  # it did have more to say: the cap is what bounds it


@pytest.mark.parametrize("name", ["nsys2026_h100_2gpu_1s", "nsys2025_rtx3070_lm", "nsys2023_rtx3060_23k",
                                  "nsys2024_a100_lm_nvtx"])
def test_every_reply_within_2mib_real(raw_server, name, tmp_path):
    path = PROFILES / f"{name}.sqlite"
    if not real_profiles() or not path.exists():
        pytest.skip(f"real profile {name} not found in {PROFILES}")
    check_all_methods(raw_server, path, tmp_path)
