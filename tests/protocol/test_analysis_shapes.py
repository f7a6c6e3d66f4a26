"""stage_overlap, iterations and overlap's per-iteration rows on generated
stress shapes (tools/gen_profile.py --shape), recomputed by brute force from
the export's SQL with the definitions of docs/analyses.md: the bounded
algorithms (sweeps, cached unions, segment trees) must give the same numbers
as the direct definition, also where stage ranges nest, windows overlap,
ops of one API run on many streams, and NCCL kernels cross window edges.
"""
from __future__ import annotations

import bisect
import subprocess
import sys
from pathlib import Path

import pytest

from analysis_ref import union
from conftest import REPO
from nsys_rpc import Server

SHAPES = {
    # per-layer stage ranges nested in forward/backward, thousands of streams, graph replays
    "stages-streams": "stages,streams-many,graphs",
    # many processes per GPU (overlapping iteration windows), deep nesting, FSDP all-gathers
    "procs-deep": "procs-many,nvtx-deep,nccl-nvtx,stages",
    # launch calls that overlap later calls (and cross range ends): the sweep path of stage_overlap
    "overlapping-calls": "stages",
}


@pytest.fixture(scope="module", params=sorted(SHAPES))
def prof(request, tmp_path_factory):
    p = tmp_path_factory.mktemp("shapes") / f"{request.param}.sqlite"
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(p), "--preset", "small",
                    "--gpus", "2", "--kernels", "6000", "--shape", SHAPES[request.param]], check=True)
    if request.param == "overlapping-calls":
        import sqlite3
        db = sqlite3.connect(p)
        db.execute('UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET "end" = "end" + 150000 + (correlationId % 7) * 40000 '
                   "WHERE correlationId % 37 = 0")
        db.commit()
        db.close()
    srv = Server()
    pid = srv.request("profile/open", {"path": str(p)})["profileId"]
    yield srv, pid, Ref(p)
    srv.close()


def covered(u, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in u)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        s, e = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if e > s:
            out.append([s, e])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def round2(v):
    return round(v * 100) / 100


class Ref:
    """The export, read with plain SQL."""

    def __init__(self, path: Path):
        import sqlite3
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        names = dict(db.execute("SELECT id, value FROM StringIds"))
        self.ops = []   # (start, end, device, globalPid, corr, nccl)
        for s, e, d, gp, c, nm in db.execute("SELECT start, \"end\", deviceId, globalPid, correlationId, shortName "
                                             "FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            self.ops.append((s, e, d, gp, c, "nccl" in names[nm].lower(), True))
        for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
            for s, e, d, gp, c in db.execute(f"SELECT start, \"end\", deviceId, globalPid, correlationId FROM {t}"):
                self.ops.append((s, e, d, gp, c, False, False))
        self.by_corr = {}
        for o in self.ops:
            self.by_corr.setdefault((o[3], o[4]), []).append(o)
        self.api = {}   # globalTid -> sorted [(start, end, globalPid, corr)]
        for s, e, tid, c in db.execute("SELECT start, \"end\", globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            self.api.setdefault(tid, []).append((s, e, (tid >> 24) << 24, c))
        for v in self.api.values():
            v.sort()
        self.ranges = db.execute(
            "SELECT n.start, n.\"end\", n.globalTid, coalesce(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN "
            "StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL AND "
            "(n.endGlobalTid IS NULL OR n.endGlobalTid = n.globalTid)").fetchall()
        self.unions = {}
        for dev in {o[2] for o in self.ops}:
            comp = union([(o[0], o[1]) for o in self.ops if o[2] == dev and o[6] and not o[5]])
            comm = union([(o[0], o[1]) for o in self.ops if o[2] == dev and o[5]])
            allu = union([(o[0], o[1]) for o in self.ops if o[2] == dev])
            self.unions[dev] = (comp, comm, intersect(comp, comm), allu)

    def project(self, tid, rs, re):
        """GPU window and device of the ops launched from calls fully inside [rs, re]."""
        calls = self.api.get(tid, [])
        i = bisect.bisect_left(calls, (rs,))
        gs = ge = dev = None
        for s, e, gp, c in calls[i:]:
            if s > re:
                break
            if e > re:
                continue
            for o in self.by_corr.get((gp, c), []):
                gs = o[0] if gs is None else min(gs, o[0])
                ge = o[1] if ge is None else max(ge, o[1])
                dev = o[2] if dev is None else dev
        return gs, ge, dev

    def stage_overlap(self, window):
        words = ("forward", "backward", "fwd", "bwd", "stage")
        st = {}
        for rs, re, tid, name in self.ranges:
            if not name or not any(w in name.lower() for w in words):
                continue
            if re < window[0] or rs >= window[1]:
                continue
            gs, ge, dev = self.project(tid, rs, re)
            if gs is None:
                continue
            comp, comm, both, _ = self.unions[dev]
            cm, ov = covered(comm, gs, ge), covered(both, gs, ge)
            S = st.setdefault((dev, name), {"ranges": 0, "gpuNs": 0, "commNs": 0, "ov": 0, "exposedCommNs": 0,
                                            "commKernels": 0, "fr": []})
            S["ranges"] += 1
            S["gpuNs"] += ge - gs
            S["commNs"] += cm
            S["ov"] += ov
            S["exposedCommNs"] += cm - ov
            for s, e, d, _, _, nccl, _ in self.ops:
                if d == dev and nccl and e > s and e > gs and s < ge:
                    S["commKernels"] += 1
                    S["fr"].append(covered(comp, max(s, gs), min(e, ge)) / (e - s))
        return st

    def iteration_stats(self, dev, a, b):
        comp, comm, both, allu = self.unions[dev]
        return covered(comp, a, b), covered(comm, a, b), covered(both, a, b), covered(allu, a, b)


def test_stage_overlap_matches_the_definition(prof):
    srv, pid, ref = prof
    res = srv.request("analysis/run", {"profileId": pid, "name": "stage_overlap"})
    want = ref.stage_overlap((res["window"]["start"], res["window"]["end"]))
    got = {(r["device"], r["stage"]): r for r in res["rows"]}
    assert set(got) == set(want)
    assert len(got) > 8   # per-layer stages on both ranks
    for k, w in want.items():
        g = got[k]
        for f in ("ranges", "gpuNs", "commNs", "exposedCommNs", "commKernels"):
            assert g[f] == w[f], (k, f, g[f], w[f])
        if w["commNs"]:
            assert g["overlapPct"] == pytest.approx(round2(100 * w["ov"] / w["commNs"]), abs=0.011), k
        if w["fr"]:
            assert g["minKernelOverlapPct"] == pytest.approx(round2(100 * min(w["fr"])), abs=0.011), k
            assert g["maxKernelOverlapPct"] == pytest.approx(round2(100 * max(w["fr"])), abs=0.011), k
    assert sum(w["commKernels"] for w in want.values()) > 0


def test_iteration_windows_match_the_definition(prof):
    """iterations and overlap.summary.iterations: window sums on the device's
    unions, however the windows overlap (procs-many: 32 workers per GPU)."""
    srv, pid, ref = prof
    it = srv.request("analysis/run", {"profileId": pid, "name": "iterations"})
    ov = srv.request("analysis/run", {"profileId": pid, "name": "overlap"})
    assert it["summary"]["method"] == "nvtx" and it["rows"]
    for r in it["rows"]:
        comp, comm, both, allu = ref.iteration_stats(r["device"], r["start"], r["end"])
        assert (r["computeNs"], r["ncclNs"], r["overlapNs"], r["idleNs"]) == \
            (comp, comm, both, r["durationNs"] - allu), r
    per = ov["summary"]["iterations"]
    assert len(per) == len(it["rows"])
    for r in per:
        comp, comm, both, _ = ref.iteration_stats(r["device"], r["start"], r["end"])
        assert (r["computeNs"], r["commNs"], r["overlapNs"]) == (comp, comm, both), r
