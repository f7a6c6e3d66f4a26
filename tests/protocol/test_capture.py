"""Capture: profile/doctor's rules on generated, SQL-broken and real captures;
the run history (runs/*) under concurrent writers and a killed writer."""
from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, check_schema, generate, need_real
from nsys_rpc import Server, server_binary

GPU_FIXTURES = REPO / "tests" / "fixtures" / "gpu"


class CallError(Exception):
    def __init__(self, code: int, stderr: str):
        super().__init__(f"exit {code}: {stderr}")
        self.code, self.stderr = code, stderr


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([server_binary(), *args], capture_output=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})


def call(method: str, params: dict, profile: Path | None = None) -> dict:
    cmd = ["call", method, json.dumps(params)] + (["--profile", str(profile)] if profile else [])
    r = cli(*cmd)
    if r.returncode != 0:
        raise CallError(r.returncode, r.stderr.decode(errors="replace"))
    res = json.loads(r.stdout)
    check_schema(method, "result", res)
    return res


def doctor(path: Path) -> dict:
    return call("profile/doctor", {"profileId": "p1"}, path)


def rules(d: dict) -> set[str]:
    return {f["rule"] for f in d["findings"]}


def broken_copy(src: Path, dst: Path, *sql: str) -> Path:
    shutil.copy(src, dst)
    con = sqlite3.connect(dst)
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()
    return dst


# ---------------------------------------------------------------- doctor on generated profiles

@pytest.fixture(scope="module")
def small(generated_dir) -> Path:
    return generate(generated_dir / "small.sqlite", "--preset", "small")


def test_doctor_generated_is_healthy(small):
    d = doctor(small)
    facts = d["facts"]
    con = sqlite3.connect(f"file:{small}?mode=ro", uri=True)
    n_k = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    n_m = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchone()[0]
    devs = con.execute("SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    con.close()
    assert facts["gpuOps"] >= n_k + n_m and facts["gpusActive"] == devs
    assert facts["ncclKernels"] and facts["ncclNvtx"]
    assert d["verdict"] in ("healthy", "warnings")
    assert not rules(d) & {"no_gpu_activity", "no_nvtx", "nccl_without_nvtx", "capture_failed", "no_gpu_metadata"}


def test_doctor_rules_on_broken_copies(small, tmp_path):
    cases = {
        "no_nvtx": ["DELETE FROM NVTX_EVENTS"],
        "nccl_without_nvtx": ["DELETE FROM NVTX_EVENTS WHERE domainId != 0 OR (eventType = 75)"],
        "no_gpu_metadata": ["DELETE FROM TARGET_INFO_GPU"],
        "no_session_clock": ["DELETE FROM TARGET_INFO_SESSION_START_TIME"],
        "partial_gpus": ["DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId != 0",
                         "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE deviceId != 0",
                         "DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE deviceId != 0"],
        "short_window": ["DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid > 10"],
        "no_gpu_activity": ["DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL", "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                            "DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET"],
    }
    healthy = rules(doctor(small))
    for rule, sql in cases.items():
        assert rule not in healthy
        d = doctor(broken_copy(small, tmp_path / f"{rule}.sqlite", *sql))
        assert rule in rules(d), (rule, d["findings"])
        f = next(x for x in d["findings"] if x["rule"] == rule)
        assert f["flags"] and all(fl in d["flags"] for fl in f["flags"])
    d = doctor(tmp_path / "no_gpu_activity.sqlite")
    assert d["verdict"] == "broken" and d["findings"][0]["rule"] == "no_gpu_activity"
    d = doctor(tmp_path / "partial_gpus.sqlite")
    f = next(x for x in d["findings"] if x["rule"] == "partial_gpus")
    assert f["severity"] == "warning" and "--trace-fork-before-exec=true" in f["flags"]  # NCCL job: ranks missing
    assert "single_rank" in rules(d)


GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def process_windows(con: sqlite3.Connection) -> dict[int, tuple[int, int]]:
    """Each process's GPU-active window (first op start, last op end), by pid."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    win: dict[int, tuple[int, int]] = {}
    for t in GPU_TABLES:
        if t in tables:
            for gpid, a, b in con.execute(f"SELECT globalPid, min(start), max(end) FROM {t} GROUP BY globalPid"):
                s, e = win.get(gpid >> 24, (a, b))
                win[gpid >> 24] = (min(s, a), max(e, b))
    return win


def test_doctor_overhead_rule(small, tmp_path):
    con = sqlite3.connect(f"file:{small}?mode=ro", uri=True)
    gpid = con.execute("SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY globalPid LIMIT 1").fetchone()[0]
    a, b = process_windows(con)[gpid >> 24]
    n_str = con.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    con.close()
    win = b - a
    tid = gpid + 7  # a thread of a process that ran GPU work
    flush, init = n_str + 1, n_str + 2
    names = [f"INSERT INTO StringIds VALUES ({flush}, 'CUPTI: Buffer flush')",
             f"INSERT INTO StringIds VALUES ({init}, 'CUDA profiling initialization')"]
    # 0.5% of the window inside it, plus a huge row before the process's first GPU op: below the threshold
    p = broken_copy(small, tmp_path / "ov_low.sqlite", *names,
                    "CREATE TABLE PROFILER_OVERHEAD (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER, "
                    "returnValue INTEGER)",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({a + 10}, {a + 10 + win // 200}, {tid}, {flush}, 0)",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({a - 10 * win}, {a - 1}, {tid}, {flush}, 0)")
    d = doctor(p)
    assert "profiler_overhead" not in rules(d)
    assert d["facts"]["overheadRows"] == 1 and d["facts"]["overheadNs"] == win // 200
    # set-up inside the window, a flush of a process that ran no GPU op, and the flush at the process's exit
    # (after its last GPU op): none is the profiler stalling the traced work
    p = broken_copy(p, tmp_path / "ov_setup.sqlite",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({a + win // 4}, {a + win // 2}, {tid}, {init}, 0)",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({a}, {b}, {(999 << 24) + 1}, {flush}, 0)",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({b}, {b + win}, {tid}, {flush}, 0)")
    d = doctor(p)
    assert "profiler_overhead" not in rules(d)
    assert d["facts"]["overheadRows"] == 1 and d["facts"]["overheadNs"] == win // 200
    # a flush straddling the process window's end is clipped to it: 3% of the window
    p = broken_copy(p, tmp_path / "ov_high.sqlite",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({b - 3 * win // 100}, {b + win}, {tid}, {flush}, 0)")
    d = doctor(p)
    assert "profiler_overhead" in rules(d)
    assert d["facts"]["overheadNs"] == win // 200 + 3 * win // 100
    f = next(x for x in d["findings"] if x["rule"] == "profiler_overhead")
    assert "CUPTI: Buffer flush" in f["evidence"] and "--cuda-flush-interval=100" in f["flags"]
    # the same instants on other threads count once: wall time, a union, never above the window
    p = broken_copy(p, tmp_path / "ov_threads.sqlite",
                    f"INSERT INTO PROFILER_OVERHEAD VALUES ({a + 10}, {a + 10 + win // 200}, {tid + 1}, {flush}, 0)",
                    *[f"INSERT INTO PROFILER_OVERHEAD VALUES ({a}, {b}, {tid + k}, {flush}, 0)" for k in range(2, 6)])
    d = doctor(p)
    assert d["facts"]["overheadRows"] == 7 and d["facts"]["overheadNs"] == win


def test_doctor_overhead_types(small, tmp_path):
    """Exports with overheadType (2024+): buffer flush (3) and instrumentation (4) are the profiler's;
    module loading (6), lazy loading (7), a full command buffer (8) happen without a profiler too."""
    con = sqlite3.connect(f"file:{small}?mode=ro", uri=True)
    gpid = con.execute("SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY globalPid LIMIT 1").fetchone()[0]
    a, b = process_windows(con)[gpid >> 24]
    con.close()
    win, tid = b - a, gpid + 3
    rows = [f"INSERT INTO CUPTI_ACTIVITY_KIND_OVERHEAD VALUES ({a + k * win // 10}, {a + (k + 1) * win // 10}, 103, "
            f"{tid}, 0, 1, {t})" for k, t in enumerate((6, 7, 8, 1, 0))]
    p = broken_copy(small, tmp_path / "ov_types.sqlite",
                    "CREATE TABLE CUPTI_ACTIVITY_KIND_OVERHEAD (start INTEGER, end INTEGER, eventClass INTEGER, "
                    "globalTid INTEGER, correlationId INTEGER, nameId INTEGER, overheadType INTEGER)", *rows)
    d = doctor(p)
    assert "profiler_overhead" not in rules(d) and d["facts"]["overheadRows"] == 0
    p = broken_copy(p, tmp_path / "ov_types2.sqlite",
                    f"INSERT INTO CUPTI_ACTIVITY_KIND_OVERHEAD VALUES ({a}, {a + win // 50}, 103, {tid}, 0, 1, 3)",
                    f"INSERT INTO CUPTI_ACTIVITY_KIND_OVERHEAD VALUES ({b - win // 50}, {b}, 103, {tid}, 0, 1, 4)")
    d = doctor(p)
    assert "profiler_overhead" in rules(d)
    assert d["facts"]["overheadRows"] == 2 and d["facts"]["overheadNs"] == 2 * (win // 50)


def test_doctor_clocks_of_one_jobs_reports(small, tmp_path, cache_dir):
    """Reports of one job whose GPU activity, placed on UTC, has no instant in common."""
    con = sqlite3.connect(f"file:{small}?mode=ro", uri=True)
    a, b = con.execute("SELECT min(start), max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    con.close()
    near = broken_copy(small, tmp_path / "near.sqlite",
                       f"UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + {(b - a) // 10}")
    far = broken_copy(small, tmp_path / "far.sqlite",
                      f"UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + {3 * (b - a)}")
    noclock = broken_copy(small, tmp_path / "noclock.sqlite", "DELETE FROM TARGET_INFO_SESSION_START_TIME")
    s = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        ids = {p.stem: s.request("profile/open", {"path": str(p)})["profileId"] for p in (small, near, far, noclock)}
        def doc(*others):
            d = s.request("profile/doctor", {"profileId": ids["small"], "with": [ids[o] for o in others]})
            check_schema("profile/doctor", "result", d)
            return rules(d)
        assert "clocks_not_aligned" not in doc("near")
        assert "clocks_not_aligned" in doc("far") and "clocks_not_aligned" in doc("near", "far")
        assert "clocks_not_aligned" not in doc("noclock")  # left out: its own no_session_clock says why
        assert "clocks_not_aligned" not in doc()
    finally:
        s.close()
    r = cli("doctor", str(small), str(far))
    assert r.returncode == 0 and b"does not overlap on UTC" in r.stdout


# ---------------------------------------------------------------- doctor on real captures

def test_doctor_real_failed_capture():
    d = doctor(need_real("nsys_failed_capture_no_meta"))
    assert d["verdict"] == "broken" and [f["rule"] for f in d["findings"]] == ["capture_failed"]


def test_doctor_real_captures_against_sql():
    expect = {
        "nsys2022_nvtx_only_negative_ts": {"no_gpu_activity"},   # CUDA not traced
        "nsys2026_h100_2gpu_1s": {"no_gpu_metadata"},            # no TARGET_INFO_GPU
        "nsys2026_2gpu_nccl_before": {"no_gpu_metadata"},
        "nsys2023_rtx3060_23k": {"no_nvtx"},
        "nsys2026_tiny": {"short_window", "no_nvtx"},
    }
    for name, want in expect.items():
        path = need_real(name)
        d = doctor(path)
        assert want <= rules(d), (name, rules(d))
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        n_ops = sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in
                    ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
                    if t in tables)
        con.close()
        assert (d["facts"]["gpuOps"] == 0) == (n_ops == 0), name
    # the NCCL capture keeps NCCL's ranges (registered strings, no domain-create row in this cut)
    d = doctor(need_real("nsys2026_2gpu_nccl_before"))
    assert d["facts"]["ncclKernels"] and d["facts"]["ncclNvtx"] and "nccl_without_nvtx" not in rules(d)


def overhead_ref(path: Path) -> int:
    """Independent SQL: the union of the profiler's own overhead rows (overheadType 3/4, or a flush by name),
    each clipped to the GPU-active window of its process."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    win = process_windows(con)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    spans = []
    for t in ("PROFILER_OVERHEAD", "CUPTI_ACTIVITY_KIND_OVERHEAD"):
        if t not in tables:
            continue
        cols = {r[1] for r in con.execute(f"PRAGMA table_info({t})")}
        typ = "overheadType" if "overheadType" in cols else "NULL"
        for s, e, gtid, name, ty in con.execute(
                f"SELECT o.start, o.end, o.globalTid, s.value, {typ} FROM {t} o LEFT JOIN StringIds s ON s.id = o.nameId"):
            own = ty in (3, 4) if typ != "NULL" else bool(name) and (
                "flush" in name.lower() or name.lower() in ("cuda profiling overhead", "cuda profiling stop overhead"))
            w = win.get(gtid >> 24)
            if own and w and min(e, w[1]) > max(s, w[0]):
                spans.append((max(s, w[0]), min(e, w[1])))
    con.close()
    total, cur = 0, None
    for s, e in sorted(spans):
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            total += cur[1] - cur[0] if cur else 0
            cur = [s, e]
    return total + (cur[1] - cur[0] if cur else 0)


def test_doctor_real_overhead_against_sql():
    """Start-up, module loading, a full command buffer and exit flushes are not the profiler's overhead (these
    exports fired before); the 6 ms buffer flush that left a GPU idle in nsys2026_2gpu_nccl_after is."""
    quiet = ["nsys2023_hetero_4gpu_no_kernels", "nsys2024_a100_lm_nvtx", "nsys2026_4streams",
             "nsys2026_h100_2gpu_1s", "nsys2026_tiny", "nsys2026_windows_ada", "nsys2026_2gpu_nccl_before",
             "nsys2023_rtx3060_23k"]
    for name in quiet + ["nsys2026_2gpu_nccl_after"]:
        path = need_real(name)
        d = doctor(path)
        assert d["facts"]["overheadNs"] == overhead_ref(path), name
        assert ("profiler_overhead" in rules(d)) == (name == "nsys2026_2gpu_nccl_after"), (name, d["facts"])


@pytest.fixture(scope="module")
def gpu_exports(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gpu")
    got = {}
    for gz in sorted(GPU_FIXTURES.glob("*.sqlite.gz")):
        dst = out / gz.name[:-3]
        with gzip.open(gz) as f, open(dst, "wb") as g:
            shutil.copyfileobj(f, g)
        got[dst.stem] = dst
    if not got:
        pytest.skip("tests/fixtures/gpu has no exports")
    return got


def test_doctor_real_gpu_fixtures(gpu_exports):
    for name, path in gpu_exports.items():
        d = doctor(path)
        assert d["verdict"] != "broken", (name, d["findings"])
        assert d["facts"]["gpuOps"] > 0 and d["facts"]["gpusActive"] >= 1
    assert "no_nvtx" in rules(doctor(gpu_exports["h200_vecadd_two_exes"]))  # plain CUDA programs, no ranges
    assert "no_nvtx" not in rules(doctor(gpu_exports["h200_gpt_train"]))
    for name, path in gpu_exports.items():  # start-up and exit flushes of short H200 programs: not overhead
        d = doctor(path)
        assert "profiler_overhead" not in rules(d) and d["facts"]["overheadNs"] == overhead_ref(path), name


# ---------------------------------------------------------------- run history

def test_runs_record_list_note(small, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    empty = call("runs/list", {"workspaceRoot": str(ws)})
    assert empty["runs"] == [] and empty["historyPath"] == str(ws / ".nsys-ai" / "runs.db")
    assert not (ws / ".nsys-ai").exists()  # readers leave nothing behind
    with pytest.raises(CallError):
        call("runs/get", {"workspaceRoot": str(ws), "run": "latest"})
    r1 = call("runs/record", {"workspaceRoot": str(ws), "report": str(small), "command": ["python", "t.py"],
                              "note": "the dataloader stalls"})["run"]
    assert r1["name"] == "r1" and r1["status"] == "recorded" and r1["command"] == ["python", "t.py"]
    assert r1["notes"][0]["kind"] == "hypothesis" and r1["git"] is None
    r2 = call("runs/record", {"workspaceRoot": str(ws), "report": str(small), "name": "after-fix",
                              "before": "r1"})["run"]
    assert r2["before"] == "r1" and r2["name"] == "after-fix"
    call("runs/note", {"workspaceRoot": str(ws), "run": "latest", "text": "2 ms faster", "kind": "decision"})
    runs = call("runs/list", {"workspaceRoot": str(ws)})["runs"]
    assert [r["name"] for r in runs] == ["after-fix", "r1"]
    assert runs[0]["notes"][0]["text"] == "2 ms faster"
    assert call("runs/get", {"workspaceRoot": str(ws), "run": "latest~1"})["run"]["name"] == "r1"
    # errors: unknown run, duplicate or reserved name, a report that does not exist
    for params, code in [({"run": "nope", "text": "x"}, "runs/note"),
                         ({"report": str(small), "name": "r1"}, "runs/record"),
                         ({"report": str(small), "name": "latest"}, "runs/record"),
                         ({"report": str(tmp_path / "missing.sqlite")}, "runs/record")]:
        with pytest.raises(CallError):
            call(code, {"workspaceRoot": str(ws), **params})
    # the profile is never written: the history lives in the workspace only
    assert not list(small.parent.glob("*.sqlite-wal")) and (ws / ".nsys-ai" / "runs.db").exists()
    assert (ws / ".nsys-ai" / ".gitignore").read_text().splitlines()[-1] == "*"
    # CLI: runs by name in place of paths
    r = cli("diff", "r1", "after-fix", "--format", "json", cwd=ws)
    assert r.returncode == 0, r.stderr
    r = cli("runs", "--root", str(ws))
    assert r.returncode == 0 and b"after-fix" in r.stdout and b"2 ms faster" in r.stdout
    # from a subdirectory of the workspace: the history is found in the nearest parent that holds one
    sub = ws / "src" / "deep"
    sub.mkdir(parents=True)
    r = cli("diff", "r1", "after-fix", "--format", "json", cwd=sub)
    assert r.returncode == 0, r.stderr
    r = cli("runs", cwd=sub)
    assert r.returncode == 0 and b"after-fix" in r.stdout, r.stderr
    assert not (sub / ".nsys-ai").exists() and not (ws / "src" / ".nsys-ai").exists()


def test_git_state_recorded(small, tmp_path):
    if not shutil.which("git"):
        pytest.skip("git is not installed")
    ws = tmp_path / "repo"
    ws.mkdir()
    g = ["git", "-C", str(ws), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(g + ["init", "-q"], check=True)
    (ws / "a.py").write_text("x = 1\n")
    subprocess.run(g + ["add", "a.py"], check=True)
    subprocess.run(g + ["commit", "-qm", "a"], check=True)
    head = subprocess.run(g + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    r = call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})["run"]
    assert r["git"] == {"commit": head, "dirty": False}
    (ws / "a.py").write_text("x = 2\n")
    r = call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})["run"]
    assert r["git"] == {"commit": head, "dirty": True}


def test_runs_concurrent_writers(small, tmp_path, cache_dir):
    """Two CLI processes and the server record runs at once: none is lost, names stay unique."""
    ws = tmp_path / "ws"
    ws.mkdir()
    n = 12
    script = (f"import subprocess,sys,json\n"
              f"for i in range({n}):\n"
              f"    p = subprocess.run([{server_binary()!r}, 'call', 'runs/record', json.dumps("
              f"{{'workspaceRoot': {str(ws)!r}, 'report': {str(small)!r}, 'note': sys.argv[1] + str(i)}})],"
              f" capture_output=True)\n"
              f"    assert p.returncode == 0, p.stderr\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, tag]) for tag in ("a", "b")]
    srv = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        for i in range(n):
            srv.request("runs/record", {"workspaceRoot": str(ws), "report": str(small), "note": f"s{i}"})
        for p in procs:
            assert p.wait(timeout=300) == 0
        runs = srv.request("runs/list", {"workspaceRoot": str(ws)})["runs"]
    finally:
        srv.close()
    assert len(runs) == 3 * n
    assert len({r["name"] for r in runs}) == 3 * n
    notes = sorted(r["notes"][0]["text"] for r in runs)
    assert notes == sorted(f"{t}{i}" for t in "abs" for i in range(n))


def test_runs_compare_default_pair(small, tmp_path):
    """runs/compare (and `refine` without a PROFILE) pairs the later run with the run it was
    profiled as the after of, else with the newest earlier run that has a report; one run alone
    is a clear error that says how to get a second."""
    ws = tmp_path / "ws"
    ws.mkdir()

    def pair(**params) -> tuple[str, str]:
        c = call("runs/compare", {"workspaceRoot": str(ws), **params})
        return c["before"]["run"], c["after"]["run"]

    call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})
    with pytest.raises(CallError) as e:
        pair()
    assert "no run with a report before r1" in e.value.stderr and "--before r1" in e.value.stderr
    r = cli("refine", "--root", str(ws))
    assert r.returncode != 0 and b"no run with a report before r1" in r.stderr, r.stderr
    call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})
    assert pair() == ("r1", "r2")
    # a failed capture (no nsys) has no report: skipped
    env = {**os.environ, "NSYS_AI_NSYS": str(tmp_path / "absent"), "NSYS_AI_NO_PROGRESS": "1"}
    subprocess.run([server_binary(), "profile", "--root", str(ws), "--", "python3", "x.py"], env=env,
                   capture_output=True, timeout=60)
    call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})
    assert [x["name"] for x in call("runs/list", {"workspaceRoot": str(ws)})["runs"]] == ["r4", "r3", "r2", "r1"]
    assert pair() == ("r2", "r4")
    # the after of r1 (profile --before r1) pairs with r1, not with the run recorded just before it
    call("runs/record", {"workspaceRoot": str(ws), "report": str(small), "name": "fix", "before": "r1"})
    assert pair() == ("r1", "fix")
    assert pair(after="r2") == ("r1", "r2")  # the run before r2, not latest~1
    assert pair(before="r4") == ("r4", "fix") and pair(before="r2", after="r4") == ("r2", "r4")
    # `refine` without a PROFILE is runs compare
    r = cli("refine", "--root", str(ws), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == call("runs/compare", {"workspaceRoot": str(ws)})
    r = cli("refine", cwd=ws)
    assert r.returncode == 0 and r.stdout.startswith(b"before r1 ") and b"\nafter  fix " in r.stdout, r.stdout


def test_runs_survive_a_killed_writer(small, tmp_path):
    """A capture killed mid-way leaves its run behind, listed as interrupted; the
    database stays consistent and writable."""
    ws = tmp_path / "ws"
    ws.mkdir()
    fake = tmp_path / "nsys"  # an "nsys" that hangs until killed
    fake.write_text("#!/bin/sh\nsleep 600\n")
    fake.chmod(0o755)
    env = {**os.environ, "NSYS_AI_NSYS": str(fake), "NSYS_AI_NO_PROGRESS": "1"}
    p = subprocess.Popen([server_binary(), "profile", "--root", str(ws), "--name", "killed", "--note", "h1", "--",
                          "python3", "x.py"], env=env, stderr=subprocess.PIPE, start_new_session=True)
    db = ws / ".nsys-ai" / "runs.db"
    deadline = time.time() + 60
    while time.time() < deadline:
        if db.exists() and b"capturing" in subprocess.run(
                [server_binary(), "call", "runs/list", json.dumps({"workspaceRoot": str(ws)})],
                capture_output=True).stdout:
            break
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    runs = call("runs/list", {"workspaceRoot": str(ws)})["runs"]
    assert [r["name"] for r in runs] == ["killed"]
    assert runs[0]["status"] == "capturing" and runs[0]["interrupted"] is True
    assert runs[0]["notes"][0]["text"] == "h1" and "x.py" in runs[0]["command"]
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    r = call("runs/record", {"workspaceRoot": str(ws), "report": str(small)})["run"]
    assert r["name"] == "r2"


def test_runs_record_killed_at_random(small, tmp_path):
    """runs/record writers SIGKILLed at random moments: a run is recorded with its hypothesis or
    not at all, every writer that answered finds its run, and the database stays writable."""
    ws = tmp_path / "ws"
    ws.mkdir()
    rng = random.Random(24)
    # how long a writer takes here, start to exit (an ASan build or a loaded machine is several
    # times slower): the kills land anywhere from its start to half as long again past its end
    probe = tmp_path / "probe"
    probe.mkdir()
    took = []
    for _ in range(3):
        t = time.monotonic()
        subprocess.run([server_binary(), "call", "runs/record", json.dumps(
            {"workspaceRoot": str(probe), "report": str(small), "note": "probe"})], capture_output=True, check=True)
        took.append(time.monotonic() - t)
    span = 1.5 * sorted(took)[1]
    answered = []
    for i in range(120):
        p = subprocess.Popen([server_binary(), "call", "runs/record", json.dumps(
            {"workspaceRoot": str(ws), "report": str(small), "note": f"h{i}"})],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0, span))
        p.kill()
        out, _ = p.communicate(timeout=30)
        if p.returncode == 0:
            answered.append(json.loads(out)["run"]["name"])
    runs = call("runs/list", {"workspaceRoot": str(ws)})["runs"]
    assert 0 < len(runs) < 120, len(runs)  # some were killed before and some after their commit
    assert set(answered) <= {r["name"] for r in runs}
    assert [r["name"] for r in runs if [n["kind"] for n in r["notes"]] != ["hypothesis"]] == []
    con = sqlite3.connect(ws / ".nsys-ai" / "runs.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM notes WHERE run_id NOT IN (SELECT id FROM runs)").fetchone()[0] == 0
    con.close()
    r = call("runs/record", {"workspaceRoot": str(ws), "report": str(small), "note": "after"})["run"]
    assert r["notes"][0]["text"] == "after" and r["name"] not in {x["name"] for x in runs}


def test_profile_without_nsys(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "NSYS_AI_NSYS": str(tmp_path / "absent"), "NSYS_AI_NO_PROGRESS": "1"}
    r = subprocess.run([server_binary(), "profile", "--root", str(ws), "--", "python3", "x.py"], env=env,
                       capture_output=True, timeout=60)
    assert r.returncode != 0 and b"nsys is not installed" in r.stderr
    runs = call("runs/list", {"workspaceRoot": str(ws)})["runs"]
    assert runs[0]["status"] == "failed" and "nsys is not installed" in runs[0]["error"]


def test_profile_capture_fails(tmp_path):
    """nsys runs but writes no report: a clear error, the run kept as failed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    fake = tmp_path / "nsys"
    fake.write_text("#!/bin/sh\necho 'fake nsys: target crashed' >&2\nexit 3\n")
    fake.chmod(0o755)
    env = {**os.environ, "NSYS_AI_NSYS": str(fake), "NSYS_AI_NO_PROGRESS": "1"}
    r = subprocess.run([server_binary(), "profile", "--root", str(ws), "--", "python3", "x.py"], env=env,
                       capture_output=True, timeout=60)
    assert r.returncode != 0
    assert b"wrote no report (exit status 3)" in r.stderr and b"target crashed" in r.stderr
    run = call("runs/list", {"workspaceRoot": str(ws)})["runs"][0]
    assert run["status"] == "failed" and "exit status 3" in run["error"]


# ---------------------------------------------------------------- end to end with the real nsys

def _iso_nsys(tmp_path: Path) -> Path | None:
    """The real nsys (CPU side), wrapped so that each call runs in fresh mount + PID
    namespaces (nsys 2022.4's stale agents otherwise hang later sessions; see
    test_source.py) and is killed after 150 s."""
    nsys = shutil.which("nsys")
    if not nsys or not Path("/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter").exists():
        return None
    w = tmp_path / "nsys"
    w.write_text(f"#!/bin/sh\nexec sh '{REPO / 'tests' / 'fixtures' / 'nsys_isolated.sh'}' '{nsys}' \"$@\"\n")
    w.chmod(0o755)
    return w


def test_end_to_end_profile_doctor_annotate_refine(tmp_path):
    nsys = _iso_nsys(tmp_path)
    if not nsys:
        pytest.skip("nsys is not installed: apt-get install nsight-systems libnvtoolsext1 (Debian non-free)")
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "tests" / "fixtures" / "workspace" / "e2e", ws)
    env = {**os.environ, "NSYS_AI_NSYS": str(nsys), "PYTHONPATH": str(ws), "NSYS_AI_NO_PROGRESS": "1"}

    def profile(*args: str) -> subprocess.CompletedProcess:
        # the default trace, CUDA included: on a machine without a GPU, nsys 2022.4 terminates once each
        # session runs in fresh mount and PID namespaces (_iso_nsys); its hangs came from stale agents
        return subprocess.run([server_binary(), "profile", *args, "--", sys.executable, "prog.py"], cwd=ws, env=env,
                              capture_output=True, timeout=600)

    def runs() -> list[dict]:
        return call("runs/list", {"workspaceRoot": str(ws)})["runs"]

    # 1. the first capture: recorded, exported, doctored
    r = profile("--note", "step() is slow")
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    h = runs()
    assert [x["name"] for x in h] == ["r1"] and h[0]["status"] == "ok"
    assert h[0]["nsysFlags"][:3] == ["--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none"]
    assert h[0]["command"] == [sys.executable, "prog.py"] and h[0]["notes"][0]["kind"] == "hypothesis"
    rep1 = Path(h[0]["report"])
    assert rep1 == ws / ".nsys-ai" / "runs" / "r1" / "report.sqlite" and rep1.exists()
    assert h[0]["summary"]["verdict"] == "broken" and h[0]["summary"]["rules"] == ["no_gpu_activity"]
    d = doctor(rep1)
    assert d["findings"][0]["rule"] == "no_gpu_activity" and "--trace=cuda,nvtx,osrt" in d["flags"]
    assert b"CUDA was not traced" in r.stdout
    # 2. annotate step(), 3. capture again as the after of r1
    res = call("source/annotate", {"file": "prog.py", "workspaceRoot": str(ws), "scope": {"function": "step"},
                                   "granularity": "statement", "includeText": True})
    (ws / "prog.py").write_text(res["text"])
    tags = [m["tag"] for m in res["added"]]
    r = profile("--before", "r1", "--name", "annotated")
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    h = runs()
    assert [x["name"] for x in h] == ["annotated", "r1"] and h[0]["before"] == "r1"
    con = sqlite3.connect(f"file:{h[0]['report']}?mode=ro", uri=True)
    texts = [t for (t,) in con.execute("SELECT text FROM NVTX_EVENTS WHERE eventType = 59")]
    con.close()
    assert all(texts.count(t) == 3 for t in tags)
    # 4. refine across runs: the tags added since r1, coverage over time
    c = call("runs/compare", {"workspaceRoot": str(ws)})
    assert c["before"]["run"] == "r1" and c["after"]["run"] == "annotated"
    assert sorted(t["tag"] for t in c["rangesAdded"]) == sorted(tags) and c["rangesRemoved"] == []
    assert all(t["ranges"] == 3 for t in c["rangesAdded"])
    assert c["after"]["tags"] == len(tags) and c["after"]["kernels"] == 0 and not c["converged"]
    assert c["idle"] == []  # no kernel traced: nothing to judge
    assert [x["run"] for x in c["history"]] == ["r1", "annotated"]
    assert runs()[0]["stats"] is not None
    # 5. diff by run names, and the CLI's history listing
    r = cli("diff", "r1", "annotated", "--format", "json", cwd=ws)
    assert r.returncode == 0, r.stderr
    r = cli("runs", "compare", cwd=ws)
    assert r.returncode == 0 and b"added" in r.stdout and b"coverage over time" in r.stdout


def test_runs_compare_agrees_with_source_refine(generated_dir, tmp_path):
    """runs/compare's statistics of a run are source/refine's on its report; the CLI
    proposes the next annotations for the split tags."""
    tagged = generate(generated_dir / "tagged.sqlite", "--preset", "small", "--source-tags")
    ws = tmp_path / "ws"
    ws.mkdir()
    for _ in range(2):
        call("runs/record", {"workspaceRoot": str(ws), "report": str(tagged)})
    c = call("runs/compare", {"workspaceRoot": str(ws)})
    ref = call("source/refine", {"profileId": "p1", "workspaceRoot": str(ws), "limit": 10000}, tagged)
    for side in ("before", "after"):
        assert c[side]["coverage"] == ref["coverage"]  # both truncated to 0.01
        assert c[side]["taggedPct"] == ref["taggedPct"]
        assert c[side]["taggedRanges"] == ref["taggedRanges"]
    split = {(t["tag"], t["totalNs"]) for t in c["innermost"] if t["distinctKernels"] > 1}
    assert split == {(x["tag"], x["totalNs"]) for x in ref["candidates"]} and split
    assert c["after"]["split"] == len(split) and not c["converged"]
    assert c["rangesAdded"] == [] and c["rangesRemoved"] == []
    # independent SQL: every tag text of the export is a tag of the run
    con = sqlite3.connect(f"file:{tagged}?mode=ro", uri=True)
    texts = {t for (t,) in con.execute("SELECT DISTINCT text FROM NVTX_EVENTS WHERE text GLOB '*.py:[0-9]* *'")}
    con.close()
    assert {t["tag"] for t in c["innermost"]} <= texts
    r = cli("runs", "compare", "--root", str(ws))
    assert r.returncode == 0 and r.stdout.count(b"next: ") == min(5, len(split)), r.stdout
    stats = [x["stats"] for x in call("runs/list", {"workspaceRoot": str(ws)})["runs"]]
    assert all(s and s["coverage"] == ref["coverage"] for s in stats)
    # refine's candidates are the split tags, most GPU time first
    assert [x["totalNs"] for x in ref["candidates"]] == sorted((x["totalNs"] for x in ref["candidates"]), reverse=True)
    assert c["idle"] == []  # every tag of the generated profile launched kernels
    # an annotation whose range launched nothing: added, and idle (to remove) in the later run
    con = sqlite3.connect(f"file:{tagged}?mode=ro", uri=True)
    gtid, = con.execute("SELECT globalTid FROM NVTX_EVENTS WHERE text GLOB '*.py:[0-9]* *' LIMIT 1").fetchone()
    first, = con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    con.close()
    idle = broken_copy(tagged, tmp_path / "idle.sqlite",
                       "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
                       f"VALUES ({first - 2000}, {first - 1000}, 59, 'train.py:7 unused', {gtid})")
    call("runs/record", {"workspaceRoot": str(ws), "report": str(idle)})
    c = call("runs/compare", {"workspaceRoot": str(ws)})
    assert [t["tag"] for t in c["rangesAdded"]] == ["train.py:7 unused"]
    assert [(t["tag"], t["ranges"], t["kernels"]) for t in c["idle"]] == [("train.py:7 unused", 1, 0)]
    assert "train.py:7 unused" not in {t["tag"] for t in c["innermost"]}
    assert c["after"]["coverage"] == c["before"]["coverage"]
    r = cli("runs", "compare", "--root", str(ws))
    assert r.returncode == 0 and b"no kernel train.py:7 unused" in r.stdout, r.stdout
