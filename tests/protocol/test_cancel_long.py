"""Every long-running analysis method reports $/progress when given a
workDoneToken and honours $/cancelRequest mid-flight: the answer is -32800,
it comes back well before the uncancelled run would have finished, and the
server keeps serving. Not a speed test: the latencies are logged (and kept in
the robustness summary), the assertions are that the request was cut short.

The profile is generated (tools/gen_profile.py, 500k kernels, 8 GPUs, per-layer
stage ranges) so that each method runs long enough to be interrupted; a
method whose uncancelled run is too short to cancel reliably (it ends within
30 ms of twice the time it took to send the cancel)
is logged and not asserted on.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, record_summary
from nsys_rpc import Server

KERNELS = 500_000
MIN_CANCELLABLE_S = 0.03


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cancel") / "stages.sqlite"
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(p), "--preset", "1m",
                    "--kernels", str(KERNELS), "--shape", "stages"], check=True)
    return p


def requests(pid: str, path: Path) -> list[tuple[str, str, dict]]:
    analyses = ["top_kernels", "gpu_idle_gaps", "overlap", "nccl_breakdown", "iterations",
                "kernel_launch_overhead", "sync_cost", "stream_classification", "nvtx_summary",
                "stage_overlap"]
    out = [(f"analysis/run {a}", "analysis/run", {"profileId": pid, "name": a}) for a in analyses]
    out.append(("report/generate", "report/generate", {"profileId": pid}))
    out.append(("profile/diff", "profile/diff", {"base": pid, "compare": pid}))
    out.append(("profile/openSet", "profile/openSet", {"paths": [str(path)]}))
    out.append(("search", "search", {"profileId": pid, "query": "*e*"}))
    out.append(("export/perfetto", "export/perfetto", {"profileId": pid, "path": str(path) + ".perfetto.json"}))
    return out


def progress_of(srv: Server, token: str) -> list[dict]:
    return [m["params"]["value"] for m in srv.notifications
            if m.get("method") == "$/progress" and m["params"].get("token") == token]


def test_long_methods_cancel_mid_flight(big):
    srv = Server()
    try:
        pid = srv.request("profile/open", {"path": str(big)}, timeout=600)["profileId"]
        lines, asserted = [], 0
        for i, (label, method, params) in enumerate(requests(pid, big)):
            # the uncancelled run: how long it takes, and its progress
            token = f"full-{i}"
            t = time.monotonic()
            srv.request(method, dict(params, workDoneToken=token), timeout=600)
            full = time.monotonic() - t
            kinds = [v["kind"] for v in progress_of(srv, token)]
            assert kinds and kinds[0] == "begin" and kinds[-1] == "end", (label, kinds)
            # the same request, cancelled as soon as its work has begun
            token = f"cancel-{i}"
            rid = srv.start(method, dict(params, workDoneToken=token))
            t_req = time.monotonic()
            srv._pump_until(lambda: bool(progress_of(srv, token)) or rid in srv.replies, 600,
                            f"{label}: progress begin")
            srv.notify("$/cancelRequest", {"id": rid})
            t_cancel = time.monotonic()
            reply = srv.wait_reply(rid, timeout=600)
            t_reply = time.monotonic()
            code = reply.get("error", {}).get("code")
            lines.append(f"{label}: full {full * 1000:.0f} ms, cancel sent at {(t_cancel - t_req) * 1000:.0f} ms,"
                         f" answer {code or 'result'} {(t_reply - t_cancel) * 1000:.0f} ms after the cancel")
            print(lines[-1], flush=True)
            # cancellable: the uncancelled run lasts well past the moment the cancel was sent
            if full >= 2 * (t_cancel - t_req) + MIN_CANCELLABLE_S:
                asserted += 1
                assert code == -32800, lines[-1]
                assert t_reply - t_req < full, lines[-1]
            # still serving
            assert srv.request("analysis/list", {})["analyses"]
        record_summary("cancel", f"cancel: {asserted} long requests cut short")
        assert asserted >= 4, "profile too small for the methods to be cancelled mid-flight:\n" + "\n".join(lines)
    finally:
        srv.close()


def server_cpu_s(srv: Server) -> float:
    """CPU seconds (user + system, all threads) the server process has used."""
    import os
    fields = Path(f"/proc/{srv.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_explain_first_call_progress_and_cancel(big):
    """kernel/explain's first request on an open profile groups every op by
    name and derives the profile's context (ranking, idle time): it reports
    $/progress and stops within 50 ms of $/cancelRequest; a later request
    still answers in full, with the same numbers as an uncancelled profile."""
    import sqlite3
    name = sqlite3.connect(f"file:{big}?mode=ro", uri=True).execute(
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
        "GROUP BY 1 ORDER BY SUM(k.end - k.start) DESC LIMIT 1").fetchone()[0]
    srv = Server()
    try:
        # an uncancelled first request (its own open, index already built)
        pid = srv.request("profile/open", {"path": str(big)}, timeout=600)["profileId"]
        srv.request("analysis/run", {"profileId": pid, "name": "stream_classification"}, timeout=600)
        t = time.monotonic()
        full_res = srv.request("kernel/explain", {"profileId": pid, "name": name, "workDoneToken": "x-full"},
                               timeout=600)
        full = time.monotonic() - t
        kinds = [v["kind"] for v in progress_of(srv, "x-full")]
        assert kinds and kinds[0] == "begin" and kinds[-1] == "end", kinds
        srv.request("profile/close", {"profileId": pid})
        # a fresh open: the first request again, cancelled once it has begun
        pid = srv.request("profile/open", {"path": str(big)}, timeout=600)["profileId"]
        srv.request("analysis/run", {"profileId": pid, "name": "stream_classification"}, timeout=600)
        rid = srv.start("kernel/explain", {"profileId": pid, "name": name, "workDoneToken": "x-cancel"})
        t_req = time.monotonic()
        srv._pump_until(lambda: bool(progress_of(srv, "x-cancel")) or rid in srv.replies, 600, "explain progress")
        cpu0 = server_cpu_s(srv)
        srv.notify("$/cancelRequest", {"id": rid})
        t_cancel = time.monotonic()
        reply = srv.wait_reply(rid, timeout=600)
        latency = time.monotonic() - t_cancel
        cpu = server_cpu_s(srv) - cpu0
        line = (f"kernel/explain first call: full {full * 1000:.0f} ms, cancel sent at "
                f"{(t_cancel - t_req) * 1000:.0f} ms, answer {reply.get('error', {}).get('code') or 'result'} "
                f"{latency * 1000:.0f} ms after the cancel ({cpu * 1000:.0f} ms of server CPU)")
        print(line, flush=True)
        record_summary("cancel-explain", line)
        if full >= 2 * (t_cancel - t_req) + MIN_CANCELLABLE_S:
            assert reply.get("error", {}).get("code") == -32800, line
            # 50 ms of the server's own work: wall time on a shared, loaded machine
            # also counts the time the scheduler gives other processes
            assert cpu < 0.05, line
        # nothing half-built was kept: the next request answers in full
        again = srv.request("kernel/explain", {"profileId": pid, "name": name}, timeout=600)
        assert again["stats"] == full_res["stats"]
        assert again["context"] == full_res["context"]
        assert again["priority"] == full_res["priority"]
    finally:
        srv.close()
