"""kernel/explain answers the same bytes whatever was asked before it: a
first click on a name in a fresh server (its group not yet in duration order,
the detectors reading the grouping's op order as it was built) equals the
same click after the report and every other name's explanation (each group
then kept in duration order beside the op order, the detectors' results
remembered), and asking by kernelId agrees the same way. Checked on
generated shapes and the real exports (skipped when absent)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import real_profiles
from nsys_rpc import RpcError, Server

ROOT = Path(__file__).resolve().parents[2]
SHAPES = [("small", None), ("tiny", "graphs"), ("tiny", "nccl-nvtx")]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[Path]:
    out = []
    for preset, shape in SHAPES:
        p = tmp_path_factory.mktemp("order") / f"{preset}-{shape or 'default'}.sqlite"
        args = [sys.executable, str(ROOT / "tools" / "gen_profile.py"), "-o", str(p), "--preset", preset]
        if shape:
            args += ["--shape", shape]
        subprocess.run(args, check=True, capture_output=True)
        out.append(p)
    return out


def names_of(s: Server, pid: str) -> list[str]:
    rows = s.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 12}})["rows"]
    return [r["name"] for r in rows]


def explain(s: Server, pid: str, params: dict) -> object:
    try:
        return s.request("kernel/explain", dict(params, profileId=pid))
    except RpcError as e:
        return {"error": e.code}


def first_clicks(path: Path, asks: list[dict]) -> list[object]:
    """Each ask as the first request on the profile of a fresh server."""
    out = []
    for ask in asks:
        with Server() as s:
            pid = s.request("profile/open", {"path": str(path)})["profileId"]
            out.append(explain(s, pid, ask))
    return out


def check(path: Path) -> int:
    with Server() as s:
        try:
            pid = s.request("profile/open", {"path": str(path)})["profileId"]
            names = names_of(s, pid)
        except RpcError:
            return 0
        if not names:
            return 0
        s.request("report/generate", {"profileId": pid})
        asks = [{"name": n} for n in reversed(names)] + [{"kernelId": k} for k in (0, 3)]
        warm = [explain(s, pid, a) for a in asks]
    # a fresh server per ask would cost a profile open each: the first and the
    # last name (smallest and largest group) and one kernelId
    picks = [0, len(names) - 1, len(names)]
    cold = first_clicks(path, [asks[i] for i in picks])
    for i, c in zip(picks, cold):
        assert c == warm[i], f"{path.name}: {asks[i]} differs between a first click and one after the others"
    return len(picks)


def test_explain_order_generated(generated):
    assert sum(check(p) for p in generated) > 0


def test_explain_order_real():
    paths = [p for p in real_profiles() if p.stat().st_size < 64 << 20][:8]
    if not paths:
        pytest.skip("real profiles not available (../shared/profiles is absent)")
    assert sum(check(p) for p in paths) > 0
