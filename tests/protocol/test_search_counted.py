"""search's counts, totals and pages from the per-name index are counted, not visited
(index/search_index.c: prefix sums over each name's start and end orders; index/search_page.c:
the page by rank, selection and merge): they must say what the scan says (a second server with
NSYS_AI_SEARCH_INDEX=0) byte for byte, and what independent SQL says, on the shapes that break
counting: zero-length instances on window edges and several sharing a start (ties by id);
many nested instances spanning the window's start, paged into (offsets inside them, at their
end, past everything; `at` before the window, inside it, after it); negative timestamps and
epoch clocks; and unwindowed searches, which read the index once a windowed search built it."""
from __future__ import annotations

import json
import shutil
import sqlite3
from collections import defaultdict

import pytest

from conftest import check_schema, generate
from nsys_rpc import Server
from test_search_instances import matcher
from test_search_window import ask, servers, sql_matches, windows  # noqa: F401 (servers: the fixture)
from test_timeline_sqlref import connect

SPAN = 1500  # nested kernels spanning the middle of the run
ZERO = 3000  # zero-length kernels, three to a start


def add_kernels(src, out, rows):
    """A copy of src with kernels (name, start, end, stream) added, each a copy of src's first
    kernel row with those columns (and no correlation)."""
    if out.exists():
        return out
    tmp = out.with_suffix(".tmp")
    shutil.copy(src, tmp)
    db = sqlite3.connect(tmp)
    k = "CUPTI_ACTIVITY_KIND_KERNEL"
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({k})")]
    template = dict(zip(cols, db.execute(f"SELECT * FROM {k} ORDER BY rowid LIMIT 1").fetchone()))
    sid = {}
    for name, *_ in rows:
        if name not in sid:
            sid[name] = db.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
            db.execute("INSERT INTO StringIds(id, value) VALUES (?, ?)", (sid[name], name))
    values = []
    for name, s, e, stream in rows:
        r = dict(template, start=s, end=e, streamId=stream, shortName=sid[name], demangledName=sid[name],
                 correlationId=None)
        if "mangledName" in r:
            r["mangledName"] = None
        values.append([r[c] for c in cols])
    db.executemany(f'INSERT INTO {k}({", ".join(chr(34) + c + chr(34) for c in cols)}) '
                   f'VALUES ({", ".join("?" * len(cols))})', values)
    db.commit()
    db.close()
    tmp.rename(out)
    return out


def edges_profile(generated_dir):
    """tiny (autograd + nested NVTX), plus SPAN nested 'span_kernel's around the middle of the run
    (stream 4244) and ZERO zero-length 'zero_kernel's, three to a start, 10 ns apart (stream 4243)."""
    src = generate(generated_dir / "search-autograd.sqlite", "--preset", "tiny", "--shape", "autograd,nvtx-deep")
    with connect(src) as db:
        lo, hi = db.execute('SELECT min(start), max("end") FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()
    mid = (lo + hi) // 2
    rows = [("span_kernel", mid - 1000 - 7 * i, mid + 1000 + 11 * i, 4244) for i in range(SPAN)]
    rows += [("zero_kernel", mid - 5000 + 10 * (i // 3), mid - 5000 + 10 * (i // 3), 4243) for i in range(ZERO)]
    return add_kernels(src, generated_dir / "search-edges.sqlite", rows), mid


def sql_kernel_totals(path, query, lo, hi):
    """short name -> (count, total ns) of the kernels matching query (short or demangled name)
    that overlap [lo, hi)."""
    match = matcher(query)
    out = defaultdict(lambda: [0, 0])
    with connect(path) as db:
        strings = dict(db.execute("SELECT id, value FROM StringIds"))
        for sn, dn, s, e in db.execute('SELECT shortName, demangledName, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL'):
            e = max(e, s)
            if s < hi and e >= lo and (match(strings[sn]) or match(strings[dn])):
                out[strings[sn]][0] += 1
                out[strings[sn]][1] += e - s
    return {k: tuple(v) for k, v in out.items()}


def pages(matches, lo, hi):
    """Pages at every depth: the start, inside and at the end of the spanning instances, the
    last ones, past the end; `at` before the window, at its edges, inside, after it."""
    offs = sorted({0, 1, 2, SPAN // 2, SPAN - 1, SPAN, SPAN + 1, matches // 2, max(matches - 3, 0), matches,
                   matches + 4})
    out = [{"instances": 7, "offset": o} for o in offs] + [{"instances": 250, "offset": SPAN - 100}]
    out += [{"instances": 5, "at": t} for t in (lo - 10 ** 6, lo - 1, lo, (lo + hi) // 2, hi - 1, hi, hi + 10 ** 6)]
    return out


def compare(servers, path, wins, queries, sql_queries=()):
    idx, scan = servers
    pi = idx.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    ps = scan.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    checked = 0
    for lo, hi in wins + [(None, None)]:  # last: unwindowed, from the index the windows built
        for q, kinds in queries:
            base = {"query": q, "limit": 500, **({"kinds": kinds} if kinds else {})}
            if lo is not None:
                base.update(start=lo, end=hi)
            first = ask(idx, {"profileId": pi, **base})
            assert json.dumps(first) == json.dumps(ask(scan, {"profileId": ps, **base})), (path.name, q, lo, hi)
            for extra in pages(first["matches"], *((lo, hi) if lo is not None else (-2 ** 60, 2 ** 60))):
                a = ask(idx, {"profileId": pi, **base, **extra})
                b = ask(scan, {"profileId": ps, **base, **extra})
                assert json.dumps(a) == json.dumps(b), (path.name, q, kinds, lo, hi, extra)
                checked += 1
            if q in sql_queries:
                w = (lo, hi) if lo is not None else (-2 ** 63, 2 ** 63 - 1)
                ref = [x for x in sql_matches(path, q) if x[0] < w[1] and x[1] >= w[0]]
                r = ask(idx, {"profileId": pi, **base, "instances": 10000})
                if checked < 20:
                    check_schema("search", "result", r, strict_integers=True)
                assert r["matches"] == r["instances"]["total"] == len(ref), (q, lo, hi)
                assert [(i["start"], i["end"]) for i in r["instances"]["items"]] == ref[:10000], (q, lo, hi)
                totals = {x["name"]: (x["count"], x["totalNs"]) for x in r["results"] if x["kind"] == "kernel"}
                assert totals == sql_kernel_totals(path, q, *w), (q, lo, hi)
    assert checked > 0


def test_spanning_and_zero_length_edges(servers, generated_dir):
    path, mid = edges_profile(generated_dir)
    z0 = mid - 5000  # the first zero-length kernels' time
    wins = [(mid, mid + 1), (mid - 500, mid + 500), (mid + 999, mid + 1000), (mid - 1, mid), (mid + 5000, mid + 9000),
            (z0, z0 + 1), (z0 - 1, z0), (z0 + 10, z0 + 20), (z0 + 5, z0 + 15), (z0 - 3000, mid + 3000)]
    wins += windows(path, 1, 7)[-2:]
    compare(servers, path, wins, [("span_kernel", None), ("zero_kernel", None), ("_kernel", None),
                                  ("*", ["kernel", "nvtx", "memcpy", "memset", "api"])],
            sql_queries=("span_kernel", "zero_kernel", "_kernel"))
    idx, _ = servers
    pid = idx.request("profile/open", {"path": str(path)})["profileId"]
    r = idx.request("search", {"profileId": pid, "query": "span_kernel", "start": mid, "end": mid + 1, "instances": 3,
                               "offset": SPAN - 1})
    assert r["matches"] == SPAN and len(r["instances"]["items"]) == 1
    r = idx.request("search", {"profileId": pid, "query": "zero_kernel", "start": z0, "end": z0 + 1, "instances": 5})
    assert r["matches"] == 3 and [i["start"] for i in r["instances"]["items"]] == [z0] * 3


@pytest.mark.parametrize("clock", ["--negative-ts", "--epoch-clock"])
def test_clocks(servers, generated_dir, clock):
    path = generate(generated_dir / f"search-tiny{clock}.sqlite", "--preset", "tiny", clock)
    compare(servers, path, windows(path, 3, 8), [("gemm", None), ("*", ["kernel", "nvtx", "memcpy", "memset", "api"])],
            sql_queries=("gemm",))


def test_concurrent_first_searches_and_cancel(servers, generated_dir, cache_dir):
    """A fresh server asked many windowed searches at once (they race to build the index: one
    builds, the others wait for it), one of them cancelled: every answer is the scan's or, for the
    cancelled one, -32800; nothing half-built stays (the requests after agree too)."""
    path, mid = edges_profile(generated_dir)
    _, scan = servers
    ps = scan.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
    asks = [{"query": q, "start": mid - w, "end": mid + w, "instances": 50, "offset": o,
             "kinds": ["kernel", "nvtx", "api"]}
            for q, w, o in [("_kernel", 10, 0), ("span_kernel", 3000, 700), ("*", 10 ** 6, 5), ("a", 100, 1)]] * 3
    with Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)}) as fresh:
        pid = fresh.request("profile/open", {"path": str(path)}, timeout=300)["profileId"]
        ids = [fresh.start("search", {"profileId": pid, **a}) for a in asks]
        fresh.notify("$/cancelRequest", {"id": ids[1]})
        for rid, a in zip(ids, asks):
            reply = fresh.wait_reply(rid, 120)
            want = ask(scan, {"profileId": ps, **a})
            if rid == ids[1] and "error" in reply:
                assert reply["error"]["code"] == -32800, reply
            else:
                assert json.dumps(reply["result"]) == json.dumps(want), a
        for a in asks[:4]:
            assert json.dumps(ask(fresh, {"profileId": pid, **a})) == json.dumps(ask(scan, {"profileId": ps, **a}))
