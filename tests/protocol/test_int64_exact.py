"""Every integer of every reply is exact (issue 16).

Profiles generated with --epoch-clock keep absolute UTC nanosecond clocks
(~1.78e18, above 2^53, where doubles step by 256), --negative-ts ones have
events before session zero. On each, every method is called and:

* each reply is validated against its result schema with "integer" meaning
  an integer literal: the reply text is decoded with Python's json, which
  keeps integer literals as exact ints and turns any other number literal
  (1.7267511786677676e+18, 1e+15, 2.0) into a float, so a double printed
  where the schema says integer fails;
* every integer above 2^53, and every start/end below -1000, must be a
  timestamp of the profile (a start, end or timestamp of one of its rows, by
  independent SQL; or one past it, a half-open window's end), a value the
  test sent, or a zoom bucket edge: a timestamp that went through a double is
  off by up to 128 ns and is none of these;
* specific timestamps are compared with independent SQL: idle gaps, kernel
  details, finding windows, top-kernel ranges, NVTX tree ranges, params sent
  exactly (timeline/range, analysis/run, export/perfetto, nvtx/tree windows).
"""
from __future__ import annotations

import decimal
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import PROFILES, SCHEMAS, check_schema, generate, real_profiles
from nsys_rpc import RpcError, Server, server_binary

TWO_53 = 1 << 53
EVENT_COLUMNS = ("start", "end", "timestamp")
OPS = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
NOT_CALLED = {"initialize", "shutdown"}  # the lifecycle: every Server call makes them
REQUIRED = {"mfu": {"modelFlops": 1e12, "peakTflops": 100}}  # analyses' params without defaults


# ---------------------------------------------------------------------------------------
# the profile by independent SQL


class Truth:
    def __init__(self, path: Path):
        self.path = path
        self.db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        self.tables = [r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        self.timestamps: set[int] = set()
        for t in self.tables:
            cols = [r[1] for r in self.db.execute(f'PRAGMA table_info("{t}")')]
            for c in EVENT_COLUMNS:
                if c in cols:
                    self.timestamps.update(v for (v,) in self.db.execute(f'SELECT "{c}" FROM "{t}"')
                                           if isinstance(v, int))
        for t, cols in (("TARGET_INFO_SESSION_START_TIME", ("utcEpochNs",)),
                        ("ANALYSIS_DETAILS", ("startTime", "stopTime"))):
            if t in self.tables:
                for c in cols:
                    self.timestamps.update(v for (v,) in self.db.execute(f'SELECT "{c}" FROM "{t}"')
                                           if isinstance(v, int))

    def q(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def op_bounds(self, device: int) -> tuple[set[int], set[int]]:
        """(starts, ends) of the device's GPU operations."""
        starts, ends = set(), set()
        for t in OPS:
            if t in self.tables:
                for s, e in self.q(f'SELECT start, "end" FROM {t} WHERE deviceId = ?', device):
                    starts.add(s)
                    ends.add(e)
        return starts, ends

    def kernels(self, limit: int):
        return self.q('SELECT rowid, start, "end", deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL '
                      'ORDER BY start LIMIT ?', limit)


# ---------------------------------------------------------------------------------------
# the walk


def leaves(v, path=()):
    """(path, value) of every scalar of a decoded reply."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, path + (i,))
    else:
        yield path, v


def ints(v):
    """(path, value) of every integer (not bool)."""
    return ((p, x) for p, x in leaves(v) if isinstance(x, int) and not isinstance(x, bool))


def floats(v):
    return ((p, x) for p, x in leaves(v) if isinstance(x, float))


def is_time_key(path) -> bool:
    """start, end, gpuStart, ... (the last name on the path: columns are arrays)."""
    names = [p for p in path if isinstance(p, str)]
    return bool(names) and names[-1].lower().endswith(("start", "end"))


class Walk:
    """Calls methods on one server, checks every reply, remembers what it called."""

    def __init__(self, server: Server, truth: Truth):
        self.s = server
        self.truth = truth
        self.sent: set[int] = set()
        self.others: set[int] = set()  # timestamps of the other profiles opened (diff, openSet)
        self.called: set[str] = set()
        self.checked_ints = 0
        self.big_ints = 0

    def call(self, method: str, params: dict | None = None, exempt_for=None):
        """exempt_for(reply) -> (path, value) -> True for integers that need not be timestamps."""
        for _, v in ints(params or {}):
            self.sent.add(v)
        res = self.s.request(method, params, timeout=300)
        self.called.add(method)
        check_schema(method, "result", res, strict_integers=True)
        self.check_timestamps(method, res, exempt_for(res) if exempt_for else lambda path, v: False)
        return res

    def check_timestamps(self, method, res, exempt):
        known = self.truth.timestamps | self.sent | self.others
        bad = []
        for path, v in ints(res):
            self.checked_ints += 1
            if v > TWO_53 or v < -TWO_53:
                self.big_ints += 1
            # (v - 1: a half-open window's end one past the last timestamp)
            if (v > TWO_53 or (v < -1000 and is_time_key(path))) and v not in known and v - 1 not in known \
                    and not exempt(path, v):
                bad.append((path, v))
        assert not bad, f"{method}: integers that are no timestamp of the profile (rounded?): {bad[:8]}"
        # a time as a float, where the schema says nothing (items it leaves open)
        flt = [(p, v) for p, v in floats(res)
               if is_time_key(p) or (abs(v) > TWO_53 and str([x for x in p if isinstance(x, str)][-1:]).endswith("Ns']"))]
        assert not flt, f"{method}: times printed as floats: {flt[:8]}"


def bucket_aligned(res):
    """timeline/range's own window (the request's, widened to whole buckets)
    and its zoom buckets: multiples of the resolution."""
    r = res.get("resolution")

    def ok(path, v):
        return bool(r) and v % r == 0 and (len(path) == 1 or "buckets" in path)
    return ok


def walk_all(w: Walk, tmp: Path, other: Path):
    """Every method, on the profile the walk's truth reads; returns replies by name."""
    t = w.truth
    out = {}
    opened = w.call("profile/open", {"path": str(t.path)})
    pid = opened["profileId"]
    out["info"] = info = w.call("profile/info", {"profileId": pid})
    span = info["span"]
    w.call("profile/list")
    tracks = w.call("timeline/tracks", {"profileId": pid})
    assert (tracks["start"], tracks["end"]) == (span["start"], span["end"])
    # the span by SQL (docs/protocol.md: min(start)..max(end) over the timed tables)
    lo = min(v for (v,) in t.q("SELECT min(start) FROM (SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL "
                                "UNION ALL SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL "
                                "SELECT start FROM NVTX_EVENTS UNION ALL SELECT start FROM CUPTI_ACTIVITY_KIND_MEMCPY "
                                "UNION ALL SELECT start FROM CUPTI_ACTIVITY_KIND_MEMSET)"))
    assert span["start"] == lo
    for fmt in ("objects", "columns"):
        w.call("timeline/range", {"profileId": pid, "start": span["start"], "end": span["end"], "width": 400,
                                  "format": fmt}, exempt_for=bucket_aligned)
    # exact windows (items with start < end and end >= start of the request):
    # one nanosecond decides, where a double steps by 256
    kid, ks, ke, kdev, kstream = t.kernels(40)[-1]
    track = f"gpu:{kdev}:{kstream}"
    for a, b, inside in ((ks, ks + 1, True), (ke, ke + 1, True), (ke + 1, ke + 2, False), (ks - 1, ks, False)):
        for fmt in ("objects", "columns"):
            r = w.call("timeline/range", {"profileId": pid, "start": a, "end": b, "width": 10, "format": fmt,
                                          "tracks": [track], "maxEvents": 100000}, exempt_for=bucket_aligned)
            ev = r["tracks"][0]["events"]
            starts = ev["start"] if fmt == "columns" else [e["start"] for e in ev]
            ends = ev["end"] if fmt == "columns" else [e["end"] for e in ev]
            assert ((ks, ke) in zip(starts, ends)) == inside, (fmt, a - ks, b - ks, list(zip(starts, ends))[:4])
            if inside and fmt == "objects":
                kernel_id = next(e["id"] for e in ev if (e["start"], e["end"]) == (ks, ke))
    # kernel/details: the row's own start and end
    det = w.call("kernel/details", {"profileId": pid, "kernelId": kernel_id})
    assert det["rowid"] == kid and det["kind"] == "kernel"
    row = t.q(f'SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_{det["kind"].upper()} WHERE rowid = ?', det["rowid"])
    assert (det["start"], det["end"]) == row[0]
    assert det["durNs"] == row[0][1] - row[0][0]
    for n in det.get("nvtxPath") or []:
        assert n["start"] in t.timestamps and n["end"] in t.timestamps
    out["tree"] = tree = w.call("nvtx/tree", {"profileId": pid})
    w.call("nvtx/tree", {"profileId": pid, "start": ks, "end": span["end"], "aggregate": True})
    nodes = 0
    stack = list(tree.get("roots") or tree.get("nodes") or [])
    while stack:
        n = stack.pop()
        nodes += 1
        if "start" in n and "end" in n and not n.get("instances"):
            assert (n["start"], n["end"]) in set(t.q('SELECT start, "end" FROM NVTX_EVENTS')) or \
                n["start"] in t.timestamps
        stack.extend(n.get("children") or [])
    w.call("search", {"profileId": pid, "query": "gemm"})
    w.call("search", {"profileId": pid, "query": "*", "kinds": ["kernel", "nvtx"], "limit": 50})
    # search's instances: the rows' own start and end, from a time given exactly
    inst = w.call("search", {"profileId": pid, "query": "*", "instances": 200, "at": ks})["instances"]
    assert inst["items"] and inst["items"][0]["start"] >= ks
    for it in inst["items"]:
        assert it["start"] in t.timestamps and it["end"] in t.timestamps
    w.call("export/perfetto", {"profileId": pid, "path": str(tmp / "trace.json")})
    w.call("export/perfetto", {"profileId": pid, "path": str(tmp / "trace2.json"), "start": ks, "end": ke})
    # the trace's microseconds since the span's start keep every nanosecond
    perfetto = json.loads((tmp / "trace.json").read_text(), parse_float=decimal.Decimal)
    ts = [e["ts"] for e in perfetto["traceEvents"] if "ts" in e]
    assert ts
    for v in ts:
        ns = decimal.Decimal(v) * 1000 + span["start"]
        assert ns == int(ns) and int(ns) in t.timestamps, v
    # every analysis, with its defaults and over an exact window
    names = [a["name"] for a in w.call("analysis/list")["analyses"]]
    out["analyses"] = {}
    for name in names:
        res = w.call("analysis/run", {"profileId": pid, "name": name, "params": REQUIRED.get(name, {})})
        out["analyses"][name] = res
        if name in ("gpu_idle_gaps", "top_kernels", "overlap_breakdown", "iteration_timing"):
            win = w.call("analysis/run", {"profileId": pid, "name": name,
                                          "params": {"start": ks, "end": span["end"] - 1}})
            assert (win["window"]["start"], win["window"]["end"]) == (ks, span["end"] - 1)
            assert (win["params"]["start"], win["params"]["end"]) == (ks, span["end"] - 1)
    out["report"] = w.call("report/generate", {"profileId": pid})
    w.call("report/generate", {"profileId": pid, "format": "markdown"})
    w.others = Truth(other).timestamps
    other_id = w.call("profile/open", {"path": str(other)})["profileId"]
    w.call("profile/diff", {"base": pid, "compare": other_id})
    st = w.call("profile/openSet", {"paths": [str(t.path), str(other)]})
    w.call("set/collectives", {"setId": st["setId"]})
    w.call("set/stragglers", {"setId": st["setId"]})
    w.call("set/nccl", {"setId": st["setId"]})
    sums = w.call("set/summarize", {"path": str(t.path)})["summaries"]
    w.call("set/close", {"setId": w.call("set/reduce", {"summaries": sums})["setId"]})
    w.call("set/close", {"setId": st["setId"]})
    w.call("kernel/explain", {"profileId": pid, "kernelId": kernel_id})
    w.call("kernel/explain", {"profileId": pid, "name": "gemm"})
    w.call("agent/ask", {"profileId": pid, "question": "why is the GPU idle?", "llm": False})
    w.call("agent/configure", {"enabled": False})
    q = w.call("profile/query", {"profileId": pid, "sql": "SELECT min(start) AS s, max(end) AS e, count(*) AS n "
                                                          "FROM CUPTI_ACTIVITY_KIND_KERNEL"})
    assert q["rows"][0][0] in w.truth.timestamps and q["rows"][0][1] in w.truth.timestamps
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "train.py").write_text("def train_step(batch):\n    x = 1\n    return x\n")
    w.call("source/map", {"profileId": pid, "workspaceRoot": str(ws)})
    w.call("source/kernelsAt", {"profileId": pid, "file": "train.py", "line": 1, "workspaceRoot": str(ws)})
    w.call("source/locate", {"profileId": pid, "kernelId": kernel_id, "workspaceRoot": str(ws)})
    w.call("source/refine", {"profileId": pid, "workspaceRoot": str(ws)})
    w.call("source/annotate", {"file": "train.py", "workspaceRoot": str(ws), "includeText": True})
    w.call("source/unannotate", {"file": "train.py", "workspaceRoot": str(ws), "includeText": True})
    out["doctor"] = w.call("profile/doctor", {"profileId": pid})
    wall = lambda res: lambda path, v: "createdNs" in path  # noqa: E731 (the history's UTC wall clock)
    w.call("runs/record", {"workspaceRoot": str(ws), "report": str(t.path), "note": "n"}, exempt_for=wall)
    w.call("runs/record", {"workspaceRoot": str(ws), "report": str(other)}, exempt_for=wall)
    w.call("runs/note", {"workspaceRoot": str(ws), "run": "r1", "text": "t"}, exempt_for=wall)
    w.call("runs/get", {"workspaceRoot": str(ws), "run": "latest"}, exempt_for=wall)
    w.call("runs/list", {"workspaceRoot": str(ws)}, exempt_for=wall)
    w.call("runs/compare", {"workspaceRoot": str(ws), "before": "r1", "after": "r2"}, exempt_for=wall)
    w.call("profile/close", {"profileId": other_id})
    w.call("profile/close", {"profileId": pid})
    return out


# ---------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def epoch(generated_dir) -> Path:
    return generate(generated_dir / "epoch.sqlite", "--preset", "small", "--epoch-clock", "--source-tags")


@pytest.fixture(scope="module")
def epoch2(generated_dir) -> Path:
    return generate(generated_dir / "epoch-seed2.sqlite", "--preset", "small", "--epoch-clock", "--seed", "2")


@pytest.fixture(scope="module")
def negative(generated_dir) -> Path:
    return generate(generated_dir / "negative.sqlite", "--preset", "small", "--negative-ts")


@pytest.fixture(scope="module")
def epoch_walk(epoch, epoch2, cache_dir, tmp_path_factory):
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir), "NSYS_AI_LLM": "off"})
    try:
        w = Walk(s, Truth(epoch))
        out = walk_all(w, tmp_path_factory.mktemp("epoch"), epoch2)
        yield w, out
    finally:
        s.close()


# ---------------------------------------------------------------------------------------
# tests


def all_methods() -> set[str]:
    return {p.name[: -len(".result.json")].replace(".", "/") for p in SCHEMAS.glob("*.result.json")}


def test_every_method_exact_on_epoch_clock(epoch_walk):
    w, _ = epoch_walk
    assert all_methods() - NOT_CALLED - w.called == set()
    # the walk saw the clock: thousands of integers above 2^53
    assert w.big_ints > 1000, w.big_ints


def test_idle_gaps_are_op_boundaries(epoch_walk):
    w, out = epoch_walk
    rows = out["analyses"]["gpu_idle_gaps"]["rows"]
    assert rows
    for r in rows:
        starts, ends = w.truth.op_bounds(r["device"])
        assert r["start"] in ends and r["end"] in starts, r
        assert r["durationNs"] == r["end"] - r["start"]


def test_findings_windows_exact(epoch_walk):
    w, out = epoch_walk
    findings = out["report"]["findings"]
    assert findings
    span = out["info"]["span"]
    for f in findings:
        win = f["evidence"]["window"]
        assert span["start"] <= win["start"] <= win["end"] <= span["end"], f["id"]
        assert win["start"] in w.truth.timestamps and win["end"] in w.truth.timestamps, (f["id"], win)


def test_top_kernels_exact(epoch_walk):
    """Counts and total times per kernel name as SQL sums them (ends minus
    starts of epoch-clock rows: exact only in integers)."""
    w, out = epoch_walk
    top = out["analyses"]["top_kernels"]
    assert (top["window"]["start"], top["window"]["end"]) == (out["info"]["span"]["start"], out["info"]["span"]["end"])
    want = {name: (n, ns) for name, n, ns in w.truth.q(
        'SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k '
        'JOIN StringIds s ON s.id = k.shortName GROUP BY s.value')}
    assert top["rows"]
    for r in top["rows"]:
        assert (r["count"], r["totalNs"]) == want[r["name"]], r["name"]


def test_params_beyond_2_53_are_exact(epoch_walk, epoch, cache_dir):
    """Integers in requests keep their digits; non-integers are still refused."""
    w, out = epoch_walk
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        pid = s.request("profile/open", {"path": str(epoch)})["profileId"]
        span = out["info"]["span"]
        odd = span["start"] + 1 if span["start"] % 2 == 0 else span["start"] + 2  # not a double
        assert float(odd) != odd
        res = s.request("analysis/run", {"profileId": pid, "name": "gpu_idle_gaps", "params": {"start": odd}})
        assert res["window"]["start"] == odd and res["params"]["start"] == odd
        # the same number as a string option (the CLI's --param); a literal with an
        # exponent is the integer it writes (1.7797823316767524e+18 is ...752400)
        for v in (str(odd), float(odd)):
            r2 = s.request("analysis/run", {"profileId": pid, "name": "gpu_idle_gaps", "params": {"start": v}})
            want = odd if isinstance(v, str) else int(decimal.Decimal(json.dumps(v)))
            assert r2["window"]["start"] == want
        # literals as the client wrote them (json.dumps would round 1779...435.5)
        for bad, word in ((f"{span['start']}.5", "expected an integer"), ("1e30", "must be between"),
                          ("9223372036854775808", "must be between"), ('"x"', "expected an integer"),
                          (f"{span['start']}.0", None), (f"{span['start'] // 10}.5e1", None)):
            rid = s.next_id()
            body = ('{"jsonrpc":"2.0","id":%d,"method":"timeline/range","params":{"profileId":"%s","start":%s,'
                    '"end":%d,"width":10,"maxEvents":0}}' % (rid, pid, bad, span["end"])).encode()
            s.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            reply = s.wait_reply(rid)
            if word is None:  # integers written with a fraction or an exponent: exact too
                assert reply["result"]["start"] <= span["start"] < reply["result"]["start"] + reply["result"]["resolution"]
            else:
                assert reply["error"]["code"] == -32602 and word in reply["error"]["message"], (bad, reply)
        with pytest.raises(RpcError) as e:
            s.request("analysis/run", {"profileId": pid, "name": "gpu_idle_gaps", "params": {"start": 1.5}})
        assert e.value.code == -32602
        # a request id beyond 2^53 is not rounded into another id
        body = b'{"jsonrpc":"2.0","id":9007199254740993,"method":"profile/list"}'
        s.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        errs = s.wait_null_id_errors(1)
        assert errs[-1]["error"]["code"] == -32600
    finally:
        s.close()


def test_cli_json_exact(epoch, cache_dir):
    """--format json prints the RPC result, digits included."""
    truth = Truth(epoch)
    env = {"NSYS_AI_CACHE_DIR": str(cache_dir), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([server_binary(), "analyze", "gpu_idle_gaps", str(epoch), "--format", "json"],
                         check=True, capture_output=True, text=True, env=env)
    doc = json.loads(res.stdout)
    assert not list(floats(doc["rows"])) and not list(floats(doc["window"]))
    for r in doc["rows"]:
        starts, ends = truth.op_bounds(r["device"])
        assert r["start"] in ends and r["end"] in starts
    ks, ke = truth.kernels(20)[-1][1:3]
    res = subprocess.run([server_binary(), "timeline", str(epoch), "--start", str(ks), "--end", str(ke),
                          "--width", "10", "--format", "json"], check=True, capture_output=True, text=True, env=env)
    doc = json.loads(res.stdout)
    assert not list(floats(doc))
    got = {(e["start"], e["end"]) for t in doc["tracks"] for e in t["events"]}
    assert (ks, ke) in got
    # `call` parses its params exactly; `--param` too
    res = subprocess.run([server_binary(), "call", "timeline/range",
                          '{"start":%d,"end":%d,"width":10,"maxEvents":100000}' % (ke + 1, ke + 2), "--profile",
                          str(epoch)], check=True, capture_output=True, text=True, env=env)
    doc = json.loads(res.stdout)
    assert (ks, ke) not in {(e["start"], e["end"]) for t in doc["tracks"] for e in t["events"]}
    res = subprocess.run([server_binary(), "analyze", "gpu_idle_gaps", str(epoch), "--param", f"start={ks + 1}",
                          "--format", "json"], check=True, capture_output=True, text=True, env=env)
    assert json.loads(res.stdout)["window"]["start"] == ks + 1


def test_every_method_on_negative_ts(negative, cache_dir, tmp_path, small_profile):
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        t = Truth(negative)
        w = Walk(s, t)
        out = walk_all(w, tmp_path, small_profile)
        assert all_methods() - NOT_CALLED - w.called == set()
        lo = min(t.timestamps)
        assert lo < 0 and out["info"]["span"]["start"] == lo
        # the NVTX tree holds the ranges that began before session zero
        neg = {(a, b) for a, b in t.q('SELECT start, "end" FROM NVTX_EVENTS WHERE start < 0 AND "end" IS NOT NULL')}
        assert neg
        seen = set()
        stack = list(out["tree"].get("roots") or out["tree"].get("nodes") or [])
        while stack:
            n = stack.pop()
            if "start" in n:
                seen.add((n["start"], n["end"]))
            stack.extend(n.get("children") or [])
        assert neg & seen
    finally:
        s.close()


def event_clock_range(path: Path) -> tuple[int, int] | None:
    """min and max start of the events nsys-ai indexes, by SQL (None: none)."""
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    lo = hi = None
    for t in OPS + ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        if t in tables:
            a, b = db.execute(f"SELECT min(start), max(start) FROM {t}").fetchone()
            if a is not None:
                lo = a if lo is None else min(lo, a)
                hi = b if hi is None else max(hi, b)
    db.close()
    return None if lo is None else (lo, hi)


def test_real_exports_session_start_exact(cache_dir):
    """Every real export's utcEpochNs (~1.7e18) as SQL has it, and openSet's
    offsets (differences of them) exact."""
    profs = real_profiles()
    if not profs:
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        utc = {}
        for p in profs:
            db = sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True)
            try:
                want = db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
            except sqlite3.Error:
                want = None
            db.close()
            try:
                pid = s.request("profile/open", {"path": str(p)})["profileId"]
            except RpcError:
                continue  # not a profile nsys-ai opens (tests/protocol/test_profile_real.py)
            info = s.request("profile/info", {"profileId": pid})
            check_schema("profile/info", "result", info, strict_integers=True)
            assert info["utcEpochNs"] == want, p.name
            if want:
                utc[p] = want
            s.request("profile/close", {"profileId": pid})
        assert len(utc) >= 2
        a, b = sorted(utc, key=utc.get)[:2]
        st = s.request("profile/openSet", {"paths": [str(b), str(a)]})
        check_schema("profile/openSet", "result", st, strict_integers=True)
        assert st["aligned"]
        got = {Path(f["path"]).name: (f["utcEpochNs"], f["offsetNs"]) for f in st["files"]}
        assert got == {a.name: (utc[a], 0), b.name: (utc[b], utc[b] - utc[a])}
    finally:
        s.close()


def test_real_exports_with_large_or_negative_clocks(cache_dir):
    """The walk on the real exports whose event clocks exceed 2^53 (none known
    so far) or start before session zero."""
    profs = real_profiles()
    if not profs:
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    large, negative = [], []
    for p in profs:
        r = event_clock_range(p)
        if r and (r[1] > TWO_53 or r[0] < -TWO_53):
            large.append(p)
        elif r and r[0] < 0:
            negative.append(p)
    if not large and not negative:
        pytest.skip(f"no real export in {PROFILES} has event clocks above 2^53 or before session zero")
    for path in large + negative:
        t = Truth(path)
        s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
        try:
            w = Walk(s, t)
            pid = w.call("profile/open", {"path": str(path)})["profileId"]
            span = w.call("profile/info", {"profileId": pid})["span"]
            assert span["start"] == event_clock_range(path)[0] or span["start"] < 0, path.name
            w.call("timeline/tracks", {"profileId": pid})
            w.call("timeline/range", {"profileId": pid, "start": span["start"], "end": span["end"], "width": 200},
                   exempt_for=bucket_aligned)
            w.call("nvtx/tree", {"profileId": pid})
            for a in w.call("analysis/list")["analyses"]:
                try:
                    w.call("analysis/run", {"profileId": pid, "name": a["name"], "params": REQUIRED.get(a["name"], {})})
                except RpcError as e:
                    assert e.code != -32603, (path.name, a["name"], e.message)
            w.call("report/generate", {"profileId": pid})
        finally:
            s.close()
