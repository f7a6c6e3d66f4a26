"""Every example of docs/protocol.md, replayed against the real server.

A ```json block of docs/protocol.md is a transcript: `-->` lines are what the
client sends, `<--` lines what the server answers (a block without arrows is a
request and its reply). A message may continue on indented lines. In examples,
`"...": "..."` members, `"..."` items and strings with `...` are elisions.

For every block: each request's params match its schema; the documented reply
matches its schema (elisions aside); the request, with the example's ids,
paths and profile ids replaced by a generated profile's, gets a reply of the
same kind (result, or the same error code) that matches its schema and has
every member the example shows (where the example and the reply both have
data at that place); documented $/progress notifications arrive, valid, before
their reply; and the lifecycle transcript ends the process with status 0.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import REPO, SCHEMAS, generate
from nsys_rpc import Server, schema_validator

DOC = REPO / "docs" / "protocol.md"
ELIDED = "..."


# -- the transcripts -------------------------------------------------------------------------

class Msg:
    def __init__(self, direction: str, text: str, line: int) -> None:
        self.direction, self.line = direction, line
        self.obj: dict[str, Any] = json.loads(text)

    @property
    def is_request(self) -> bool:
        return "method" in self.obj and "id" in self.obj

    @property
    def is_reply(self) -> bool:
        return "method" not in self.obj and ("result" in self.obj or "error" in self.obj)


def transcripts(text: str) -> Iterator[tuple[int, list[Msg]]]:
    """(line of the block, its messages) for every ```json block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```json":
            i += 1
            continue
        start, i = i + 1, i + 1
        msgs: list[tuple[str, list[str], int]] = []
        while lines[i].strip() != "```":
            ln = lines[i]
            m = re.match(r"^(-->|<--) ?(.*)$", ln)
            if m:
                msgs.append((m.group(1), [m.group(2)], i + 1))
            elif ln.startswith("{"):
                msgs.append(("", [ln], i + 1))
            elif ln.strip():
                assert msgs and ln[0].isspace(), f"docs/protocol.md:{i + 1}: not a message nor its continuation"
                msgs[-1][1].append(ln)
            i += 1
        out = []
        for direction, parts, line in msgs:
            try:
                out.append(Msg(direction, "\n".join(parts), line))
            except json.JSONDecodeError as e:
                raise AssertionError(f"docs/protocol.md:{line}: not JSON: {e}") from e
        for m in out:
            if not m.direction:
                m.direction = "-->" if "method" in m.obj and m.obj.get("method") != "$/progress" else "<--"
        yield start, out
        i += 1


BLOCKS = list(transcripts(DOC.read_text()))


def test_the_doc_has_transcripts() -> None:
    methods = {m.obj["method"] for _, b in BLOCKS for m in b if m.direction == "-->"}
    assert len(BLOCKS) >= 25 and {"initialize", "profile/open", "timeline/range", "source/refine"} <= methods


# -- schemas ---------------------------------------------------------------------------------

def _elided(x: Any) -> bool:
    return isinstance(x, str) and ELIDED in x or isinstance(x, dict) and ELIDED in x


def schema_errors(method: str, kind: str, instance: Any, doc: bool) -> list[str]:
    """The instance's schema violations; for a doc example, those an elision explains
    (an elided value, a member or item left out) are not counted."""
    out = []
    for e in schema_validator(method, kind).iter_errors(instance):
        if doc:
            if _elided(e.instance):
                continue
            if e.validator == "additionalProperties" and isinstance(e.instance, dict) \
                    and set(e.instance) - set(e.schema.get("properties", {})) <= {ELIDED}:
                continue
            if e.validator in ("oneOf", "anyOf") and any(_elided(c.instance) or c.validator == "required"
                                                         and ELIDED in c.instance for c in e.context):
                continue
        out.append(f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
    return out


def method_of(msgs: list[Msg], reply: Msg) -> str:
    return next(m.obj["method"] for m in msgs if m.is_request and m.obj["id"] == reply.obj["id"])


@pytest.mark.parametrize("line,msgs", BLOCKS, ids=[f"L{b[0]}" for b in BLOCKS])
def test_examples_match_the_schemas(line: int, msgs: list[Msg]) -> None:
    for m in msgs:
        method = m.obj.get("method")
        if method and "params" in m.obj and (SCHEMAS / f"{method.replace('/', '.')}.params.json").exists():
            errs = schema_errors(method, "params", m.obj["params"], doc=True)
            assert not errs, f"docs/protocol.md:{m.line}: {method} params: {errs}"
        if m.is_reply and "result" in m.obj:
            method = method_of(msgs, m)
            errs = schema_errors(method, "result", m.obj["result"], doc=True)
            assert not errs, f"docs/protocol.md:{m.line}: {method} result: {errs}"


# -- replay ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def profiles(generated_dir: Path) -> dict[str, Path]:
    return {"a": generate(generated_dir / "small.sqlite", "--preset", "small"),
            "b": generate(generated_dir / "small-seed2.sqlite", "--preset", "small", "--seed", "2")}


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "kernels").mkdir(parents=True)
    (root / "train.py").write_text(
        "import time\n\nimport torch\n\n\ndef work(n):\n    return torch.ones(n)\n\n\n"
        "def step():\n    \"\"\"One step.\"\"\"\n    a = work(40)\n    time.sleep(0.005)\n    return a\n")
    (root / "model.py").write_text("import torch\n\n\ndef mlp(x):\n    a = x @ x\n    return torch.relu(a)\n")
    (root / "kernels" / "ex_gpu.cu").write_text("__global__ void init_array(float *a) { a[0] = 0; }\n")
    return root


class Replay:
    """Maps the example's profile ids, paths and names onto the fixture's."""

    def __init__(self, server: Server, profiles: dict[str, Path], root: Path, tmp: Path) -> None:
        self.s, self.profiles, self.root, self.tmp = server, profiles, root, tmp
        self.ids: dict[str, str] = {}
        self.paths: dict[str, str] = {}
        server._next_id = 100000  # the fixture's own requests never reuse an example's id
        server.replies.clear()  # initialize's (id 1) is not an example's reply

    def profile_path(self, doc_path: str) -> str:
        if doc_path not in self.paths:
            self.paths[doc_path] = str(self.profiles["ab"[len(self.paths) % 2]])
        return self.paths[doc_path]

    def profile_id(self, doc_id: str) -> str:
        if doc_id not in self.ids:
            path = self.profile_path(f"<{doc_id}>")
            self.ids[doc_id] = self.s.request("profile/open", {"path": path})["profileId"]
        return self.ids[doc_id]

    def top_kernel(self) -> str:
        r = self.s.request("analysis/run", {"profileId": self.profile_id("p1"), "name": "top_kernels",
                                            "params": {"limit": 1}})
        return r["rows"][0]["name"]

    def params(self, method: str, p: dict[str, Any], doc_reply: Any) -> dict[str, Any]:
        p = dict(p)
        for k in ("profileId", "base", "compare"):
            if isinstance(p.get(k), str):
                p[k] = self.profile_id(p[k])
        if method in ("profile/open",):
            p["path"] = self.profile_path(p["path"])
        if method == "profile/openSet":
            p["paths"] = [self.profile_path(x) for x in p["paths"]]
        if method == "export/perfetto":
            p["path"] = str(self.tmp / Path(p["path"]).name)
        if "workspaceRoot" in p:
            p["workspaceRoot"] = str(self.root)
        if method in ("kernel/explain", "source/locate") and "name" in p:
            p["name"] = self.top_kernel()
        if method == "timeline/range":  # the example's track, and events or buckets as it shows
            k = self.s.request("kernel/details", {"profileId": p["profileId"], "kernelId": 0})
            p["tracks"] = [k["track"]]
            if "events" in json.dumps(doc_reply):
                p["start"], p["end"] = k["start"] - 10, k["end"] + 10
            else:
                info = self.s.request("timeline/tracks", {"profileId": p["profileId"]})
                p["start"], p["end"] = info["start"], info["end"]
        return p

    def reply(self, id_: int) -> dict[str, Any]:
        return self.s.wait_reply(id_, timeout=120)


def assert_members(doc: Any, got: Any, where: str) -> None:
    """Every member the example shows is in the reply, recursively, where both have data."""
    if isinstance(doc, dict) and isinstance(got, dict):
        for k, v in doc.items():
            if k == ELIDED:
                continue
            assert k in got, f"{where}.{k}: documented but not in the reply {sorted(got)}"
            assert_members(v, got[k], f"{where}.{k}")
    elif isinstance(doc, list) and isinstance(got, list) and got:
        for i, item in enumerate(x for x in doc if x != ELIDED):
            if not isinstance(item, (dict, list)):
                continue
            errors = []
            for cand in got[:64]:  # an item of the same shape (a track of events, one of buckets)
                try:
                    assert_members(item, cand, f"{where}[{i}]")
                    break
                except AssertionError as e:
                    errors.append(str(e))
            else:
                raise AssertionError(errors[0])


@pytest.mark.parametrize("line,msgs", BLOCKS, ids=[f"L{b[0]}" for b in BLOCKS])
def test_examples_replay(line: int, msgs: list[Msg], profiles: dict[str, Path], workspace: Path,
                         tmp_path: Path) -> None:
    lifecycle = msgs[0].obj.get("method") == "initialize"
    s = Server(env={"NSYS_AI_CACHE_DIR": str(tmp_path / "cache")}, initialize=not lifecycle)
    try:
        r = Replay(s, profiles, workspace, tmp_path)
        sent: dict[Any, tuple[str, Msg]] = {}
        replies = {m.obj["id"]: m.obj for m in msgs if m.is_reply}
        for m in msgs:
            o = m.obj
            if m.direction == "-->":
                out = {k: v for k, v in o.items()}
                if "params" in o and isinstance(o["params"], dict) and "id" in o:
                    out["params"] = r.params(o["method"], o["params"], replies.get(o["id"]))
                if "id" in o:
                    sent[o["id"]] = (o["method"], m)
                s.send(out)
                if o["method"] == "exit":
                    assert s.proc.wait(timeout=30) == 0, "exit after shutdown: status 0"
                continue
            if not m.is_reply:  # a documented notification: it came before its request's reply
                continue
            method, req = sent[o["id"]]
            got = r.reply(o["id"])
            where = f"docs/protocol.md:{m.line} ({method})"
            if "error" in o:
                assert "error" in got and got["error"]["code"] == o["error"]["code"], f"{where}: {got}"
                continue
            assert "result" in got, f"{where}: answered {got.get('error')}"
            assert not schema_errors(method, "result", got["result"], doc=False) if got["result"] is not None \
                else o["result"] is None, f"{where}: {schema_errors(method, 'result', got['result'], doc=False)}"
            assert_members(o["result"], got["result"], where)
            if o["result"] is None:
                assert got["result"] is None, where
            documented = [n for n in msgs if n.direction == "<--" and n.obj.get("method") == "$/progress"
                          and n.obj["params"]["token"] == req.obj["params"].get("workDoneToken", object())]
            if documented:
                token = req.obj["params"]["workDoneToken"]
                kinds = [n["params"]["value"]["kind"] for n in s.notifications
                         if n.get("method") == "$/progress" and n["params"]["token"] == token]
                for n in s.notifications:
                    if n.get("method") == "$/progress":
                        assert not schema_errors("$/progress", "params", n["params"], doc=False), n
                assert kinds[:1] == ["begin"] and kinds[-1:] == ["end"], f"{where}: progress {kinds}"
    finally:
        s.close()
