"""`nsys-ai mcp` driven by the MCP Inspector's CLI mode (npm
@modelcontextprotocol/inspector, pinned and installed by scripts/setup.sh
--all into tests/protocol/mcp-inspector; NSYS_AI_MCP_INSPECTOR names
another mcp-inspector binary). Each CLI run starts its own server, so the
profile is opened with `mcp --profile` and is profileId p1."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from nsys_rpc import server_binary

HERE = Path(__file__).resolve().parent


def inspector() -> str:
    p = os.environ.get("NSYS_AI_MCP_INSPECTOR") or str(HERE / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector")
    if not Path(p).exists():
        pytest.skip(f"the MCP Inspector is not installed ({p}): run scripts/setup.sh --all")
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    return p


def run(profile: Path, cache: Path, *args: str) -> dict:
    cmd = [inspector(), "--cli", "-e", f"NSYS_AI_CACHE_DIR={cache}", server_binary(), "mcp", "--profile",
           str(profile), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_inspector_lists_and_calls_tools(small_profile, cache_dir):
    tools = run(small_profile, cache_dir, "--method", "tools/list")["tools"]
    by_name = {t["name"]: t for t in tools}
    assert {"profile_open", "report", "sql_query", "analysis_top_kernels", "timeline_summary"} <= set(by_name)
    # each CLI run costs a node start and a server: two calls, one refused (test_mcp.py calls every tool)
    for name, args in [("analysis_top_kernels", ["limit=3"]),
                       ("sql_query", ["sql=SELECT count(*) AS n FROM StringIds"])]:
        tool_args = [a for kv in ["profileId=p1", *args] for a in ("--tool-arg", kv)]
        r = run(small_profile, cache_dir, "--method", "tools/call", "--tool-name", name, *tool_args)
        assert r.get("isError") is False, (name, r)
        jsonschema.validate(r["structuredContent"], by_name[name]["outputSchema"])
        assert r["content"][0]["type"] == "text"
    r = run(small_profile, cache_dir, "--method", "tools/call", "--tool-name", "sql_query",
            "--tool-arg", "profileId=p1", "--tool-arg", "sql=DROP TABLE StringIds")
    assert r["isError"] is True
