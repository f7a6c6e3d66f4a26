"""protocol/methods.json, errors.json and the schemas are the source of truth:
the committed generated files match them, and the running server follows them
(its method list, its error codes, its integer params' bounds)."""
from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SCHEMAS
from nsys_rpc import RpcError, Server, schema_validator

PROTOCOL = REPO / "protocol"
sys.path.insert(0, str(PROTOCOL))
import gen  # noqa: E402

METHODS = json.loads((PROTOCOL / "methods.json").read_text())["methods"]
ERRORS = json.loads((PROTOCOL / "errors.json").read_text())["errors"]


def test_generated_files_are_current(tmp_path: Path) -> None:
    """gen.py -o DIR writes the same bytes as the committed files."""
    subprocess.run([sys.executable, str(PROTOCOL / "gen.py"), "-o", str(tmp_path)], check=True,
                   capture_output=True)
    for rel in gen.OUTPUTS:
        assert (tmp_path / rel).exists(), rel
        assert filecmp.cmp(tmp_path / rel, REPO / rel, shallow=False), \
            f"{rel} is stale: run python3 protocol/gen.py"


def test_check_names_a_stale_file(tmp_path: Path) -> None:
    """--check fails, naming the file, when a generated file no longer matches."""
    copy = tmp_path / "repo"
    for rel in ["protocol", *gen.OUTPUTS]:
        src, dst = REPO / rel, copy / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    run = [sys.executable, str(copy / "protocol" / "gen.py"), "--check"]
    assert subprocess.run(run, capture_output=True).returncode == 0
    errors = json.loads((copy / "protocol" / "errors.json").read_text())
    errors["errors"][-1]["message"] = "changed"
    (copy / "protocol" / "errors.json").write_text(json.dumps(errors))
    out = subprocess.run(run, capture_output=True, text=True)
    assert out.returncode == 1
    assert "server/src/common/error_list.gen.h is stale" in out.stderr


def test_generator_rejects_a_method_without_schemas(tmp_path: Path) -> None:
    shutil.copytree(PROTOCOL, tmp_path / "protocol")
    doc = json.loads((tmp_path / "protocol" / "methods.json").read_text())
    doc["methods"].append({"name": "nothing/here", "handler": "nsys_method_nothing", "flags": []})
    (tmp_path / "protocol" / "methods.json").write_text(json.dumps(doc))
    with pytest.raises(gen.ProtocolError, match="nothing/here"):
        gen.Protocol(tmp_path / "protocol")


def test_capabilities_are_methods_json(server: Server) -> None:
    """capabilities.methods lists exactly methods.json's requests, in its order,
    without the lifecycle and test-only ones."""
    s = Server(initialize=False)
    try:
        caps = s.request("initialize", {"processId": None, "capabilities": {}})["capabilities"]
    finally:
        s.close()
    want = [m["name"] for m in METHODS if not {"lifecycle", "testOnly"} & set(m["flags"])]
    assert caps["methods"] == want


def test_lifecycle_and_test_methods_are_dispatched_as_flagged() -> None:
    """Lifecycle names are not callable as ordinary requests; test-only methods
    exist only with NSYS_AI_TEST_METHODS=1."""
    with Server() as s:
        for m in METHODS:
            if "testOnly" in m["flags"] or m["name"] in ("exit", "initialized", "$/cancelRequest", "$/progress"):
                with pytest.raises(RpcError) as e:
                    s.request(m["name"], {})
                assert e.value.code == -32601, m["name"]
    with Server(env={"NSYS_AI_TEST_METHODS": "1"}) as s:
        assert s.request("test/echo", {"a": 1}) == {"a": 1}


def test_error_codes_match_the_table() -> None:
    """The codes the server answers are errors.json's (a sample that every
    server can be made to produce without a profile)."""
    by_name = {e["name"]: e["code"] for e in ERRORS}
    with Server() as s:
        with pytest.raises(RpcError) as e:
            s.request("no/such", {})
        assert e.value.code == by_name["METHOD_NOT_FOUND"]
        with pytest.raises(RpcError) as e:
            s.request("profile/info", {"profileId": "nope"})
        assert e.value.code == by_name["PROFILE_NOT_OPEN"]
        with pytest.raises(RpcError) as e:
            s.request("profile/open", {"path": "/nonexistent/x.sqlite"})
        assert e.value.code == by_name["FILE_NOT_FOUND"]
    s = Server(initialize=False)
    try:
        with pytest.raises(RpcError) as e:
            s.request("profile/list", {})
        assert e.value.code == by_name["NOT_INITIALIZED"]
    finally:
        s.close()


# -- integer params: the schema's bounds are the server's ------------------------------------

def _base_params(method: str, pid: str, root: str) -> dict:
    """Params valid for method except for the field under test."""
    return {
        "timeline/range": {"profileId": pid, "start": 0, "end": 1000, "width": 10},
        "nvtx/tree": {"profileId": pid},
        "analysis/run": {"profileId": pid, "name": "sync_cost"},
        "report/generate": {"profileId": pid},
        "profile/diff": {"base": pid, "compare": pid},
        "kernel/details": {"profileId": pid, "kernelId": 0},
        "profile/diff": {"base": pid, "compare": pid},
        "search": {"profileId": pid, "query": "nccl"},
        "export/perfetto": {"profileId": pid, "path": root + "/out.json"},
        "agent/configure": {},
        "kernel/explain": {"profileId": pid},
        "source/map": {"profileId": pid, "workspaceRoot": root},
        "source/kernelsAt": {"profileId": pid, "file": "a.py", "line": 1, "workspaceRoot": root},
        "source/locate": {"profileId": pid, "workspaceRoot": root},
        "source/refine": {"profileId": pid, "workspaceRoot": root},
        "runs/list": {"workspaceRoot": root},
        "profile/query": {"profileId": pid, "sql": "SELECT 1"},
        "agent/ask": {"profileId": pid, "question": "Which kernel takes the most time?", "llm": False},
        "profile/openSet": {"paths": [root + "/missing.sqlite"]},
        "set/collectives": {"setId": "s0"},
        "set/stragglers": {"setId": "s0"},
    }[method]


def _int_params():
    p = gen.Protocol(PROTOCOL)
    for m in p.methods:
        for field, required, lo, hi in p.int_params(m):
            yield m["name"], field, lo, hi


INT_PARAMS = list(_int_params())
# bounds beyond 2^53 (the +-2^61 of times) included: params are parsed exactly (rpc/json_int.c)
INT_PARAM_CASES = [pytest.param(*c, id=f"{c[0]}:{c[1]}") for c in INT_PARAMS]


def test_every_integer_param_has_schema_bounds() -> None:
    """No integer param is left unbounded in its schema (int64's own limits are
    not a bound a client can rely on)."""
    unbounded = [(m, f) for m, f, lo, hi in INT_PARAMS if lo == gen.INT64_MIN or hi == gen.INT64_MAX]
    assert not unbounded


@pytest.mark.parametrize("method,field,lo,hi", INT_PARAM_CASES)
def test_integer_param_bounds_are_enforced(server: Server, small_profile: Path, tmp_path: Path,
                                           method: str, field: str, lo: int, hi: int) -> None:
    """One past either bound is -32602 naming the field; the bounds themselves are
    accepted (whatever else the call then answers)."""
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    base = _base_params(method, pid, str(tmp_path))
    for bad in (lo - 1, hi + 1):
        with pytest.raises(RpcError) as e:
            server.request(method, {**base, field: bad})
        assert e.value.code == -32602 and f"params.{field}" in e.value.message, (bad, e.value.message)
    if method == "agent/configure":
        return  # a valid call would change the server's LLM settings
    if (method, field) == ("nvtx/tree", "parent"):
        return  # within the bounds a parent must still name a node ("no node N": test_tree_lazy.py)
    for good in (lo, hi):
        params = {**base, field: good}
        if method == "timeline/range" and field in ("start", "end"):
            params = {**params, "start": lo, "end": hi}
        if method in ("nvtx/tree", "export/perfetto") and field in ("start", "end"):
            params = {**params, "start": lo, "end": hi}
        try:
            server.request(method, params)
        except RpcError as e:
            assert not (e.code == -32602 and f"params.{field}" in e.message), (good, e.message)


def test_schema_files_are_methods_json() -> None:
    """Each schema belongs to a method of methods.json (the generator also checks)."""
    names = {m["name"] for m in METHODS}
    for p in SCHEMAS.glob("*.*.json"):
        assert p.name.rsplit(".", 2)[0].replace(".", "/") in names, p.name


def test_progress_methods_report_progress(small_profile: Path, tmp_path: Path) -> None:
    """Each request flagged `progress` in methods.json sends $/progress begin ... end,
    valid against its schema, before its reply when its params carry a workDoneToken."""
    flagged = [m["name"] for m in METHODS if "progress" in m["flags"] and "testOnly" not in m["flags"]]
    with Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path / "cache")}) as s:
        pid = None
        for i, method in enumerate(flagged):
            params = {"profile/open": {"path": str(small_profile)},
                      "report/generate": {"profileId": pid},
                      "kernel/explain": {"profileId": pid, "name": "ampere_sgemm_128x64_tn"},
                      "agent/ask": {"profileId": pid, "question": "Which kernel takes the most time?"},
                      "source/map": {"profileId": pid, "workspaceRoot": str(REPO / "tests" / "fixtures")},
                      "profile/openSet": {"paths": [str(small_profile)]}}[method]
            token = f"t{i}"
            result = s.request(method, {**params, "workDoneToken": token})
            if method == "profile/open":
                pid = result["profileId"]
            kinds = [n["params"]["value"]["kind"] for n in s.notifications
                     if n.get("method") == "$/progress" and n["params"]["token"] == token]
            assert kinds[:1] == ["begin"] and kinds[-1:] == ["end"], (method, kinds)
        for n in s.notifications:
            if n.get("method") == "$/progress":
                errors = list(schema_validator("$/progress", "params").iter_errors(n["params"]))
                assert not errors, (n, errors[0].message)
