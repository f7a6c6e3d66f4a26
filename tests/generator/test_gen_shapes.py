"""Tests of tools/gen_profile.py --shape: each stress shape is really in the
file (counts, depth, stream and process counts, names, payloads), checked with
SQL on the generated export, and the shapes combine.

Run: python3 -m pytest tests/generator/test_gen_shapes.py -q
"""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GEN = REPO / "tools" / "gen_profile.py"
KERNELS = 4_000
GPUS = 4


def run_gen(out: Path, *args: str) -> dict:
    res = subprocess.run([sys.executable, str(GEN), "-o", str(out), "--summary", *args],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


class Prof:
    def __init__(self, path: Path, summary: dict):
        self.path = path
        self.summary = summary
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def one(self, sql: str, *args):
        return self.db.execute(sql, args).fetchone()[0]

    def q(self, sql: str, *args):
        return self.db.execute(sql, args).fetchall()

    def nvtx_text(self) -> str:
        return "coalesce(n.text, s.value)"

    def ranges(self, where: str = "1") -> list:
        return self.q("SELECT n.start, n.\"end\", n.globalTid, coalesce(n.text, s.value), n.domainId, n.jsonText "
                      "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                      f"WHERE n.eventType IN (59, 60) AND ({where})")


_cache: dict = {}


@pytest.fixture(scope="module")
def gendir(tmp_path_factory):
    return tmp_path_factory.mktemp("shapes")


def shaped(gendir: Path, shape: str) -> Prof:
    if shape not in _cache:
        p = gendir / f"{shape.replace(',', '+') or 'plain'}.sqlite"
        args = ["--preset", "small", "--gpus", str(GPUS), "--kernels", str(KERNELS)]
        if shape:
            args += ["--shape", shape]
        _cache[shape] = Prof(p, run_gen(p, *args))
    return _cache[shape]


def max_depth(ranges: list) -> int:
    """Deepest push/pop nesting per thread (containment stack)."""
    best = 0
    by_tid: dict = {}
    for s, e, tid, *_ in ranges:
        by_tid.setdefault(tid, []).append((s, -e))
    for rows in by_tid.values():
        rows.sort()
        stack: list = []
        for s, ne in rows:
            e = -ne
            while stack and stack[-1] < s:
                stack.pop()
            stack.append(e)
            best = max(best, len(stack))
    return best


def test_unknown_shape_is_refused(tmp_path):
    res = subprocess.run([sys.executable, str(GEN), "-o", str(tmp_path / "x.sqlite"), "--shape", "nope"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "unknown --shape" in res.stderr


@pytest.mark.parametrize("shape", ["stages", "nvtx-flat", "nvtx-deep", "streams-many", "procs-many", "autograd",
                                   "nccl-nvtx", "graphs"])
def test_every_shape_keeps_the_kernel_count_and_the_join(gendir, shape):
    g = shaped(gendir, shape)
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == KERNELS
    assert g.summary["config"]["shapes"] == [shape]
    # every kernel joins its launching call on (globalPid, correlationId)
    orphans = g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM "
                    "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId AND "
                    "(r.globalTid >> 24) = (k.globalPid >> 24))")
    assert orphans == 0
    # NVTX ranges are closed and well ordered
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND (\"end\" IS NULL OR "
                 "\"end\" < start)") == 0


def test_stages_per_layer_ranges_on_every_rank(gendir):
    g = shaped(gendir, "stages")
    layers = g.summary["config"]["layers"]
    its = g.summary["config"]["iterations"]
    names = g.ranges("coalesce(n.text, s.value) GLOB 'layer_* forward' OR coalesce(n.text, s.value) GLOB "
                     "'layer_* backward'")
    assert len(names) == 2 * layers * its * GPUS
    assert len({r[2] for r in names}) == GPUS          # every rank's main thread
    plain = shaped(gendir, "")
    assert not plain.ranges("coalesce(n.text, s.value) GLOB 'layer_* forward'")


def test_nvtx_flat_one_thread_holds_as_many_ranges_as_kernels(gendir):
    g = shaped(gendir, "nvtx-flat")
    per_thread = g.q("SELECT globalTid, count(*) FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY globalTid "
                     "ORDER BY 2 DESC")
    tid, n = per_thread[0]
    assert n >= 0.9 * KERNELS
    ticks = g.ranges(f"n.globalTid = {tid} AND coalesce(n.text, s.value) = 'tick'")
    assert len(ticks) >= 0.9 * KERNELS
    # flat: the ticks never nest in one another
    assert max_depth(ticks) == 1


def test_nvtx_deep_nests_more_than_30_levels(gendir):
    g = shaped(gendir, "nvtx-deep")
    assert max_depth(g.ranges("n.eventType = 59")) >= 30 + 3
    assert max_depth(shaped(gendir, "").ranges("n.eventType = 59")) < 10


def test_streams_many_thousands_of_streams_per_profile(gendir):
    g = shaped(gendir, "streams-many")
    per_dev = g.q("SELECT deviceId, count(DISTINCT streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId")
    assert len(per_dev) == GPUS
    total = sum(n for _, n in per_dev)
    assert total >= 1000, per_dev
    declared = g.one("SELECT count(*) FROM TARGET_INFO_CUDA_STREAM")
    assert declared >= total


def test_procs_many_hundreds_of_processes_with_gpu_work(gendir):
    g = shaped(gendir, "procs-many")
    procs = g.one("SELECT count(DISTINCT globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    assert procs == GPUS + 32 * GPUS
    assert g.one("SELECT count(*) FROM PROCESSES") >= procs
    workers = g.one("SELECT count(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                    "WHERE s.value = 'pt_data_worker'")
    assert workers == 32 * GPUS
    assert g.ranges("coalesce(n.text, s.value) = 'worker_step'")


def test_autograd_names_nest_and_are_distinct(gendir):
    g = shaped(gendir, "autograd")
    outer = g.ranges(r"coalesce(n.text, s.value) LIKE 'aten::%, seq = %, op_id = %'")
    inner = g.ranges(r"coalesce(n.text, s.value) LIKE 'aten::%, op_id = %' AND "
                     r"coalesce(n.text, s.value) NOT LIKE '%seq = %'")
    assert len(outer) >= 0.5 * KERNELS and len(inner) == len(outer)
    assert all(re.fullmatch(r"aten::\w+, seq = \d+, op_id = \d+", r[3]) for r in outer)
    assert len({r[3] for r in outer}) >= 0.5 * len(outer) / GPUS  # per-rank sequence numbers
    # the inner op range lies inside the outer one on the same thread
    assert max_depth(outer + inner) == 2


def test_nccl_nvtx_ranges_in_the_nccl_domain_with_payloads(gendir):
    g = shaped(gendir, "nccl-nvtx")
    dom = g.q("SELECT domainId, globalTid FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'NCCL'")
    assert len(dom) == GPUS
    nccl = g.ranges("n.domainId = %d AND coalesce(n.text, s.value) LIKE 'nccl%%'" % dom[0][0])
    colls = [r for r in nccl if r[3] != "ncclGroupStart"]
    assert colls and all(r[5] for r in colls)
    payload = json.loads(colls[0][5])
    assert {"Message size [bytes]", "No. of ranks", "Rank"} <= set(payload)
    assert payload["No. of ranks"] == GPUS
    # one AllGather per forward layer on top of the one per iteration of the plain profile
    ag = "coalesce(n.text, s.value) = 'ncclAllGather'"
    its, layers = g.summary["config"]["iterations"], g.summary["config"]["layers"]
    assert len(g.ranges(ag)) == GPUS * its * (1 + layers)
    plain = shaped(gendir, "")
    assert len(plain.ranges(ag)) == GPUS * plain.summary["config"]["iterations"]


def test_graphs_blocks_replayed_by_one_graph_launch(gendir):
    g = shaped(gendir, "graphs")
    per_launch = g.q("SELECT k.correlationId, k.globalPid, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                     "WHERE k.graphNodeId IS NOT NULL GROUP BY 1, 2")
    assert len(per_launch) >= GPUS * g.summary["config"]["layers"] * 4
    assert all(n >= 4 for *_, n in per_launch)
    launches = g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                     "WHERE s.value LIKE 'cudaGraphLaunch%'")
    assert launches == len(per_launch)


def test_shapes_combine_and_stay_deterministic(gendir, tmp_path):
    a = tmp_path / "a.sqlite"
    b = tmp_path / "b.sqlite"
    args = ["--preset", "small", "--gpus", "2", "--kernels", "3000", "--shape", "stages,nvtx-deep",
            "--shape", "streams-many,nccl-nvtx,procs-many,autograd,graphs,nvtx-flat"]
    sa = run_gen(a, *args)
    run_gen(b, *args)
    assert a.read_bytes() == b.read_bytes()
    assert len(sa["config"]["shapes"]) == 8
    db = sqlite3.connect(f"file:{a}?mode=ro", uri=True)
    assert db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] == 3000
