"""Concurrency and load: out-of-order replies, cancellation, progress,
pipelining, and exactly-once replies under random cancellation."""
from __future__ import annotations

import json
import random
import time

import pytest

from conftest import check_schema, record_summary
from nsys_rpc import Server, frame


@pytest.fixture()
def tserver(cache_dir):
    s = Server("--test-methods", env={"NSYS_AI_CACHE_DIR": str(cache_dir)})
    yield s
    rc = s.close()
    s.assert_no_sanitizer_reports()
    assert rc == 0, f"server exit status {rc} after shutdown+exit"


def req(rid, method, params=None) -> bytes:
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return frame(json.dumps(msg).encode())


def cancel(rid) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest",
                             "params": {"id": rid}}).encode())


def collect(s: Server, ids, timeout: float = 60.0, settle: float = 0.3) -> list[dict]:
    """Reads until every id has its reply, asserting each arrives exactly once
    (also for `settle` seconds afterwards). Returns the order of arrival."""
    want = set(ids)
    order: list[dict] = []
    deadline = time.monotonic() + timeout

    def take(msg):
        assert msg is not None, f"server closed; stderr:\n{s.stderr}"
        if "method" in msg:
            s.notifications.append(msg)
            return
        assert msg.get("id") is not None, f"unexpected id-null error {msg}"
        assert msg["id"] not in s.replies, f"second reply for {msg['id']!r}"
        s.replies[msg["id"]] = msg
        order.append(msg)

    while not want <= s.replies.keys():
        left = deadline - time.monotonic()
        assert left > 0, (f"{len(want - s.replies.keys())} requests unanswered, e.g. "
                          f"{sorted(want - s.replies.keys())[:5]}")
        take(s.messages.get(timeout=left))
    s.all_answered_at = time.monotonic()  # type: ignore[attr-defined]
    end = time.monotonic() + settle
    while time.monotonic() < end:
        try:
            take(s.messages.get(timeout=max(0.0, end - time.monotonic())))
        except Exception as e:  # queue.Empty
            if isinstance(e, AssertionError):
                raise
    return order


def test_out_of_order_replies(tserver):
    slow = tserver.start("test/sleep", {"ms": 1000})
    fast = tserver.start("test/echo", {"fast": True})
    order = collect(tserver, [slow, fast])
    assert [m["id"] for m in order] == [fast, slow]
    assert tserver.replies[slow]["result"] == {"sleptMs": 1000}


def test_cancel_running_request(tserver):
    rid = tserver.start("test/sleep", {"ms": 60000})
    time.sleep(0.2)
    t0 = time.monotonic()
    tserver.notify("$/cancelRequest", {"id": rid})
    collect(tserver, [rid], timeout=10)
    assert tserver.replies[rid]["error"]["code"] == -32800
    assert time.monotonic() - t0 < 5  # vs 60 s uncancelled; generous for valgrind
    assert tserver.request("test/echo", {"still": "alive"}) == {"still": "alive"}


def test_cancel_before_start_never_runs(cache_dir):
    """With a 2-thread pool busy, a queued request cancelled before it starts
    is answered -32800 and never runs (its progress token never appears)."""
    s = Server("--test-methods", env={"NSYS_AI_CACHE_DIR": str(cache_dir), "UV_THREADPOOL_SIZE": "2"})
    try:
        blockers = [s.start("test/sleep", {"ms": 60000}) for _ in range(2)]
        time.sleep(0.2)
        queued = s.start("test/sleep", {"ms": 1, "workDoneToken": "queued"})
        s.notify("$/cancelRequest", {"id": queued})
        collect(s, [queued], timeout=10)
        assert s.replies[queued]["error"]["code"] == -32800
        for b in blockers:
            s.notify("$/cancelRequest", {"id": b})
        collect(s, blockers, timeout=10)
        assert all(s.replies[b]["error"]["code"] == -32800 for b in blockers)
        assert not [n for n in s.notifications if n["params"].get("token") == "queued"]
    finally:
        s.close()


def test_progress_with_work_done_token(tserver):
    for token in ["tok-1", 42, 2**53 - 1]:
        rid = tserver.start("test/sleep", {"ms": 200, "workDoneToken": token})
        collect(tserver, [rid])
        prog = [n for n in tserver.notifications
                if n["method"] == "$/progress" and n["params"]["token"] == token]
        for n in prog:
            check_schema("$/progress", "params", n["params"])
        kinds = [n["params"]["value"]["kind"] for n in prog]
        assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"report"}
        assert len(kinds) >= 3
        pct = [n["params"]["value"]["percentage"] for n in prog if "percentage" in n["params"]["value"]]
        assert pct == sorted(pct) and all(0 <= p <= 100 for p in pct)
        assert prog[0]["params"]["value"]["title"]


def test_progress_comes_before_the_reply_and_only_with_a_token(tserver):
    tserver.send_raw(req(900, "test/sleep", {"ms": 50, "workDoneToken": "t900"}) +
                     req(901, "test/sleep", {"ms": 50}))
    seen: list[str] = []
    while len([x for x in seen if x.startswith("reply")]) < 2:
        msg = tserver.messages.get(timeout=10)
        if "method" in msg:
            seen.append("progress:" + str(msg["params"]["token"]))
        else:
            seen.append(f"reply:{msg['id']}")
    assert "progress:t900" in seen
    last_progress = max(i for i, x in enumerate(seen) if x == "progress:t900")
    assert last_progress < seen.index("reply:900")
    assert all(x in ("progress:t900", "reply:900", "reply:901") for x in seen)


def test_1000_pipelined_requests_each_answered_once(tserver):
    ids = list(range(1000, 2000))
    t0 = time.monotonic()
    tserver.send_raw(b"".join(req(i, "test/echo", {"i": i}) for i in ids))
    collect(tserver, ids, timeout=60)
    took = tserver.all_answered_at - t0
    for i in ids:
        assert tserver.replies[i]["result"] == {"i": i}
    print(f"load: 1000 pipelined requests answered in {took * 1000:.0f} ms "
          f"({1000 / took:.0f} req/s)")


def test_10000_pipelined_requests_with_random_cancels(tserver):
    rng = random.Random(20261121)
    ids = list(range(100_000, 110_000))
    chunks = []
    n_cancels = 0
    for i in ids:
        if rng.random() < 0.25:
            chunks.append(req(i, "test/sleep", {"ms": rng.choice([0, 1, 2, 5])}))
        else:
            chunks.append(req(i, "test/echo", {"i": i}))
        if rng.random() < 0.3:  # cancel a recent (maybe already answered) request
            chunks.append(cancel(rng.choice(ids[max(0, i - 100_000 - 50):i - 100_000 + 1])))
            n_cancels += 1
        if rng.random() < 0.01:  # and one that does not exist
            chunks.append(cancel(rng.randrange(10**9, 2 * 10**9)))
    t0 = time.monotonic()
    data = b"".join(chunks)
    for k in range(0, len(data), 65536):  # as a client would: in pieces
        tserver.send_raw(data[k:k + 65536])
    collect(tserver, ids, timeout=120)
    took = tserver.all_answered_at - t0
    cancelled = sum(1 for i in ids if "error" in tserver.replies[i])
    for i in ids:
        r = tserver.replies[i]
        assert ("result" in r) != ("error" in r)
        if "error" in r:
            assert r["error"]["code"] == -32800, r
    lost = len(set(ids) - tserver.replies.keys())
    assert took < 60, f"10,000 requests took {took:.1f}s"
    print(f"load: 10000 requests, {n_cancels} cancels sent, {cancelled} answered -32800, "
          f"{lost} lost, {took:.2f} s")
    record_summary("load", f"load: 10000 requests, {lost} lost")
    assert tserver.request("test/echo", {"after": True}) == {"after": True}


def test_cheap_requests_answered_while_pool_is_busy(tserver):
    """Seven long requests run; the eighth pool thread still answers echoes."""
    longs = [tserver.start("test/sleep", {"ms": 30000}) for _ in range(7)]
    time.sleep(0.1)
    t0 = time.monotonic()
    assert tserver.request("test/echo", {"q": 1}, timeout=10) == {"q": 1}
    assert time.monotonic() - t0 < 5
    for rid in longs:
        tserver.notify("$/cancelRequest", {"id": rid})
    collect(tserver, longs, timeout=10)


def test_flow_control_pauses_and_resumes_input(cache_dir):
    """With at most 64 requests in flight, 3,000 pipelined requests pause the
    reading of stdin and resume it; every request is still answered once."""
    s = Server("--test-methods", "--log-level", "debug",
               env={"NSYS_AI_CACHE_DIR": str(cache_dir), "NSYS_AI_MAX_QUEUED": "64"})
    try:
        ids = list(range(50_000, 53_000))
        s.send_raw(b"".join(req(i, "test/sleep" if i % 50 == 0 else "test/echo",
                                {"ms": 2} if i % 50 == 0 else {"i": i}) for i in ids))
        collect(s, ids, timeout=120)
        assert all("result" in s.replies[i] for i in ids)
        assert "input paused" in s.stderr and "input resumed" in s.stderr
    finally:
        rc = s.close()
    assert rc == 0
    s.assert_no_sanitizer_reports()
