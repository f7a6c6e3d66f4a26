"""Every analysis, the report and a self-diff on every real export: no crash,
schema-valid results, or a clear -32009 when the data is missing."""
from __future__ import annotations

import pytest

from conftest import check_schema, real_profiles
from nsys_rpc import RpcError

NAMES = [p for p in real_profiles()]


@pytest.mark.parametrize("path", NAMES or [None], ids=[p.name for p in NAMES] or ["absent"])
def test_everything_runs(server, path):
    if path is None:
        pytest.skip("real profiles not available: ../shared/profiles is absent")
    pid = server.request("profile/open", {"path": str(path)})["profileId"]
    for a in server.request("analysis/list", {})["analyses"]:
        params = {"modelFlops": 1e12, "peakTflops": 100} if a["name"] == "mfu" else {}
        try:
            res = server.request("analysis/run", {"profileId": pid, "name": a["name"], "params": params})
        except RpcError as e:
            assert e.code == -32009, (a["name"], e)
            continue
        check_schema("analysis/run", "result", res)
    rep = server.request("report/generate", {"profileId": pid, "format": "text"})
    check_schema("report/generate", "result", rep)
    assert rep["rendered"].startswith("nsys-ai report")
    d = server.request("profile/diff", {"base": pid, "compare": pid})
    check_schema("profile/diff", "result", d)
    assert all(r["deltaNs"] == 0 for r in d["deltas"]) and d["verdict"]["overall"] in ("no_change", "unknown")
