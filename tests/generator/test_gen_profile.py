"""Tests of tools/gen_profile.py: determinism, schema faithfulness, counts, joins,
NVTX nesting and the documented problems (tests/generator/README.md).

Run: python3 -m pytest tests/generator -q
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GEN = REPO / "tools" / "gen_profile.py"
SHARED = Path(os.environ.get("NSYS_AI_SHARED", REPO.parent / "shared"))
REFERENCE = SHARED / "reference"
PROFILES = SHARED / "profiles"

SCHEMAS = ("3.25.0", "3.1.2", "3.0.0")
UINT_MASK = 0xFFFFFFFFFF000000


# ---------------------------------------------------------------------------------------
# helpers


def run_gen(out: Path, *args: str) -> dict:
    """Runs the generator; returns its --summary JSON."""
    res = subprocess.run([sys.executable, str(GEN), "-o", str(out), "--summary", *args],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Gen:
    def __init__(self, path: Path, summary: dict):
        self.path = path
        self.summary = summary
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def q(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def one(self, sql, *args):
        return self.db.execute(sql, args).fetchone()[0]

    def tables(self):
        return {r[0] for r in self.q("SELECT name FROM sqlite_master WHERE type='table'")}


@pytest.fixture(scope="module")
def gendir(tmp_path_factory):
    return tmp_path_factory.mktemp("gen")


_cache: dict = {}


def gen(gendir: Path, name: str, *args: str) -> Gen:
    if name not in _cache:
        p = gendir / f"{name}.sqlite"
        _cache[name] = Gen(p, run_gen(p, *args))
    return _cache[name]


@pytest.fixture(scope="module")
def small(gendir):
    return gen(gendir, "small", "--preset", "small")


@pytest.fixture(scope="module")
def tiny(gendir):
    return gen(gendir, "tiny", "--preset", "tiny")


@pytest.fixture(scope="module", params=SCHEMAS)
def by_schema(request, gendir):
    sc = request.param
    return gen(gendir, "small-" + sc, "--preset", "small", "--schema", sc, "--source-tags")


@pytest.fixture(scope="module")
def options(gendir):
    return gen(gendir, "opts", "--preset", "small", "--graphs", "--callchains", "--source-tags")


# ---------------------------------------------------------------------------------------
# DDL parsing of the reference files


def parse_ddl(text: str) -> dict:
    """{table: {column: (type, notnull, pk)}} from CREATE TABLE statements."""
    out = {}
    text = re.sub(r"--[^\n]*", "", text)
    for m in re.finditer(r"CREATE TABLE\s+(\w+)\s*\(", text):
        i = m.end()
        depth = 1
        j = i
        while depth:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
            j += 1
        body = text[i:j - 1]
        parts, cur, d = [], "", 0
        for ch in body:
            if ch == "(":
                d += 1
            elif ch == ")":
                d -= 1
            if ch == "," and d == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        cols = {}
        for p in parts:
            w = p.split()
            if not w or w[0].upper() == "PRIMARY":
                continue
            rest = " ".join(w[1:]).upper()
            cols[w[0]] = (w[1].upper() if len(w) > 1 else "", "NOT NULL" in rest, "PRIMARY KEY" in rest)
        out[m.group(1)] = cols
    return out


def db_columns(db: sqlite3.Connection, table: str) -> dict:
    return {r[1]: (r[2].upper(), bool(r[3]), bool(r[5])) for r in db.execute(f'PRAGMA table_info("{table}")')}


def reference_columns(schema: str) -> dict:
    """Reference column sets per table for a schema variant, from ../shared/reference."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference DDL not available: {REFERENCE} is absent")
    ref = {}
    py = REFERENCE / "nsys_export_schemas.py"
    if py.exists():
        ns: dict = {}
        exec(compile(py.read_text(), str(py), "exec"), ns)
        key = "3.1.2" if schema == "3.0.0" else schema
        for _, ddl in ns["SCHEMAS"].get(key, {}).get("tables", []):
            ref.update(parse_ddl(ddl))
    sql = {"3.25.0": "schema-nsys2026.2.sql", "3.0.0": "schema-nsys2022.4.2.sql"}.get(schema)
    if sql and (REFERENCE / sql).exists():
        ref.update(parse_ddl((REFERENCE / sql).read_text()))
    if schema == "3.1.2" and (PROFILES / "nsys2023_rtx3060_23k.sqlite").exists():
        real = sqlite3.connect(f"file:{PROFILES / 'nsys2023_rtx3060_23k.sqlite'}?mode=ro", uri=True)
        for (t,) in real.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            ref[t] = db_columns(real, t)
    md = REFERENCE / "nsys-sqlite-schema.md"
    if md.exists():
        # tables only documented in the notes (callchains, graph tables)
        notes = parse_ddl(md.read_text())
        for t in ("CUDA_CALLCHAINS",):
            ref.setdefault(t, notes.get(t))
    if not ref:
        pytest.skip("no reference DDL found")
    return ref


# tables the reference files do not carry for a schema, with where their layout comes from
UNREFERENCED_OK = {"CUDA_GRAPH_NODE_EVENTS", "CUDA_GRAPH_EVENTS"}


# ---------------------------------------------------------------------------------------
# determinism


def test_same_args_same_bytes(gendir):
    a, b = gendir / "det-a.sqlite", gendir / "sub" / "det-b.sqlite"
    b.parent.mkdir(exist_ok=True)
    args = ("--preset", "small", "--graphs", "--callchains", "--source-tags", "--seed", "7")
    run_gen(a, *args)
    run_gen(b, *args)
    assert sha256(a) == sha256(b)
    assert not [p for p in gendir.rglob("*.tmp-*")], "temporary file left behind"


def test_other_seed_other_bytes(gendir):
    a, b = gendir / "seed1.sqlite", gendir / "seed2.sqlite"
    run_gen(a, "--preset", "tiny", "--seed", "1")
    run_gen(b, "--preset", "tiny", "--seed", "2")
    assert sha256(a) != sha256(b)


def test_replaces_existing_output(gendir):
    p = gendir / "replace.sqlite"
    p.write_text("not a database")
    run_gen(p, "--preset", "tiny")
    assert sqlite3.connect(p).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] == 96


def test_bad_arguments_fail_cleanly(gendir):
    p = gendir / "bad.sqlite"
    for args in (["--gpus", "0"], ["--kernels", "10", "--gpus", "2"], ["--schema", "9.9.9"]):
        res = subprocess.run([sys.executable, str(GEN), "-o", str(p), *args], capture_output=True, text=True)
        assert res.returncode != 0 and "Traceback" not in res.stderr, (args, res.stderr)
        assert not p.exists()


# ---------------------------------------------------------------------------------------
# schema faithfulness


def test_columns_match_reference_ddl(by_schema):
    sc = by_schema.summary["config"]["schema"]
    ref = reference_columns(sc)
    checked = set()
    for t in sorted(by_schema.tables()):
        mine = db_columns(by_schema.db, t)
        if t not in ref or ref[t] is None:
            assert t in UNREFERENCED_OK, f"{sc}: table {t} has no reference DDL"
            continue
        assert list(mine) == list(ref[t]), f"{sc}: {t} columns differ:\n{list(mine)}\n{list(ref[t])}"
        assert mine == ref[t], f"{sc}: {t} types/constraints differ"
        checked.add(t)
    for must in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
                 "CUPTI_ACTIVITY_KIND_MEMCPY", "StringIds", "TARGET_INFO_GPU"):
        assert must in checked, f"{sc}: {must} was not checked against a reference"


def test_metadata_table_per_schema(by_schema):
    sc = by_schema.summary["config"]["schema"]
    meta = "META_DATA_EXPORT" if sc == "3.25.0" else "EXPORT_META_DATA"
    assert meta in by_schema.tables()
    other = "EXPORT_META_DATA" if meta == "META_DATA_EXPORT" else "META_DATA_EXPORT"
    assert other not in by_schema.tables()
    assert by_schema.one(f"SELECT value FROM {meta} WHERE name='EXPORT_SCHEMA_VERSION'") == sc
    launch_enum = "ENUM_CUDA_KERNEL_LAUNCH_TYPE" if sc == "3.25.0" else "ENUM_CUDA_KRENEL_LAUNCH_TYPE"
    assert by_schema.one(f"SELECT count(*) FROM {launch_enum}") == 4


def test_nvtx_text_vs_textid(by_schema):
    sc = by_schema.summary["config"]["schema"]
    g = by_schema
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType=59 AND domainId=0 AND text IS NULL") == 0
    nccl_textid = g.one("SELECT count(*) FROM NVTX_EVENTS WHERE domainId=1 AND eventType=59 AND textId IS NOT NULL")
    nccl_text = g.one("SELECT count(*) FROM NVTX_EVENTS WHERE domainId=1 AND eventType=59 AND text IS NOT NULL")
    if sc == "3.0.0":
        assert nccl_textid == 0 and nccl_text > 0
    else:
        assert nccl_textid > 0 and nccl_text == 0
        assert g.one("SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id=n.textId "
                     "WHERE n.textId IS NOT NULL AND s.value IS NULL") == 0
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType=75 AND text='NCCL' AND domainId=1") == 2


def test_ids_bit_layout(small):
    procs = dict(small.q("SELECT globalPid, pid FROM PROCESSES"))
    for gpid, pid in procs.items():
        assert gpid == (1 << 48) | (pid << 24)
    tids = {r[0] for r in small.q("SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION "
                                  "SELECT globalTid FROM NVTX_EVENTS")}
    named = {r[0] for r in small.q("SELECT globalTid FROM ThreadNames")}
    for t in tids:
        assert t & UINT_MASK in procs and (t >> 48) == 1 and t in named
    for (gpid,) in small.q("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        assert gpid in procs
    # one process per GPU, device i driven by rank i
    devs = small.q("SELECT DISTINCT deviceId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY 1")
    assert [d for d, _ in devs] == [0, 1] and len({p for _, p in devs}) == 2
    gpus = small.q("SELECT id, name, smCount, computeMajor FROM TARGET_INFO_GPU ORDER BY id")
    assert gpus == [(0, "NVIDIA H100 80GB HBM3", 132, 9), (1, "NVIDIA H100 80GB HBM3", 132, 9)]
    assert small.one("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") > 1_600_000_000 * 10**9


# ---------------------------------------------------------------------------------------
# counts and joins


@pytest.mark.parametrize("args,gpus,kernels", [
    (("--preset", "tiny"), 1, 96),
    (("--preset", "small"), 2, 2000),
    (("--gpus", "3", "--kernels", "4321", "--iterations", "4"), 3, 4321),
    (("--preset", "100k"), 8, 100_000),
])
def test_counts_match_arguments(gendir, args, gpus, kernels):
    g = gen(gendir, "counts-" + "-".join(args), *args)
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == kernels
    assert g.one("SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL") == gpus
    c = g.summary["counts"]
    assert c["kernels"] == kernels
    for key, table in (("runtime", "CUPTI_ACTIVITY_KIND_RUNTIME"), ("nvtx", "NVTX_EVENTS"),
                       ("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"), ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"),
                       ("syncs", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")):
        assert g.one(f"SELECT count(*) FROM {table}") == c[key], key
    # one launch call per kernel (no graphs): launch API rows == kernels
    launches = g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id=r.nameId "
                     "WHERE s.value IN ('cudaLaunchKernel_v7000','cuLaunchKernel','cuLaunchKernelEx')")
    assert launches == kernels
    iters = g.summary["config"]["iterations"]
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'train_step %'") == gpus * iters


def gpu_ops(g):
    return g.q("SELECT 'k', start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL "
               "SELECT 'c', start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL "
               "SELECT 'm', start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET UNION ALL "
               "SELECT 's', start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")


@pytest.mark.parametrize("which", ["small", "options"])
def test_every_gpu_op_joins_one_runtime_row(which, small, options):
    g = small if which == "small" else options
    rt = {}
    for start, end, tid, corr in g.q("SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        key = (corr, tid & UINT_MASK)
        assert key not in rt, f"correlationId {corr} repeats inside one process"
        rt[key] = (start, end)
    for kind, start, end, corr, gpid in gpu_ops(g):
        assert (corr, gpid) in rt, (kind, corr, gpid)
        if kind == "k":
            assert start > rt[(corr, gpid)][1], "kernel starts before its launch call ends"
        elif kind in "cm":   # a synchronous cudaMemcpy copies while the call runs
            assert start > rt[(corr, gpid)][0]
        assert end > start
    # correlationIds deliberately repeat across processes
    per_corr = g.q("SELECT correlationId, count(DISTINCT globalTid & -16777216) n FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                   "GROUP BY 1 HAVING n > 1")
    assert len(per_corr) > 100
    # joining on correlationId alone would be wrong
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
                 "ON r.correlationId = k.correlationId") > g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")


def test_nvtx_push_pop_nest_per_thread(by_schema):
    g = by_schema
    rows = g.q("SELECT globalTid, start, end FROM NVTX_EVENTS WHERE eventType=59 ORDER BY globalTid, start, end DESC")
    stack, tid_prev, depth_max = [], None, 0
    for tid, s, e in rows:
        assert e is not None and e > s
        if tid != tid_prev:
            stack, tid_prev = [], tid
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or e <= stack[-1], f"range [{s},{e}] crosses its parent on thread {tid}"
        stack.append(e)
        depth_max = max(depth_max, len(stack))
    assert depth_max == 4       # train_step > forward > layer_K > attention
    # start/end ranges, marks and one cross-thread range exist
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType=60 AND rangeId IS NOT NULL") > 0
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType=34 AND end IS NULL") > 0
    assert g.one("SELECT count(*) FROM NVTX_EVENTS WHERE eventType=60 AND endGlobalTid IS NOT NULL "
                 "AND endGlobalTid != globalTid") == 2


def test_source_tags(by_schema):
    texts = [t for (t,) in by_schema.q("SELECT text FROM NVTX_EVENTS WHERE eventType IN (59,60) AND domainId=0")]
    assert texts
    for t in texts:
        assert re.match(r"^[\w/]+\.py:\d+ \S", t), t
    assert "train.py:42 train_step 0" in texts


def test_no_source_tags_by_default(small):
    assert small.one("SELECT count(*) FROM NVTX_EVENTS WHERE text GLOB '*.py:[0-9]*'") == 0
    assert small.one("SELECT count(*) FROM NVTX_EVENTS WHERE text = 'forward'") == 2 * 5


def test_runtime_names_and_syncs(small):
    names = {n for (n,) in small.q("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                                   "JOIN StringIds s ON s.id = r.nameId")}
    for n in ("cudaLaunchKernel_v7000", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync_v3020",
              "cudaMemcpy_v3020", "cudaMemsetAsync_v3020", "cudaStreamSynchronize_v3020",
              "cudaDeviceSynchronize_v3020", "cudaStreamWaitEvent_v3020", "cudaEventRecord_v3020"):
        assert n in names
    # every sync API call has a SYNCHRONIZATION row of the right type
    for api, typ in (("cudaStreamSynchronize_v3020", 3), ("cudaDeviceSynchronize_v3020", 4),
                     ("cudaStreamWaitEvent_v3020", 2)):
        n_api = small.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id=r.nameId "
                          "WHERE s.value=?", api)
        n_sync = small.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y JOIN "
                           "CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId=y.correlationId AND "
                           "(r.globalTid & -16777216)=y.globalPid JOIN StringIds s ON s.id=r.nameId "
                           "WHERE s.value=? AND y.syncType=?", api, typ)
        assert n_api == n_sync > 0, api
    # NCCL kernels run on their own stream, launched from the NCCL thread
    rows = small.q("SELECT DISTINCT k.streamId, t.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                   "JOIN StringIds s ON s.id=k.shortName "
                   "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId=k.correlationId "
                   "AND (r.globalTid & -16777216)=k.globalPid "
                   "JOIN ThreadNames tn ON tn.globalTid=r.globalTid JOIN StringIds t ON t.id=tn.nameId "
                   "WHERE s.value LIKE 'nccl%'")
    assert {t for _, t in rows} == {"pt_nccl_comm"} and len(rows) == 2


# ---------------------------------------------------------------------------------------
# options


def test_graphs(options):
    g = options
    rows = g.q("SELECT k.graphNodeId, k.graphId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
               "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId=k.correlationId "
               "AND (r.globalTid & -16777216)=k.globalPid JOIN StringIds s ON s.id=r.nameId "
               "WHERE k.graphNodeId IS NOT NULL")
    assert rows and {s for _, _, s in rows} == {"cudaGraphLaunch_v10000"} and {gi for _, gi, _ in rows} == {1}
    nodes = {n for (n,) in g.q("SELECT graphNodeId FROM CUDA_GRAPH_NODE_EVENTS")}
    assert {n for n, _, _ in rows} <= nodes
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == 2000
    launches = g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id=r.nameId "
                     "WHERE s.value='cudaGraphLaunch_v10000'")
    assert launches == 2 * 5
    assert g.one("SELECT value FROM META_DATA_CAPTURE WHERE name='CUDA_GRAPH_TRACE_OPTIONS:MODE'") == "Node"


def test_callchains(options):
    g = options
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE callchainId IS NULL") == 0
    assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE NOT EXISTS "
                 "(SELECT 1 FROM CUDA_CALLCHAINS c WHERE c.id = r.callchainId)") == 0
    for cid, n, mx in g.q("SELECT id, count(*), max(stackDepth) FROM CUDA_CALLCHAINS GROUP BY id"):
        assert mx == n - 1
    # frame 1 names the API (suffix stripped) of the calls that use the chain
    bad = g.q("SELECT s.value, f.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id=r.nameId "
              "JOIN CUDA_CALLCHAINS c ON c.id=r.callchainId AND c.stackDepth=1 JOIN StringIds f ON f.id=c.symbol "
              "WHERE f.value != s.value AND s.value NOT LIKE f.value || '_v%'")
    assert not bad


def test_schema_300_and_312_variants(gendir):
    for sc in ("3.1.2", "3.0.0"):
        g = gen(gendir, "v-" + sc, "--preset", "tiny", "--schema", sc, "--graphs", "--callchains")
        t = g.tables()
        assert "TARGET_INFO_CUDA_NULL_STREAM" in t and "TARGET_INFO_CUDA_CONTEXT_INFO" not in t
        assert "CUDA_GRAPH_EVENTS" in t and "CUDA_GRAPH_NODE_EVENTS" not in t
        assert g.one("SELECT count(*) FROM CUDA_GRAPH_EVENTS") > 0
        assert g.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == 96


# ---------------------------------------------------------------------------------------
# the documented problems


def union(iv):
    iv = sorted(iv)
    out = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    i = j = t = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            t += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return t


def kernels_by_device(g):
    out = {}
    for dev, s, e, name in g.q("SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                               "JOIN StringIds s ON s.id = k.shortName"):
        out.setdefault(dev, []).append((s, e, name))
    return out


@pytest.mark.parametrize("which", ["small", "tiny", "example"])
def test_p1_sync_bubble(which, gendir):
    g = gen(gendir, which, "--preset", which)
    ops = kernels_by_device(g)
    for dev, s, e in g.q("SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL "
                         "SELECT deviceId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"):
        ops[dev].append((s, e, ""))
    iters = g.q("SELECT end - start FROM NVTX_EVENTS WHERE text LIKE 'train_step %'")
    med = statistics.median(d for (d,) in iters)
    syncs = g.q("SELECT r.start, r.end, r.globalTid & -16777216 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                "JOIN StringIds s ON s.id=r.nameId WHERE s.value='cudaDeviceSynchronize_v3020'")
    pid_of_dev = dict(g.q("SELECT DISTINCT deviceId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"))
    for dev, lst in ops.items():
        u = union([[s, e] for s, e, _ in lst])
        gaps = sorted(((u[i + 1][0] - u[i][1], u[i][1]) for i in range(len(u) - 1)), reverse=True)
        size, start = gaps[0]
        assert size >= 5_000_000 and size >= 0.5 * med, (dev, size, med)
        assert len(gaps) < 2 or gaps[1][0] < 0.5 * size, "the bubble must stand out"
        assert any(a <= start <= b and p == pid_of_dev[dev] for a, b, p in syncs), \
            "the idle span must start while the CPU sits in cudaDeviceSynchronize"


def iteration_durations(g):
    per = {}
    for text, d in g.q("SELECT text, end - start FROM NVTX_EVENTS WHERE text LIKE 'train_step %'"):
        per.setdefault(int(text.rsplit(" ", 1)[1]), []).append(d)
    return {k: max(v) for k, v in per.items()}


@pytest.mark.parametrize("which", ["small", "tiny", "example"])
def test_p2_outlier_iteration(which, gendir):
    g = gen(gendir, which, "--preset", which)
    durs = iteration_durations(g)
    med = statistics.median(durs.values())
    outlier = g.summary["problems"]["outlierIteration"]
    assert outlier == len(durs) // 2
    assert durs[outlier] > 1.5 * med
    assert [k for k, d in durs.items() if d > 1.5 * med] == [outlier]


def test_p3_exposed_nccl(small):
    for dev, lst in kernels_by_device(small).items():
        nc = union([[s, e] for s, e, n in lst if n.startswith("nccl")])
        cp = union([[s, e] for s, e, n in lst if not n.startswith("nccl")])
        nccl_ns = sum(e - s for s, e in nc)
        exposed = nccl_ns - overlap(nc, cp)
        assert exposed >= 0.10 * nccl_ns, (dev, exposed, nccl_ns)
        assert exposed <= 0.60 * nccl_ns, "most NCCL time still overlaps compute"


def test_p4_launch_storm(small):
    rows = small.q("SELECT s.value, count(*), avg(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                   "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1 HAVING count(*) >= 100 "
                   "AND avg(k.end - k.start) < 10000")
    assert len(rows) >= 4
    small_share = small.one("SELECT avg(end - start < 3000) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    assert small_share >= 0.15


def test_p5_pageable_h2d(small):
    rows = small.q("SELECT m.bytes, s.value, r.end - r.start, m.end - m.start FROM CUPTI_ACTIVITY_KIND_MEMCPY m "
                   "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId=m.correlationId "
                   "AND (r.globalTid & -16777216)=m.globalPid JOIN StringIds s ON s.id=r.nameId "
                   "WHERE m.copyKind=1 AND m.srcKind=0")
    assert len(rows) == 2
    for nbytes, api, api_ns, copy_ns in rows:
        assert nbytes == 64 << 20 and api == "cudaMemcpy_v3020" and api_ns > copy_ns > 5_000_000
    assert small.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind=1 AND srcKind=1") == 10
    assert small.one("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind=2") == 10


def test_p6_hotspot(small):
    rows = small.q("SELECT s.value, sum(k.end - k.start) t FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                   "JOIN StringIds s ON s.id=k.shortName GROUP BY 1 ORDER BY t DESC")
    total = sum(t for _, t in rows)
    assert rows[0][0] == small.summary["problems"]["hotspotKernel"]
    assert rows[0][1] >= 0.35 * total
    assert rows[0][1] >= 2 * rows[1][1] or rows[1][0].startswith("nccl")


# ---------------------------------------------------------------------------------------
# against real exports of the same schema (column sets and ENUM rows)

REAL_BY_SCHEMA = {"3.25.0": "nsys2026_2gpu_nccl_before.sqlite", "3.1.2": "nsys2023_rtx3060_23k.sqlite"}


@pytest.mark.parametrize("schema", sorted(REAL_BY_SCHEMA))
def test_matches_real_export_of_same_schema(schema, gendir):
    path = PROFILES / REAL_BY_SCHEMA[schema]
    if not path.exists():
        pytest.skip(f"real profile {path} not available")
    real = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    real_tables = {r[0] for r in real.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    g = gen(gendir, "real-" + schema, "--preset", "tiny", "--schema", schema)
    assert real.execute("SELECT value FROM %s WHERE name='EXPORT_SCHEMA_VERSION'"
                        % ("META_DATA_EXPORT" if schema == "3.25.0" else "EXPORT_META_DATA")).fetchone()[0] == schema
    common = sorted(g.tables() & real_tables)
    assert "CUPTI_ACTIVITY_KIND_KERNEL" in common and "CUPTI_ACTIVITY_KIND_RUNTIME" in common
    for t in common:
        assert db_columns(g.db, t) == db_columns(real, t), t
        if t.startswith("ENUM_"):
            assert g.q(f"SELECT * FROM {t} ORDER BY id") == real.execute(f"SELECT * FROM {t} ORDER BY id").fetchall(), t
    # value shapes: serialized ids carry VM id 1, runtime names carry version suffixes
    for (gpid,) in real.execute("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        assert gpid >> 48 == 1
    names = {n for (n,) in g.q("SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id=r.nameId")}
    real_names = {n for (n,) in real.execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                                             "JOIN StringIds s ON s.id=r.nameId")}
    assert {"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaStreamSynchronize_v3020"} <= names & real_names
