"""search with a window (`start`/`end`: what the timelines ask on every view change) is answered
from the per-name instance index (index/search_index.c) and must say exactly what the unindexed
scan says (a second server with NSYS_AI_SEARCH_INDEX=0), byte for byte: results, counts, totals,
demangled examples, instances pages by offset and by `at`, for every kind; and what independent
SQL says. Shapes: the small preset; a derived profile with one kernel spanning the whole run among
tiny ones (skewed durations) and a name with 20k instances on one stream; NVTX-heavy autograd
ranges; real exports (skipped when /work/shared/profiles is absent)."""
from __future__ import annotations

import json
import random
import shutil
import sqlite3

import pytest

from conftest import check_schema, generate, real_path
from nsys_rpc import Server
from test_search_instances import matcher
from test_timeline_sqlref import connect, nvtx_ranges, tables

DENSE = 20_000


@pytest.fixture(scope="module")
def servers(cache_dir):
    idx = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    scan = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir), "NSYS_AI_SEARCH_INDEX": "0"})
    yield idx, scan
    idx.close()
    scan.close()


def skewed(generated_dir):
    """small, plus one huge kernel (the first one, now ending after everything) and DENSE
    1-3 ns kernels named 'dense_kernel' 3 ns apart on a stream of their own."""
    out = generated_dir / "search-skewed.sqlite"
    if out.exists():
        return out
    src = generate(generated_dir / "small.sqlite", "--preset", "small")
    tmp = out.with_suffix(".tmp")
    shutil.copy(src, tmp)
    db = sqlite3.connect(tmp)
    k = "CUPTI_ACTIVITY_KIND_KERNEL"
    lo, hi = db.execute(f'SELECT min(start), max("end") FROM {k}').fetchone()
    db.execute(f'UPDATE {k} SET "end" = ? WHERE rowid = (SELECT min(rowid) FROM {k})', (hi + 1000,))
    sid = db.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
    db.execute("INSERT INTO StringIds(id, value) VALUES (?, 'dense_kernel')", (sid,))
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({k})")]
    repl = {"start": "? + 3 * i", "end": "? + 3 * i + 1 + i % 3", "streamId": "4242", "shortName": "?",
            "demangledName": "?", "mangledName": "NULL", "correlationId": "NULL"}
    sel = ", ".join(repl.get(c, f'k."{c}"') for c in cols)
    args = [a for c in cols if c in repl and "?" in repl[c]
            for a in ((lo,) if c in ("start", "end") else (sid,))]
    db.execute(f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {DENSE - 1}) "
               f'INSERT INTO {k}({", ".join(chr(34) + c + chr(34) for c in cols)}) SELECT {sel} FROM n, '
               f"(SELECT * FROM {k} ORDER BY rowid LIMIT 1) k", args)
    db.commit()
    db.close()
    tmp.rename(out)
    return out


def sql_matches(path, query):
    """(start, end) of every kernel (short or demangled name) and NVTX range matching query."""
    match = matcher(query)
    out = []
    with connect(path) as db:
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        kernels = db.execute('SELECT shortName, demangledName, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL') \
            if "CUPTI_ACTIVITY_KIND_KERNEL" in tables(db) else []
        for sn, dn, s, e in kernels:
            if match(strings[sn]) or match(strings[dn]):
                out.append((s, max(e, s)))
        out += [(s, e) for _, s, e, nm in nvtx_ranges(db) if match(nm)]
    return sorted(out)


def windows(path, n, seed):
    """Whole run, outside it, instance edges (end == start of a window: `end >= start` counts),
    and n random windows from 1 ns to the whole run."""
    with connect(path) as db:
        table = "CUPTI_ACTIVITY_KIND_KERNEL" if "CUPTI_ACTIVITY_KIND_KERNEL" in tables(db) else "NVTX_EVENTS"
        lo, hi = db.execute(f'SELECT min(start), max("end") FROM {table}').fetchone()
        edges = [r for r in db.execute(f'SELECT start, "end" FROM {table} WHERE "end" > start ORDER BY rowid LIMIT 3')]
    rnd = random.Random(seed)
    out = [(lo, hi + 1), (lo - 10 ** 6, lo), (hi + 1, hi + 10 ** 6), (lo - 5, lo + 5)]
    for s, e in edges:
        out += [(e, e + 1), (s - 1, s), (s, e + 1)]
    for _ in range(n):
        w = max(1, int((hi - lo) ** rnd.random()))
        c = rnd.randint(lo, hi)
        out.append((c - w // 2, c - w // 2 + w))
    return out


QUERIES = [("gemm", None), ("*", ["kernel", "nvtx", "memcpy", "memset", "api"]), ("dense_kernel", None),
           ("*layer*", ["nvtx"]), ("cuda", ["api"]), ("[CUDA mem*", ["memcpy", "memset"]), ("nccl", None),
           ("aten::*", ["nvtx", "kernel"])]


def ask(server, params):
    """search's result without the per-reply schema check (thousands of replies here; the
    schema is checked once per profile below)."""
    reply = server.wait_reply(server.start("search", params), 120)
    assert "error" not in reply, reply
    return reply["result"]


def compare(servers, path, wins, queries, sql_queries=()):
    idx, scan = servers
    pi = idx.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    ps = scan.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    refs = {q: sql_matches(path, q) for q in sql_queries}
    seen, seen_sql = 0, False
    for lo, hi in wins:
        for q, kinds in queries:
            base = {"query": q, "limit": 500, "start": lo, "end": hi, **({"kinds": kinds} if kinds else {})}
            for extra in ({}, {"instances": 200}, {"instances": 7, "offset": 150}, {"instances": 3, "at": (lo + hi) // 2}):
                a = ask(idx, {"profileId": pi, **base, **extra})
                b = ask(scan, {"profileId": ps, **base, **extra})
                assert json.dumps(a) == json.dumps(b), (path.name, q, kinds, lo, hi, extra)
                seen += a["matches"]
            if q in refs:
                ref = [x for x in refs[q] if x[0] < hi and x[1] >= lo]
                r = ask(idx, {"profileId": pi, **base, "instances": 10000})
                if not seen_sql:
                    check_schema("search", "result", r, strict_integers=True)
                    seen_sql = True
                assert r["matches"] == r["instances"]["total"] == len(ref), (q, lo, hi)
                assert [(i["start"], i["end"]) for i in r["instances"]["items"]] == ref[:10000], (q, lo, hi)
    assert seen > 0, "the windows found something"


def test_window_small_matches_scan_and_sql(servers, generated_dir):
    path = generate(generated_dir / "small.sqlite", "--preset", "small")
    compare(servers, path, windows(path, 30, 1), QUERIES, sql_queries=("gemm", "nccl"))


def test_window_skewed_and_dense_name(servers, generated_dir):
    path = skewed(generated_dir)
    wins = windows(path, 12, 2)
    with connect(path) as db:  # windows inside the dense run: the huge kernel overlaps every one
        d = db.execute("SELECT min(start), max(\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE streamId = 4242").fetchone()
    wins += [(d[0] + 1000 * k, d[0] + 1000 * k + 37) for k in range(5)] + [(d[0], d[1] + 1)]
    compare(servers, path, wins, QUERIES, sql_queries=("dense_kernel", "gemm"))
    idx, _ = servers
    pid = idx.request("profile/open", {"path": str(path)})["profileId"]
    r = idx.request("search", {"profileId": pid, "query": "dense_kernel", "start": d[0], "end": d[1] + 1})
    assert r["matches"] == DENSE


def test_window_nvtx_heavy(servers, generated_dir):
    path = generate(generated_dir / "search-autograd.sqlite", "--preset", "tiny", "--shape", "autograd,nvtx-deep")
    compare(servers, path, windows(path, 25, 3), QUERIES, sql_queries=("aten::*", "block_1*"))


@pytest.mark.parametrize("name,query", [("nsys2024_a100_lm_nvtx.sqlite", "gemm"),
                                        ("nsys2026_2gpu_nccl_before.sqlite", "nccl"),
                                        ("nsys2022_nvtx_only_negative_ts.sqlite", "exec")])
def test_window_real_exports(servers, name, query):
    path = real_path(name)  # skips with a message when the real exports are absent
    compare(servers, path, windows(path, 12, 4), [(query, None), ("*", ["kernel", "nvtx", "memcpy", "memset", "api"])],
            sql_queries=(query,))
