"""`nsys-ai mcp` driven by real MCP clients: the official Python SDK (`mcp` on
PyPI) lists the tools and calls every one, validating structured results
against each tool's outputSchema; a raw line client checks what the SDK
hides (exact integers, cancellation without a reply, malformed lines), and
that results equal the JSON-RPC methods' own answers from `nsys-ai serve`."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import anyio
import jsonschema
import pytest

from conftest import generate
from mcp_line import McpLine
from nsys_rpc import Server, server_binary

mcp = pytest.importorskip("mcp", reason="the MCP Python SDK is not installed (pip install mcp; scripts/setup.sh --all)")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import McpError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOLS_JSON = json.loads((REPO / "protocol" / "mcp_tools.json").read_text())["tools"]


def run_sdk(fn, *args, env: dict | None = None):
    """Runs fn(session, *args) against a fresh `nsys-ai mcp` through the SDK."""
    async def main():
        params = StdioServerParameters(command=server_binary(), args=["mcp"], env=env)
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                init = await s.initialize()
                assert init.serverInfo.name == "nsys-ai"
                assert init.capabilities.tools is not None
                return await fn(s, *args)
    return anyio.run(main)


def tool_args(name: str, pid: str, root: str) -> dict:
    """Valid arguments for every tool on the small generated profile."""
    if name == "analysis_mfu":
        return {"profileId": pid, "modelFlops": 10**12}
    if name.startswith("analysis_") and name != "analysis_list":
        return {"profileId": pid}
    return {
        "profile_open": None,  # opened first, separately
        "profile_list": {},
        "profile_info": {"profileId": pid},
        "analysis_list": {},
        "report": {"profileId": pid},
        "profile_diff": {"base": pid, "compare": pid},
        "kernel_explain": {"profileId": pid, "kernelId": 0},
        "kernel_details": {"profileId": pid, "kernelId": 0},
        "search": {"profileId": pid, "query": "nccl"},
        "timeline_tracks": {"profileId": pid},
        "timeline_summary": {"profileId": pid, "start": 0, "end": 10**12},
        "nvtx_tree": {"profileId": pid},
        "source_map": {"profileId": pid, "workspaceRoot": root},
        "source_kernels_at": {"profileId": pid, "file": "train.py", "line": 1, "workspaceRoot": root},
        "sql_query": {"profileId": pid, "sql": "SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL"},
        "profile_doctor": {"profileId": pid},
        # the run history of root: two runs recorded before the tools are called
        "runs_list": {"workspaceRoot": root},
        "runs_get": {"workspaceRoot": root, "run": "latest"},
        "runs_note": {"workspaceRoot": root, "run": "r1", "text": "from an agent", "kind": "hypothesis"},
        "runs_compare": {"workspaceRoot": root},
    }[name]


def test_sdk_lists_and_calls_every_tool(small_profile, tmp_path, cache_dir):
    env = {"NSYS_AI_CACHE_DIR": str(cache_dir), "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # a run history for the runs_* tools
        rec = subprocess.run([server_binary(), "call", "runs/record", json.dumps(
            {"workspaceRoot": str(tmp_path), "report": str(small_profile)})], capture_output=True)
        assert rec.returncode == 0, rec.stderr

    async def body(s: ClientSession):
        tools = (await s.list_tools()).tools
        names = [t.name for t in tools]
        assert len(names) == len(set(names))
        # every tool of protocol/mcp_tools.json, an analysis_<name> per analysis
        analyses = (await s.call_tool("analysis_list", {})).structuredContent["analyses"]
        expect = {t["name"] for t in TOOLS_JSON if not t.get("perAnalysis")}
        expect |= {f"analysis_{a['name']}" for a in analyses}
        assert set(names) == expect
        for t in tools:
            jsonschema.Draft202012Validator.check_schema(t.inputSchema)
            assert t.outputSchema is not None, t.name
            jsonschema.Draft202012Validator.check_schema(t.outputSchema)
            assert t.description
        opened = await s.call_tool("profile_open", {"path": str(small_profile)})
        assert not opened.isError
        pid = opened.structuredContent["profileId"]
        by_name = {t.name: t for t in tools}
        results = {}
        for name in names:
            args = tool_args(name, pid, str(tmp_path))
            if args is None:
                continue
            r = await s.call_tool(name, args)  # the SDK validates structuredContent against outputSchema
            assert not r.isError, (name, r.content[0].text)
            jsonschema.validate(r.structuredContent, by_name[name].outputSchema)
            assert r.content and r.content[0].type == "text" and r.content[0].text
            results[name] = r.structuredContent
        # tool input errors are results with isError (the method's message), not a dead server
        bad = await s.call_tool("analysis_top_kernels", {"profileId": pid, "limit": "many"})
        assert bad.isError and "arguments.limit" in bad.content[0].text
        nope = await s.call_tool("profile_info", {"profileId": "nope"})
        assert nope.isError and "-32005" in nope.content[0].text
        with pytest.raises(McpError):
            await s.call_tool("no_such_tool", {})
        assert (await s.send_ping()) is not None
        return pid, results

    pid, results = run_sdk(body, env=env)
    # the same answers as the JSON-RPC methods of `serve`
    srv = Server(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        p2 = srv.request("profile/open", {"path": str(small_profile)})["profileId"]
        assert srv.request("analysis/run", {"profileId": p2, "name": "top_kernels"}) == results["analysis_top_kernels"]
        assert srv.request("search", {"profileId": p2, "query": "nccl"}) == results["search"]
        assert srv.request("kernel/details", {"profileId": p2, "kernelId": 0}) == results["kernel_details"]
    finally:
        srv.close()
    with sqlite3.connect(f"file:{small_profile}?mode=ro", uri=True) as db:
        n = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    assert results["sql_query"]["rows"] == [[n]]


def test_sdk_progress_notifications(small_profile, cache_dir):
    seen: list[tuple] = []

    async def progress(p, total, message):
        seen.append((p, total, message))

    async def body(s: ClientSession):
        pid = (await s.call_tool("profile_open", {"path": str(small_profile)})).structuredContent["profileId"]
        r = await s.call_tool("report", {"profileId": pid}, progress_callback=progress)
        assert not r.isError
        return r

    run_sdk(body, env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    assert seen, "report/generate reports progress: expected notifications/progress"
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values)), values  # MCP: progress increases with each notification
    assert all(t == 100 for _, t, _ in seen)


LONG_SQL = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000000000) "
            "SELECT count(*) FROM c")


def test_cancel_a_long_call_and_keep_serving(small_profile, cache_dir):
    c = McpLine(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        pid = c.call("profile_open", {"path": str(small_profile)})["structuredContent"]["profileId"]
        rid = c.start("tools/call", {"name": "sql_query",
                                     "arguments": {"profileId": pid, "sql": LONG_SQL, "timeoutMs": 60000}})
        time.sleep(0.5)
        t0 = time.monotonic()
        c.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
        seen: list = []
        ping = c.start("ping")
        assert c.wait(ping, timeout=10, seen=seen)["result"] == {}
        # the cancelled call is never answered (MCP), and stops: the next call runs at once
        r = c.call("sql_query", {"profileId": pid, "sql": "SELECT 41 + 1"})
        assert r["structuredContent"]["rows"] == [[42]]
        assert time.monotonic() - t0 < 5
        time.sleep(0.3)
        while not c.lines.empty():
            seen.append(json.loads(c.lines.get()))
        assert not [m for m in seen if m.get("id") == rid]
    finally:
        assert c.close() == 0


def test_exact_integers_and_malformed_lines(generated_dir, cache_dir):
    prof = generate(generated_dir / "epoch.sqlite", "--preset", "small", "--epoch-clock", "--source-tags")
    c = McpLine(env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        # garbage lines get JSON-RPC errors with id null; the server goes on
        c.send_raw("{not json\n")
        assert c.wait(None)["error"]["code"] == -32700
        c.send_raw('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n')
        assert c.wait(None)["error"]["code"] == -32600
        c.send_raw("\n  \n")
        assert c.request("nope/method")["error"]["code"] == -32601
        assert c.request("tools/call", {"arguments": {}})["error"]["code"] == -32602
        rid = c.start("tools/call", {"name": "profile_open", "arguments": {"path": str(prof)}})
        line = c.wait(rid, raw=True)
        with sqlite3.connect(f"file:{prof}?mode=ro", uri=True) as db:
            t0 = db.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
            big = db.execute("SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
        assert big > 2**53 and t0 > 2**53
        pid = json.loads(line)["result"]["structuredContent"]["profileId"]
        rid = c.start("tools/call", {"name": "sql_query", "arguments": {
            "profileId": pid, "sql": "SELECT max(end) AS e, 9007199254740993 AS k FROM CUPTI_ACTIVITY_KIND_KERNEL"}})
        line = c.wait(rid, raw=True)
        assert f'"rows":[[{big},9007199254740993]]' in line  # the digits themselves, not a double's
    finally:
        c.close()


def test_profile_flag_opens_before_serving(small_profile, cache_dir):
    c = McpLine("--profile", str(small_profile), env={"NSYS_AI_CACHE_DIR": str(cache_dir)}, initialize=False)
    try:
        r = c.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "0"}})["result"]
        assert r["protocolVersion"] == "2024-11-05"
        assert '"p1"' in r["instructions"] and str(small_profile) in r["instructions"]
        assert c.call("profile_info", {"profileId": "p1"})["isError"] is False
    finally:
        c.close()


def test_agents_doc_names_every_tool():
    doc = (REPO / "docs" / "agents.md").read_text()
    for t in TOOLS_JSON:
        name = "analysis_<name>" if t.get("perAnalysis") else t["name"]
        assert f"| `{name}` | `{t['method']}`" in doc, f"docs/agents.md: no row for {name}"
