"""Property: no percentage of an analysis exceeds 100 (or is negative), on
every real export and on generated profiles. A `*Pct`/`pct*` field is a share
of something; time summed over threads or copy engines must be a union before
it is divided by a window. The one documented exception is `mfuPct` (and its
average), which exceeds 100 when the FLOPs or the peak are wrong (the summary
says `implausible`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import check_schema, generate, real_profiles

EXEMPT = {"mfuPct", "avgMfuPct"}
# every analysis runs with its defaults, mfu with FLOPs and a peak given
PARAMS = {"mfu": {"modelFlops": 1e12, "peakTflops": 1e6}, "schema_inspect": {"rowCounts": False}}


def pct_fields(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{path}.{k}"
            if (k.endswith("Pct") or k.startswith("pct")) and k not in EXEMPT and isinstance(v, (int, float)):
                yield p, v
            yield from pct_fields(v, p)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from pct_fields(v, f"{path}[{i}]")


def profiles(generated: Path) -> list[Path]:
    return [generate(generated / "tiny.sqlite", "--preset", "tiny"),
            generate(generated / "small.sqlite", "--preset", "small"),
            generate(generated / "graphs.sqlite", "--preset", "tiny", "--graphs")] + real_profiles()


def test_no_pct_above_100(server, generated_dir):
    names = [a["name"] for a in server.request("analysis/list", {})["analyses"]]
    bad, runs = [], 0
    for path in profiles(generated_dir):
        pid = server.request("profile/open", {"path": str(path)})["profileId"]
        for name in names:
            res = server.request("analysis/run", {"profileId": pid, "name": name, "params": PARAMS.get(name, {})})
            check_schema("analysis/run", "result", res)
            runs += 1
            bad += [f"{path.name} {name}{p} = {v}" for p, v in pct_fields(res) if not 0 <= v <= 100]
        server.request("profile/close", {"profileId": pid})
    assert runs >= 3 * len(names)
    assert not bad, "\n".join(bad)


def test_pct_walk_finds_fields():
    """The walk itself: nested fields are found, the exemption is by name."""
    doc = {"summary": {"pctOfWindow": 101, "devices": [{"idlePct": 5}], "mfuPct": 300},
           "rows": [{"cudaApiPct": 123.4, "name": "x"}]}
    assert sorted(p for p, _ in pct_fields(doc)) == [".rows[0].cudaApiPct", ".summary.devices[0].idlePct",
                                                      ".summary.pctOfWindow"]


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
