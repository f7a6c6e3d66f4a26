"""Lifecycle of `nsys-ai serve`: initialize, initialized, shutdown, exit, EOF."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from conftest import check_schema
from nsys_rpc import RpcError, Server, frame, server_binary


def test_initialize_result_matches_schema_and_lists_method_table():
    s = Server(initialize=False)
    try:
        res = s.request("initialize", {"processId": os.getpid(), "capabilities": {}})
        check_schema("initialize", "result", res)
        assert res["serverInfo"]["name"] == "nsys-ai"
        out = subprocess.run([server_binary(), "--version"], capture_output=True, text=True)
        assert out.stdout.strip() == f"nsys-ai {res['serverInfo']['version']}"
        methods = res["capabilities"]["methods"]
        assert len(methods) == len(set(methods))
        # Hidden test methods are never advertised, even when enabled.
        assert not any(m.startswith("test/") for m in methods)
        s.notify("initialized", {})
        assert s.request("shutdown") is None
        s.notify("exit")
        assert s.proc.wait(timeout=10) == 0
    finally:
        s.close()


def test_initialize_params_schema_accepts_what_clients_send():
    check_schema("initialize", "params", {"processId": 1, "capabilities": {},
                                          "clientInfo": {"name": "vscode", "version": "1.9"}})


def test_capabilities_list_every_method_the_server_answers(server):
    """Every advertised method exists: none of them answers -32601."""
    s = Server(initialize=False)
    try:
        methods = s.request("initialize", {})["capabilities"]["methods"]
        for m in methods:
            rid = s.start(m, {})
            reply = s.wait_reply(rid)
            if "error" in reply:
                assert reply["error"]["code"] != -32601, (m, reply)
    finally:
        s.close()
    assert s.proc.returncode == 0


def test_request_before_initialize_is_32002():
    s = Server("--test-methods", initialize=False)
    try:
        with pytest.raises(RpcError) as e:
            s.request("test/echo", {"a": 1})
        assert e.value.code == -32002
        with pytest.raises(RpcError) as e:
            s.request("shutdown")
        assert e.value.code == -32002
        # Notifications before initialize are dropped, not answered.
        s.notify("test/echo", {"b": 2})
        s.request("initialize", {})
        assert s.request("test/echo", {"a": 1}) == {"a": 1}
        assert s.notifications == []
    finally:
        s.close()


def test_second_initialize_is_rejected(server):
    with pytest.raises(RpcError) as e:
        server.request("initialize", {})
    assert e.value.code == -32600
    assert "initialize" in e.value.message


def test_shutdown_then_exit_exits_0():
    s = Server("--test-methods")
    assert s.request("shutdown") is None
    with pytest.raises(RpcError) as e:
        s.request("test/echo", {})
    assert e.value.code == -32017
    with pytest.raises(RpcError) as e:
        s.request("shutdown")
    assert e.value.code == -32017
    s.notify("exit")
    assert s.proc.wait(timeout=10) == 0
    assert s.messages.get(timeout=5) is None  # stdout closed after the replies


def test_exit_without_shutdown_exits_1():
    s = Server()
    s.notify("exit")
    assert s.proc.wait(timeout=10) == 1


def test_exit_before_initialize_exits_1():
    s = Server(initialize=False)
    s.notify("exit")
    assert s.proc.wait(timeout=10) == 1


def test_eof_after_shutdown_exits_0_and_without_shutdown_1():
    s = Server()
    s.request("shutdown")
    s.proc.stdin.close()
    assert s.proc.wait(timeout=10) == 0
    s = Server()
    s.proc.stdin.close()
    assert s.proc.wait(timeout=10) == 1


def test_unknown_notifications_are_ignored(server):
    server.notify("workspace/didChangeConfiguration", {"settings": {}})
    server.notify("$/setTrace", {"value": "off"})
    server.notify("$/cancelRequest", {"id": 987654})  # unknown id: ignored
    server.notify("$/cancelRequest", {"id": 1.5})     # bad id: ignored (logged)
    assert server.request("shutdown") is None
    assert server.notifications == []
    server.notify("exit")
    assert server.proc.wait(timeout=10) == 0


def test_stdin_from_a_file_is_served_to_the_end(tmp_path):
    """fd 0 may be a regular file: every request in it is answered, in-flight
    work finishes (EOF of a file is not a disconnect), and exit is honoured."""
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "test/sleep", "params": {"ms": 50}},
        {"jsonrpc": "2.0", "id": 3, "method": "test/echo", "params": {"k": "v"}},
    ]
    inp = tmp_path / "in.bin"
    inp.write_bytes(b"".join(frame(json.dumps(m).encode()) for m in msgs))
    out = tmp_path / "out.bin"
    with open(inp, "rb") as fin, open(out, "wb") as fout:
        rc = subprocess.run([server_binary(), "serve", "--test-methods"], stdin=fin, stdout=fout,
                            stderr=subprocess.PIPE, timeout=30).returncode
    assert rc == 1  # EOF without shutdown
    data = out.read_bytes()
    replies = {}
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        n = int(head.split(b":")[1])
        msg = json.loads(rest[:n])
        replies[msg["id"]] = msg
        data = rest[n:]
    assert set(replies) == {1, 2, 3}
    assert replies[2]["result"] == {"sleptMs": 50}
    assert replies[3]["result"] == {"k": "v"}


def test_client_disconnect_mid_request_exits_promptly():
    """The client vanishes while long requests run: the server cancels them,
    waits for its worker threads and exits by itself, without a signal."""
    s = Server("--test-methods")
    for _ in range(12):  # more than the thread pool holds
        s.start("test/sleep", {"ms": 60000})
    time.sleep(0.2)
    t0 = time.monotonic()
    s.proc.stdin.close()
    rc = s.proc.wait(timeout=10)
    took = time.monotonic() - t0
    assert rc == 1, s.stderr
    assert took < 5, f"took {took:.1f}s to exit"
    assert "Sanitizer" not in s.stderr and "runtime error" not in s.stderr, s.stderr


def test_client_closes_both_pipes_mid_request():
    s = Server("--test-methods")
    s.start("test/sleep", {"ms": 60000})
    time.sleep(0.1)
    s.proc.stdin.close()
    s.proc.stdout.close()
    assert s.proc.wait(timeout=10) == 1


def test_client_that_stops_reading_stdout_makes_the_server_exit():
    """stdout closed by the client (EPIPE on the next reply): nobody can hear
    the server any more, so it cancels its work and exits by itself."""
    def msg(d):
        return frame(json.dumps(d).encode())
    proc = subprocess.Popen([server_binary(), "serve", "--test-methods"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(msg({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}) +
                         msg({"jsonrpc": "2.0", "id": 2, "method": "test/sleep",
                              "params": {"ms": 60000}}))
        proc.stdin.flush()
        time.sleep(0.3)
        proc.stdout.close()  # no reader thread holds it: the read end is really gone
        proc.stdin.write(msg({"jsonrpc": "2.0", "id": 3, "method": "test/echo", "params": {}}))
        proc.stdin.flush()
        t0 = time.monotonic()
        assert proc.wait(timeout=10) == 1
        assert time.monotonic() - t0 < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _doc_transcript() -> list[tuple[str, dict]]:
    """The --> / <-- messages of docs/protocol.md's transport section."""
    from conftest import REPO

    text = (REPO / "docs" / "protocol.md").read_text()
    start = text.index("## Transport and lifecycle")
    section = text[start:text.index("\n## ", start + 10)]
    msgs: list[tuple[str, dict]] = []
    for block in section.split("```json")[1:]:
        body = block.split("```")[0]
        cur: list[str] = []
        for line in body.splitlines():
            if line.startswith(("-->", "<--")):
                if cur:
                    msgs.append((cur[0][:3], json.loads(cur[0][4:] + "".join(cur[1:]))))
                cur = [line]
            elif line.strip() and cur:
                cur.append(line.strip())
        if cur:
            msgs.append((cur[0][:3], json.loads(cur[0][4:] + "".join(cur[1:]))))
    return msgs


def test_protocol_doc_examples_match_the_schemas():
    """docs/protocol.md's transport examples are valid JSON-RPC and agree with
    protocol/schemas (so the page cannot drift from the protocol)."""
    msgs = _doc_transcript()
    assert len(msgs) >= 8
    checked = set()
    for direction, m in msgs:
        assert m["jsonrpc"] == "2.0"
        if direction == "-->" and m.get("method") == "initialize":
            check_schema("initialize", "params", m["params"])
            checked.add("initialize.params")
        if direction == "<--" and m.get("id") == 1 and "result" in m:
            check_schema("initialize", "result", m["result"])
            checked.add("initialize.result")
        if m.get("method") == "$/progress":
            check_schema("$/progress", "params", m["params"])
            checked.add("progress")
        if m.get("method") == "$/cancelRequest":
            check_schema("$/cancelRequest", "params", m["params"])
            checked.add("cancel")
    assert checked == {"initialize.params", "initialize.result", "progress", "cancel"}


def test_shutdown_schemas():
    check_schema("shutdown", "result", None)
    check_schema("shutdown", "params", None)


def test_exit_does_not_hang_on_a_client_that_never_reads():
    """Replies pile up in a pipe nobody reads; after shutdown+exit the server
    waits a bounded grace period for stdout to drain, then exits anyway."""
    def msg(d):
        return frame(json.dumps(d).encode())
    proc = subprocess.Popen([server_binary(), "serve", "--test-methods"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        data = [msg({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})]
        data += [msg({"jsonrpc": "2.0", "id": 10 + i, "method": "test/echo",
                      "params": {"pad": "x" * 2000}}) for i in range(400)]  # ~800 KB of replies
        data += [msg({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
                 msg({"jsonrpc": "2.0", "method": "exit"})]
        proc.stdin.write(b"".join(data))
        proc.stdin.flush()
        t0 = time.monotonic()
        rc = proc.wait(timeout=30)
        took = time.monotonic() - t0
        assert rc == 0
        assert took < 15, f"exit took {took:.1f}s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
