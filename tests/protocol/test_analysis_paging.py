"""analysis/run and report/generate under the reply-size rule (docs/protocol.md,
"Reply size"): rows past `maxBytes` are paged with `truncated`/`next` (the
pages put together are the whole answer), a token belongs to its request,
a reply that fits is unchanged, and a report cuts rows of its embedded
analyses but never findings, totals or summaries."""
from __future__ import annotations

import json

import pytest

from conftest import generate
from nsys_rpc import RpcError

BIG = 1 << 40


def size(res) -> int:
    return len(json.dumps(res, separators=(",", ":"), ensure_ascii=False).encode())


@pytest.fixture(scope="module")
def prof(generated_dir):
    return generate(generated_dir / "small.sqlite", "--preset", "small")


@pytest.fixture()
def pid(server, prof):
    return server.request("profile/open", {"path": str(prof)})["profileId"]


@pytest.mark.parametrize("name,params", [("top_kernels", {"limit": 0}), ("gpu_idle_gaps", {"limit": 0, "minGapNs": 0}),
                                         ("nvtx_summary", {"limit": 0})])
def test_pages_put_together_are_the_whole_answer(server, pid, name, params):
    whole = server.request("analysis/run", {"profileId": pid, "name": name, "params": params, "maxBytes": BIG})
    assert "truncated" not in whole and "next" not in whole
    base = size({**whole, "rows": []})
    cap = max(1024, base + 64 + (size(whole) - base) // 4)  # about four pages of rows
    rows, pages, cursor = [], 0, None
    while True:
        req = {"profileId": pid, "name": name, "params": params, "maxBytes": cap}
        if cursor:
            req["cursor"] = cursor
        page = server.request("analysis/run", req)
        pages += 1
        assert size(page) <= cap or len(page["rows"]) == 1
        assert page["summary"] == whole["summary"] and page["params"] == whole["params"]
        assert page["window"] == whole["window"]
        rows += page["rows"]
        if "next" not in page:
            assert "truncated" not in page
            break
        assert page["truncated"] is True and page["rows"], "every page but the last holds rows and says so"
        cursor = page["next"]
    assert pages >= 3
    assert rows == whole["rows"]


def test_a_page_holds_at_least_one_row(server, pid):
    """A summary larger than maxBytes still leaves room for one row per page,
    so paging always ends."""
    req = {"profileId": pid, "name": "gpu_idle_gaps", "params": {"limit": 0, "minGapNs": 0}, "maxBytes": 1024}
    whole = server.request("analysis/run", {**req, "maxBytes": BIG})
    assert size({**whole, "rows": []}) > 1024
    rows, cursor = [], None
    for _ in range(len(whole["rows"])):
        page = server.request("analysis/run", {**req, **({"cursor": cursor} if cursor else {})})
        assert len(page["rows"]) == 1
        rows += page["rows"]
        cursor = page.get("next")
        if not cursor:
            break
    assert rows == whole["rows"]


def test_default_reply_unchanged(server, pid):
    """A reply within the cap has neither `truncated` nor `next`, and equals the
    same request with a larger cap."""
    a = server.request("analysis/run", {"profileId": pid, "name": "top_kernels"})
    b = server.request("analysis/run", {"profileId": pid, "name": "top_kernels", "maxBytes": BIG})
    assert a == b and "truncated" not in a and "next" not in a


def test_foreign_or_bad_cursor_refused(server, pid):
    first = server.request("analysis/run", {"profileId": pid, "name": "top_kernels", "params": {"limit": 0},
                                            "maxBytes": 1024})
    tok = first["next"]
    bad = [
        {"name": "top_kernels", "params": {"limit": 0, "names": "demangled"}, "cursor": tok},  # other params
        {"name": "nvtx_summary", "params": {"limit": 0}, "cursor": tok},                     # other analysis
        {"name": "top_kernels", "params": {"limit": 0}, "cursor": tok[:-1] + ("0" if tok[-1] != "0" else "1")},
        {"name": "top_kernels", "params": {"limit": 0}, "cursor": "x"},
    ]
    for b in bad:
        with pytest.raises(RpcError) as e:
            server.request("analysis/run", {"profileId": pid, "maxBytes": 1024, **b})
        assert e.value.code == -32602 and "cursor" in e.value.message
    for mb in (1023, 0, -1):
        with pytest.raises(RpcError) as e:
            server.request("analysis/run", {"profileId": pid, "name": "top_kernels", "maxBytes": mb})
        assert e.value.code == -32602


def test_report_cut_to_fit(server, pid):
    whole = server.request("report/generate", {"profileId": pid, "maxBytes": BIG})
    assert "truncated" not in whole
    cap = max(size(whole) // 3, 1024)
    cut = server.request("report/generate", {"profileId": pid, "maxBytes": cap})
    assert cut["truncated"] is True
    for k in ("findings", "totals", "counts", "window", "gpus", "file"):
        assert cut[k] == whole[k], k
    assert size(cut) <= cap or all(not a["rows"] for a in cut["analyses"].values())
    any_cut = False
    for name, a in whole["analyses"].items():
        c = cut["analyses"][name]
        assert c["summary"] == a["summary"]
        assert c["rows"] == a["rows"][:len(c["rows"])]
        if len(c["rows"]) < len(a["rows"]):
            any_cut = True
            assert c["truncated"] is True
        else:
            assert "truncated" not in c
    assert any_cut
    # the text rendering comes from the whole report
    text_whole = server.request("report/generate", {"profileId": pid, "format": "text", "maxBytes": BIG})
    text_cut = server.request("report/generate", {"profileId": pid, "format": "text", "maxBytes": 4096})
    assert text_cut["rendered"] == text_whole["rendered"]
