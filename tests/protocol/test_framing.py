"""Framing over a real pipe: split writes, header variants, and malformed
frames after which the next valid request must still be answered."""
from __future__ import annotations

import json
import random
import time

import pytest

from nsys_rpc import Server, frame


@pytest.fixture()
def tserver(cache_dir):
    s = Server("--test-methods", "--max-frame-bytes", "4096",
               env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    yield s
    rc = s.close()
    s.assert_no_sanitizer_reports()
    assert rc == 0, f"server exit status {rc} after shutdown+exit"


def echo_body(rid, payload=None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "test/echo",
                       "params": {"p": payload if payload is not None else rid}}).encode()


def test_split_writes_byte_by_byte(tserver):
    data = frame(echo_body(100))
    for i in range(len(data)):
        tserver.send_raw(data[i:i + 1])
        if i % 7 == 0:
            time.sleep(0.001)
    assert tserver.wait_reply(100)["result"] == {"p": 100}


def test_many_frames_in_one_write(tserver):
    tserver.send_raw(b"".join(frame(echo_body(200 + i)) for i in range(50)))
    for i in range(50):
        assert tserver.wait_reply(200 + i)["result"] == {"p": 200 + i}


@pytest.mark.parametrize("header", [
    b"content-length: %d\r\n\r\n",
    b"CONTENT-LENGTH:%d\r\n\r\n",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n",
    b"Content-Length: %d\r\nContent-Type: application/json\r\n\r\n",
    b"Content-Length: %d\n\n",
])
def test_header_variants(tserver, header):
    body = echo_body(300)
    tserver.send_raw(header % len(body) + body)
    assert tserver.wait_reply(300)["result"] == {"p": 300}


@pytest.mark.parametrize("garbage", [
    b"hello\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"Content-Type: text/plain\r\n\r\n{}",
    b"Content-Length: abc\r\n\r\n{}",
    b"Content-Length: -1\r\n\r\n",
    b"Content-Length: 99999999999999999999999999\r\n\r\n",
    b"\x00\xff\xfe\x80 binary junk without newline ",
    b"X-Long: " + b"a" * 9000 + b"\r\n\r\n",
])
def test_garbage_then_valid_request(tserver, garbage):
    tserver.send_raw(garbage)
    tserver.send_raw(frame(echo_body(400)))
    errs = tserver.wait_null_id_errors(1)
    assert errs[0]["error"]["code"] == -32700
    assert tserver.wait_reply(400)["result"] == {"p": 400}


def test_truncated_frame_then_valid_request_client_waits(tserver):
    """The client sends half a frame, then a full request, then waits: the
    server must notice the new header inside the first body and answer."""
    tserver.send_raw(b'Content-Length: 500\r\n\r\n{"jsonrpc":"2.0","id":')
    time.sleep(0.05)
    tserver.send_raw(frame(echo_body(500)))
    errs = tserver.wait_null_id_errors(1)
    assert errs[0]["error"]["code"] == -32700 and "truncated" in errs[0]["error"]["message"]
    assert tserver.wait_reply(500)["result"] == {"p": 500}


def test_truncated_frame_and_garbage_body(tserver):
    tserver.send_raw(frame(b'{"jsonrpc":"2.0","id":'))  # complete frame, broken JSON
    tserver.send_raw(frame(echo_body(501)))
    assert tserver.wait_null_id_errors(1)[0]["error"]["code"] == -32700
    assert tserver.wait_reply(501)["result"] == {"p": 501}


def test_oversized_frame_is_refused_then_valid_request(tserver):
    big = echo_body(600, "x" * 10000)  # > 4096
    tserver.send_raw(frame(big))
    tserver.send_raw(frame(echo_body(601)))
    err = tserver.wait_reply(600)["error"]  # the refusal names the request
    assert err["code"] == -32600 and "4096" in err["message"]
    assert tserver.wait_reply(601)["result"] == {"p": 601}
    assert not tserver.null_id_errors


def over_the_limit(head: bytes, tail: bytes, limit: int = 4096) -> bytes:
    """head + padding (a string member) + tail: a body exactly one byte over the limit."""
    pad = limit + 1 - len(head) - len(tail) - len(b'"pad":"",')
    body = head + b'"pad":"' + b"q" * pad + b'",' + tail
    assert len(body) == limit + 1
    return body


@pytest.mark.parametrize("rid", [604, "req-\u00e9\\\"x", -9007199254740991])
@pytest.mark.parametrize("where", ["first", "last"])
def test_frame_just_over_the_limit_is_refused_with_its_id(tserver, rid, where):
    """One byte over the limit, the id first or last in the object (after a
    nested object that has an "id" of its own): the refusal carries the id, so a
    client fails that request instead of waiting, and the server keeps serving."""
    rid_json = json.dumps(rid).encode()
    params = b'"params":{"id":"not this one","a":[{"id":1}]}'
    if where == "first":
        body = over_the_limit(b'{"id":' + rid_json + b',"jsonrpc":"2.0","method":"test/echo",' + params + b",",
                              b'"z":0}')
    else:
        body = over_the_limit(b'{"jsonrpc":"2.0","method":"test/echo",' + params + b",", b'"id":' + rid_json + b"}")
    json.loads(body)  # a valid request, but for its size
    tserver.send_raw(frame(body))
    err = tserver.wait_reply(rid)["error"]
    assert err["code"] == -32600 and "4097 bytes" in err["message"]
    tserver.send_raw(frame(echo_body(605)))
    assert tserver.wait_reply(605)["result"] == {"p": 605}
    assert not tserver.null_id_errors


def test_oversized_frame_without_a_usable_id_is_refused_with_id_null(tserver):
    for body in (over_the_limit(b'{"jsonrpc":"2.0","method":"test/echo",', b'"id":null}'),
                 over_the_limit(b'{"jsonrpc":"2.0","method":"test/echo",', b'"id":1.5}'),
                 over_the_limit(b'{"method":"test/echo",', b'"params":1}')):
        tserver.send_raw(frame(body))
    errs = tserver.wait_null_id_errors(3)
    assert all(e["error"]["code"] == -32600 for e in errs)
    tserver.send_raw(frame(echo_body(606)))
    assert tserver.wait_reply(606)["result"] == {"p": 606}


def test_frame_at_the_limit_is_accepted(tserver):
    body = echo_body(602, "")
    body = echo_body(602, "y" * (4096 - len(body)))
    assert len(body) == 4096
    tserver.send_raw(frame(body))
    assert tserver.wait_reply(602)["result"]["p"] == "y" * (4096 - len(echo_body(602, "")))


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_huge_claim_is_not_allocated_and_is_streamed_away(cache_dir):
    """A 2 GiB claim (default 64 MiB limit) followed by 8 MiB of it, then a
    valid request cut into the stream: no 2 GiB allocation, answered."""
    s = Server("--test-methods", env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        before = rss_kib(s.proc.pid)
        s.send_raw(b"Content-Length: 2147483648\r\n\r\n")
        chunk = b"x" * (1 << 20)
        for _ in range(8):
            s.send_raw(chunk)
        err = s.wait_null_id_errors(1)[0]["error"]
        assert err["code"] == -32600 and "2147483648" in err["message"]
        s.send_raw(frame(echo_body(700)))
        assert s.wait_reply(700)["result"] == {"p": 700}
        grew = rss_kib(s.proc.pid) - before
        assert grew < 64 * 1024, f"RSS grew by {grew} KiB"
    finally:
        s.close()


def test_tiny_limit_with_suffix_syntax(cache_dir):
    s = Server("--test-methods", "--max-frame-bytes=1k", env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        s.send_raw(frame(echo_body(800, "z" * 1025)))
        assert s.wait_reply(800)["error"]["code"] == -32600
        s.send_raw(frame(b'{"jsonrpc":"2.0","id":801,"method":"test/echo"}'))
        assert s.wait_reply(801)["result"] is None
    finally:
        s.close()


def test_bad_max_frame_option_is_a_usage_error():
    import subprocess
    from nsys_rpc import server_binary
    for bad in ["0", "-5", "abc", "12q"]:
        r = subprocess.run([server_binary(), "serve", "--max-frame-bytes", bad],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        assert r.returncode == 1 and b"max-frame-bytes" in r.stderr
    r = subprocess.run([server_binary(), "serve", "--log-level", "loud"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    assert r.returncode == 1


def test_random_garbage_never_loses_the_next_request(tserver):
    """200 random byte strings, each followed by a valid request: every
    request is answered exactly once and the server stays up."""
    rng = random.Random(1234)
    ids = []
    for i in range(200):
        n = rng.choice([1, 5, 40, 300, 2000])
        junk = bytes(rng.getrandbits(8) for _ in range(n))
        if i % 5 == 0:  # sometimes make it look more like a header
            junk = b"Content-" + junk
        rid = 10_000 + i
        ids.append(rid)
        tserver.send_raw(junk + frame(echo_body(rid)))
    for rid in ids:  # the harness asserts that no id is answered twice
        assert tserver.wait_reply(rid)["result"] == {"p": rid}
    assert all(m["error"]["code"] in (-32700, -32600) for m in tserver.null_id_errors)
    assert tserver.proc.poll() is None


def test_large_valid_body_round_trips(cache_dir):
    s = Server("--test-methods", env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    try:
        payload = "é" * (3 << 20)  # 6 MiB of UTF-8
        rid = s.start("test/echo", {"p": payload})
        assert s.wait_reply(rid, timeout=60)["result"]["p"] == payload
    finally:
        s.close()
