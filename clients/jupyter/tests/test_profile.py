"""`Profile` methods against the real server, checked against independent SQL where it applies."""
from __future__ import annotations

import itertools
import json
import re
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import nsys_ai_native
from nsys_ai_native import NsysAIError, widget
from nsys_ai_native._first_rows import first_tracks

from conftest import PROFILES, REPO, SQL, generate, need, need_real


@pytest.fixture()
def prof(small_profile: Path) -> nsys_ai_native.Profile:
    return nsys_ai_native.open(small_profile)


def test_info_matches_sql(prof: nsys_ai_native.Profile, small_profile: Path, sql: SQL) -> None:
    info = prof.info()
    assert info["path"] == str(small_profile)
    assert info["counts"]["kernels"] == sql.kernel_count(small_profile)
    s, e = prof.span()
    assert s < e and info["span"] == {"start": s, "end": e}
    assert "<table" in prof._repr_html_() and f"{info['counts']['kernels']:,}" in prof._repr_html_()


def test_top_kernels_dataframe_matches_sql(prof: nsys_ai_native.Profile, small_profile: Path, sql: SQL,
                                           methods: frozenset[str]) -> None:
    need(methods, "analysis/run")
    df = prof.top_kernels()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns[:8]) == ["name", "count", "totalNs", "avgNs", "minNs", "maxNs", "medianNs", "pctOfGpu"]
    assert df.attrs["name"] == "top_kernels" and "window" in df.attrs and "summary" in df.attrs
    ref = sql.top_kernels(small_profile)
    assert len(df) > 0
    for row in df.itertuples(index=False):
        count, total, mn, mx = ref[row.name]
        assert (row.count, row.totalNs, row.minNs, row.maxNs) == (count, total, mn, mx), row.name
    assert df["totalNs"].is_monotonic_decreasing
    plain = nsys_ai_native.open(small_profile, frames=False).top_kernels()
    assert isinstance(plain, dict) and plain["rows"][0]["name"] == df.iloc[0]["name"]


def test_analyze_errors(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    need(methods, "analysis/run")
    with pytest.raises(NsysAIError) as ei:
        prof.analyze("no_such_analysis")
    assert ei.value.code == -32010 and "no_such_analysis" in ei.value.message


def test_tracks_and_timeline_match_sql(prof: nsys_ai_native.Profile, small_profile: Path, sql: SQL,
                                       methods: frozenset[str]) -> None:
    need(methods, "timeline/tracks", "timeline/range")
    tracks = prof.tracks()
    assert {"id", "kind", "name"} <= set(tracks.columns)
    gpu_ids = set(tracks[tracks["kind"] == "gpu"]["id"])
    assert gpu_ids
    s, _ = prof.span()
    start, end = s + 20_000_000, s + 21_000_000  # 1 ms: few events per pixel at 4000 px
    df = prof.timeline(start, end, width=4000)
    assert df.attrs["start"] <= start and df.attrs["end"] >= end and df.attrs["resolution"] > 0
    gpu = df[df["track"].isin(gpu_ids)]
    assert set(gpu["type"]) <= {"event"}, "expected individual events in a 1 ms window"
    kernels = gpu[gpu["kind"] == "kernel"]
    assert len(kernels) == sql.kernels_in(small_profile, start, end) > 0
    raw = nsys_ai_native.open(small_profile, frames=False).timeline(start, end, width=4000)
    assert isinstance(raw, dict) and {t["id"] for t in raw["tracks"]} >= set(df["track"])


def test_raw_results_equal_decoded(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    need(methods, "timeline/range")
    s, e = prof.span()
    params = {"start": s, "end": e, "width": 800}
    decoded = prof.request("timeline/range", params)
    body = prof.request("timeline/range", params, raw=True)
    assert isinstance(body, bytes) and json.loads(body) == decoded
    kinds = {"buckets" if "buckets" in t else "events" for t in decoded["tracks"]}
    assert kinds == {"events", "buckets"}  # the whole small profile at 800 px mixes both
    assert json.loads(prof.request("profile/info", None, raw=True)) == prof.info()
    with pytest.raises(NsysAIError) as ei:  # errors are decoded and raised as usual
        prof.request("timeline/range", {"start": e, "end": s, "width": 10}, raw=True)
    assert ei.value.code == -32602


def assert_same_range(cols: dict, objects: dict, tol: float) -> None:
    """A widget reply (unpacked columns) holds exactly the items of the "objects" result."""
    names = cols["names"]
    nm = lambda k: None if k < 0 else names[k]  # noqa: E731
    assert [t["id"] for t in cols["tracks"]] == [t["id"] for t in objects["tracks"]]
    assert cols["resolution"] == objects["resolution"] and cols["start"] == objects["start"]
    for c, o in zip(cols["tracks"], objects["tracks"]):
        if "events" in o:
            ev = c["events"]
            assert len(ev["id"]) == len(o["events"])
            for i, e in enumerate(o["events"]):
                assert ev["id"][i] == e["id"] and nm(ev["name"][i]) == e.get("name")
                assert nm(ev["kind"][i]) == e.get("kind") and ev["depth"][i] == e.get("depth", 0)
                assert abs(ev["start"][i] - e["start"]) <= tol and abs(ev["end"][i] - e["end"]) <= tol, (i, e)
        else:
            b = c["buckets"]
            assert len(b["index"]) == len(o["buckets"])
            for i, ob in enumerate(o["buckets"]):
                lg = ob.get("longest") or {}
                assert objects["start"] + b["index"][i] * objects["resolution"] == ob["start"]
                assert b["count"][i] == ob["count"] and b["longestId"][i] == lg.get("id", -1)
                assert nm(b["longestName"][i]) == lg.get("name")
                assert abs(b["busyNs"][i] - ob["busyNs"]) <= max(1.0, ob["busyNs"] * 1e-7)
                assert abs(b["longestDur"][i] - lg.get("dur", 0)) <= max(1.0, lg.get("dur", 0) * 1e-7)


def decode_reply(msg: dict, buf: bytes) -> dict:
    """A widget range reply as a "columns" result: the server's JSON as is or deflated."""
    assert msg["format"] in ("json", "jsonz")
    res = json.loads(zlib.decompress(buf) if msg["format"] == "jsonz" else buf)
    assert res["format"] == "columns" and msg["source"] == "columns"
    return dict(res)


@pytest.mark.parametrize("wire", ["json", "jsonz"])
def test_widget_serves_range_requests(prof: nsys_ai_native.Profile, methods: frozenset[str], wire: str) -> None:
    need(methods, "timeline/tracks", "timeline/range")
    w = prof.show(wire=wire)
    sent: list[tuple[dict, list[bytes]]] = []
    w.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    s, e = prof.span()
    w._on_msg(w, {"id": 7, "kind": "range", "start": s, "end": (s + e) // 2, "width": 500, "inflate": True}, [])
    w._on_msg(w, {"id": 8, "kind": "range", "start": "x", "end": e, "width": 500}, [])
    w._on_msg(w, {"id": 9, "kind": "range", "start": e, "end": s, "width": 500}, [])
    (ok, bufs), (bad, _), (inverted, _) = sent
    assert ok["id"] == 7 and "error" not in ok and ok["format"] == wire and len(bufs) == 1
    result = decode_reply(ok, bufs[0])
    assert [t["id"] for t in result["tracks"]] == [t["id"] for t in w.tracks]
    assert result["start"] <= s and result["end"] >= (s + e) // 2
    # the columns say what the server's "objects" answer says
    objects = prof.request("timeline/range", {"start": s, "end": (s + e) // 2, "width": 500})
    assert_same_range(result, objects, tol=max(1.0, ((s + e) // 2 - s) * 2e-7))
    w._on_msg(w, {"id": 10, "kind": "range", "start": s, "end": e, "width": 300,
                  "tracks": [w.tracks[0]["id"]]}, [])
    assert [t["id"] for t in decode_reply(sent[-1][0], sent[-1][1][0])["tracks"]] == [w.tracks[0]["id"]]
    assert bad["id"] == 8 and "ValueError" in bad["error"]
    assert inverted["id"] == 9 and inverted["code"] == -32602  # the server's own validation
    kid = next(e["id"] for t in objects["tracks"] for e in t.get("events", []) if e.get("kind") == "kernel")
    w._on_msg(w, {"id": 11, "kind": "details", "opId": kid}, [])
    det = sent[-1][0]
    name = prof.kernel(kid)["name"]
    assert det["id"] == 11 and det["kind"] == "details" and "launched by" in det["html"]
    assert name.replace("_", "")[:20] in det["html"].replace("_", "") and "<table>" in det["html"]
    # `explain: false`: the details without the explanation, which "explain" answers on its own
    w._on_msg(w, {"id": 13, "kind": "details", "opId": kid, "explain": False}, [])
    w._on_msg(w, {"id": 14, "kind": "explain", "opId": kid}, [])
    core, ex = sent[-2][0], sent[-1][0]
    assert core["id"] == 13 and "launched by" in core["html"] and core["flow"] == det["flow"]
    assert ex["id"] == 14 and ex["kind"] == "explain" and len(ex["html"]) > 40
    inner = ex["html"].removeprefix('<div class="nsys-ai">').removesuffix("</div>")
    assert inner not in core["html"] and inner in det["html"]  # together: the whole panel
    del sent[-2:]
    w._on_msg(w, {"id": 12, "kind": "details", "opId": 10**8}, [])
    assert sent[-1][0]["id"] == 12 and "error" in sent[-1][0]
    del sent[-2:]
    assert w.served == 2 and w.last_ms > 0


def test_widget_jsonz_needs_inflate(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    """"jsonz" only for a front end that says it can inflate; else the JSON as is."""
    need(methods, "timeline/tracks", "timeline/range")
    w = prof.show(wire="jsonz")
    s, e = prof.span()
    msg, bufs = w.answer_range({"start": s, "end": e, "width": 300})
    assert msg["format"] == "json" and json.loads(bufs[0])["format"] == "columns"
    msg, bufs = w.answer_range({"start": s, "end": e, "width": 300, "inflate": True})
    raw = zlib.decompress(bufs[0])
    assert msg["format"] == "jsonz" and json.loads(raw)["format"] == "columns"
    assert msg["jsonBytes"] == len(raw)  # the browser inflates into a buffer of that size
    assert prof.show().wire == "jsonz"  # the default


DRAW_FIELDS = list(widget.DRAW_FIELDS)


@pytest.mark.parametrize("name, fields", [("FIELDS", widget.DRAW_FIELDS), ("BUCKET_FIELDS", widget.BUCKET_FIELDS)])
def test_fields_are_the_front_ends(name: str, fields: tuple) -> None:
    """The Python side's lists of columns are the front end's: the zoom's (DRAW_FIELDS: benches,
    fallbacks) and the bucket columns a view's "buckets" request is answered with."""
    # FIELDS is the VS Code client's TILE_FIELDS (one list for both timelines' zoom steps)
    where, const = (("vscode/src/client/tileColumns.ts", "TILE_FIELDS: readonly string[]") if name == "FIELDS"
                    else ("jupyter/js/src/range_client.ts", name))
    src = (Path(__file__).resolve().parents[2] / where).read_text()
    m = re.search(rf"export const {re.escape(const)} = (\[[^\]]*\]);", src)
    assert m, f"{name} not found in {where}"
    assert json.loads(m.group(1).replace("'", '"')) == list(fields)


def test_widget_fields_and_buckets(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    """A zoom asks for the columns drawing needs; each bucket's count and longest op come from a
    "bucket" request, and equal what the full reply says."""
    need(methods, "timeline/tracks", "timeline/range")
    w = prof.show()
    s, e = prof.span()
    full = prof.request("timeline/range", {"start": s, "end": e, "width": 400, "format": "columns"})
    msg, bufs = w.answer_range({"start": s, "end": e, "width": 400, "fields": DRAW_FIELDS})
    slim = json.loads(bufs[0])
    assert [t["id"] for t in slim["tracks"]] == [t["id"] for t in full["tracks"]]
    for ts, tf in zip(slim["tracks"], full["tracks"]):
        kind = "events" if "events" in tf else "buckets"
        got = ts[kind]
        want = [f for f in tf[kind] if f in DRAW_FIELDS]
        assert set(want) <= set(got)
        if kind == "buckets":  # the compact encodings, decoded to the full reply's columns
            assert set(got) == {"indexStep", "busyPct"}, (ts["id"], sorted(got))
            assert list(itertools.accumulate(got["indexStep"])) == tf[kind]["index"], ts["id"]
            r = full["resolution"]
            assert got["busyPct"] == [0 if b == 0 else min(100, -(-b * 100 // r)) for b in tf[kind]["busyNs"]]
        else:  # the others are left out
            assert set(got) == set(want), (ts["id"], sorted(got))
        for f in want:  # equal values (name and kind: the same strings, the tables may differ)
            if f in ("name", "kind"):
                assert [slim["names"][k] if k >= 0 else None for k in got[f]] == \
                    [full["names"][k] if k >= 0 else None for k in tf[kind][f]], (ts["id"], f)
            else:
                assert got[f] == tf[kind][f], (ts["id"], f)
    sent: list[dict] = []
    w.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    checked = 0
    for t in full["tracks"]:
        b = t.get("buckets")
        if not b:
            continue
        for j in range(0, len(b["index"]), max(1, len(b["index"]) // 4)):
            start = full["start"] + b["index"][j] * full["resolution"]
            w._on_msg(w, {"id": 100 + checked, "kind": "bucket", "track": t["id"], "start": start,
                          "resolution": full["resolution"]}, [])
            got = sent[-1]
            nm = b["longestName"][j]
            assert got["id"] == 100 + checked and "error" not in got, got
            assert (got["count"], got["busyNs"], got["longestId"], got["longestDur"]) == \
                (b["count"][j], b["busyNs"][j], b["longestId"][j], b["longestDur"][j])
            assert got["longestName"] == (full["names"][nm] if nm >= 0 else None)
            checked += 1
    assert checked > 0
    w._on_msg(w, {"id": 1, "kind": "bucket", "track": full["tracks"][0]["id"], "start": s, "resolution": 3}, [])
    assert "error" in sent[-1] and "resolution" in sent[-1]["error"]


def test_widget_first_view_sent_with_it(prof: nsys_ai_native.Profile, methods: frozenset[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """show() answers the first view (the widget's whole window, the tracks of the rows its first
    frame shows, DRAW_FIELDS) at the
    last plot width a range request told this kernel, and sends it with the widget's state: the
    server's reply for that request as its JSON (decoded synchronously by the page), deflated when
    that is over FIRST_MAX_BYTES (or NSYS_AI_WIDGET_FIRST_WIRE=jsonz), none when even that is; its
    meta names the request's window and width (the page asks for the view's bucket columns with them)."""
    need(methods, "timeline/tracks", "timeline/range")
    monkeypatch.setattr(widget.TimelineWidget, "plot_width", widget.FIRST_WIDTH)
    monkeypatch.delenv("NSYS_AI_WIDGET_FIRST_WIRE", raising=False)
    s, e = prof.span()
    for width in (widget.FIRST_WIDTH, 517):
        w = prof.show()
        meta = w._first_meta
        assert meta["width"] == width and meta["format"] == "json" and w.served == 0
        o = int(w.origin)
        assert (meta["start"], meta["end"]) == (s - o, e - o)  # offsets from the widget's origin
        ids = first_tracks(w.tracks, w.height)
        want = prof.request("timeline/range", {"start": s, "end": e, "width": width, "format": "columns",
                                               "fields": list(DRAW_FIELDS), **({"tracks": ids} if ids else {})})
        assert json.loads(w._first) == want and meta["jsonBytes"] == len(w._first)
        assert meta.get("tracks") == (len(ids) if ids else None)
        w.answer_range({"start": 0, "end": e - s, "width": 517, "inflate": True})  # a front end's request: remembered
        assert widget.TimelineWidget.plot_width == 517 and w.served == 1
        # the first view's other tracks, asked at its width after the first frame: not the page's width
        w.answer_range({"start": 0, "end": e - s, "width": 333, "inflate": True, "rest": True, "tracks": [w.tracks[-1]["id"]]})
        assert widget.TimelineWidget.plot_width == 517 and w.served == 2
    part = prof.show(start=s + (e - s) // 4, end=s + (e - s) // 2)
    got = json.loads(part._first)
    assert got["start"] <= s + (e - s) // 4 and got["end"] >= s + (e - s) // 2 and got["end"] < e
    plain = prof.show()._first
    monkeypatch.setenv("NSYS_AI_WIDGET_FIRST_WIRE", "jsonz")
    z = prof.show()
    assert z._first_meta["format"] == "jsonz" and zlib.decompress(z._first) == plain
    monkeypatch.delenv("NSYS_AI_WIDGET_FIRST_WIRE")
    # over the limit as JSON, not deflated: sent deflated
    monkeypatch.setattr(widget, "FIRST_MAX_BYTES", (len(z._first) + z._first_meta["jsonBytes"]) // 2)
    fallback = prof.show()
    assert fallback._first_meta["format"] == "jsonz" and zlib.decompress(fallback._first) == zlib.decompress(z._first)
    monkeypatch.setattr(widget, "FIRST_MAX_BYTES", 100)
    big = prof.show()
    assert big._first == b"" and big._first_meta == {}


def test_widget_first_view_rows_in_view(prof: nsys_ai_native.Profile, methods: frozenset[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The first view holds the tracks of the rows the widget's first frame shows (_first_rows.py,
    the page's default track tree): fewer in a shorter widget, those of a taller one's first rows
    too (GPU rows come first), never a collapsed NVTX row's deeper depths; every track when every
    row fits, or with NSYS_AI_WIDGET_FIRST_ALL=1. The browser test checks that the page's first
    frame needed no other track (no request) and that the rest come after it."""
    need(methods, "timeline/tracks", "timeline/range")
    monkeypatch.delenv("NSYS_AI_WIDGET_FIRST_ALL", raising=False)
    monkeypatch.delenv("NSYS_AI_WIDGET_FIRST_WIRE", raising=False)
    held = {h: {t["id"] for t in json.loads(prof.show(height=h)._first)["tracks"]} for h in (120, 200, 10000)}
    kinds = {t["id"]: t for t in prof.request("timeline/tracks")["tracks"]}
    assert 0 < len(held[120]) < len(held[200]) < len(held[10000]) < len(kinds)
    assert held[120] <= held[200] <= held[10000]
    assert {kinds[i]["kind"] for i in held[120]} <= {"gpu", "nvtxProjected"}
    deeper = {i for i, t in kinds.items() if t["kind"] in ("nvtx", "nvtxProjected") and t.get("depth", 0) > 0}
    assert deeper and not deeper & held[10000] and held[10000] | deeper == set(kinds)
    monkeypatch.setenv("NSYS_AI_WIDGET_FIRST_ALL", "1")
    every = prof.show(height=120)
    assert {t["id"] for t in json.loads(every._first)["tracks"]} == set(kinds) and "tracks" not in every._first_meta


BUCKET_FIELDS = list(widget.BUCKET_FIELDS)


def test_widget_bucket_columns_of_a_view(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    """"buckets" (asked by the page once a view is drawn, with that view's window and width) answers
    the GPU tracks' bucket columns on the same grid as the view's range reply, deflated: each
    bucket's count, busy time and longest op equal a "bucket" request's (a one-pixel
    timeline/range of its own), for a zoomed-out and a zoomed-in view."""
    need(methods, "timeline/tracks", "timeline/range")
    w = prof.show()
    s, e = prof.span()
    gpu = [t["id"] for t in w.tracks if t["kind"] == "gpu"][:4]
    sent: list[tuple[dict, list]] = []
    w.send = lambda content, buffers=None: sent.append((content, buffers or []))  # type: ignore[method-assign]
    checked = 0
    s, e = s - int(w.origin), e - int(w.origin)  # the page's offsets
    for a, b, width in ((s, e, 300), (s + (e - s) // 3, s + (e - s) // 3 + (e - s) // 50, 777)):
        w._on_msg(w, {"id": 1, "kind": "range", "start": a, "end": b, "width": width, "tracks": gpu,
                      "fields": DRAW_FIELDS, "inflate": True}, [])
        view = json.loads(zlib.decompress(sent[-1][1][0]))
        w._on_msg(w, {"id": 2, "kind": "buckets", "start": a, "end": b, "width": width, "tracks": gpu,
                      "fields": ["ignored"], "inflate": True}, [])
        msg, bufs = sent[-1]
        assert msg["kind"] == "buckets" and msg["id"] == 2 and msg["format"] == "jsonz" and "error" not in msg
        cols = json.loads(zlib.decompress(bufs[0]))
        assert (cols["start"], cols["resolution"]) == (view["start"], view["resolution"])
        for t, tv in zip(cols["tracks"], view["tracks"]):
            assert t["id"] == tv["id"]
            if "buckets" not in tv:
                continue
            bk = t["buckets"]
            assert set(bk) == set(BUCKET_FIELDS) and bk["indexStep"] == tv["buckets"]["indexStep"]
            index = [sum(bk["indexStep"][:j + 1]) for j in range(len(bk["indexStep"]))]
            for j in range(0, len(index), max(1, len(index) // 5)):
                start = cols["start"] + index[j] * cols["resolution"]
                one = w.bucket({"track": t["id"], "start": start, "resolution": cols["resolution"]})
                name = cols["names"][bk["longestName"][j]] if bk["longestName"][j] >= 0 else None
                assert (bk["count"][j], bk["busyNs"][j], bk["longestId"][j], bk["longestDur"][j], name) == \
                    (one["count"], one["busyNs"], one["longestId"], one["longestDur"], one["longestName"])
                checked += 1
    assert checked >= 10


def test_widget_bucket_details_in_one_request(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    """A click on a bucket asks "details" (and "explain") naming the bucket: answered for the
    bucket's longest op (the full reply's longestId), opId -1 and nothing shown when no op starts in it."""
    need(methods, "timeline/tracks", "timeline/range")
    w = prof.show()
    s, e = prof.span()
    full = prof.request("timeline/range", {"start": s, "end": e, "width": 400, "format": "columns"})
    sent: list[dict] = []
    w.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    seen = {"op": 0, "empty": 0}
    for t in full["tracks"]:
        b = t.get("buckets")
        if not b or not t["id"].startswith("gpu:"):
            continue
        for j in range(0, len(b["index"]), max(1, len(b["index"]) // 6)):
            start = full["start"] + b["index"][j] * full["resolution"]
            bucket = {"track": t["id"], "start": start, "resolution": full["resolution"]}
            w._on_msg(w, {"id": 7, "kind": "details", "explain": False, "bucket": bucket}, [])
            got = sent[-1]
            assert "error" not in got and got["opId"] == b["longestId"][j], (got, b["longestId"][j])
            if got["opId"] >= 0:
                name = full["names"][b["longestName"][j]]
                assert name.split("<")[0] in got["html"] and got["flow"] is not None
                w._on_msg(w, {"id": 8, "kind": "explain", "bucket": bucket}, [])
                assert sent[-1]["opId"] == got["opId"] and "error" not in sent[-1]
                seen["op"] += 1
            else:
                assert got["html"] == "" and got["flow"] is None
                seen["empty"] += 1
    assert seen["op"] > 0, seen
    w._on_msg(w, {"id": 9, "kind": "details", "bucket": {"track": "gpu:0:7", "start": s, "resolution": 3}}, [])
    assert "error" in sent[-1] and "resolution" in sent[-1]["error"]


def test_nvtx_tree_frame(prof: nsys_ai_native.Profile, small_profile: Path, sql: SQL, methods: frozenset[str]) -> None:
    need(methods, "nvtx/tree")
    df = prof.nvtx_tree()
    assert {"depth", "name", "path", "start", "end", "opCount"} <= set(df.columns)
    roots = df.attrs["roots"]
    assert (df["depth"] == 0).sum() == len(roots) > 0
    assert set(df["name"]) <= sql.nvtx_names(small_profile)
    child = df[df["depth"] == 2].iloc[0]
    assert child["path"].count(" > ") == 2
    plain = nsys_ai_native.open(small_profile, frames=False).nvtx_tree()
    assert isinstance(plain, list) and plain[0]["name"] == roots[0]["name"]
    tree = prof.tree()
    assert tree.total == len(roots)


def test_tree_widget_lazy_children(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    need(methods, "nvtx/tree")
    full = prof.request("nvtx/tree", {"maxDepth": 65535, "limit": 10**9, "maxBytes": 2**40})["nodes"]
    w = prof.tree()
    sent: list[dict] = []
    w.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    w._on_msg(w, {"id": 1, "kind": "roots", "offset": 0, "limit": 3}, [])
    page = sent[-1]
    assert page["total"] == len(full) and [n["name"] for n in page["nodes"]] == [n["name"] for n in full[:3]]
    # walk down the first deep path: each level's children equal the full tree's
    i = next(k for k, n in enumerate(full) if any(c.get("children") for c in n["children"]))
    w._on_msg(w, {"id": 2, "kind": "roots", "offset": i, "limit": 1}, [])
    node, ref = sent[-1]["nodes"][0], full[i]
    for level in range(3):
        assert node["childCount"] in (None, len(ref["children"]))
        w._on_msg(w, {"id": 10 + level, "kind": "children", "key": node["key"]}, [])
        kids = sent[-1]["nodes"]
        assert [(k["name"], k["start"], k["opCount"]) for k in kids] == \
            [(c["name"], c["start"], c["opCount"]) for c in ref["children"]]
        nxt = next((j for j, c in enumerate(ref["children"]) if c["children"]), None)
        if nxt is None:
            break
        node, ref = kids[nxt], ref["children"][nxt]
    assert level >= 1
    w._on_msg(w, {"id": 99, "kind": "children", "key": {"path": [0], "depth": "x"}}, [])
    assert "error" in sent[-1]
    agg = prof.tree(aggregate=True)
    agg.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    agg._on_msg(agg, {"id": 1, "kind": "roots"}, [])
    first = sent[-1]["nodes"][0]
    agg._on_msg(agg, {"id": 2, "kind": "children", "key": first["key"]}, [])
    assert len(sent[-1]["nodes"]) == first["childCount"]


def test_kernels_at(tagged_profile: Path, methods: frozenset[str]) -> None:
    need(methods, "source/kernelsAt", "source/map")
    p = nsys_ai_native.open(tagged_profile)
    m = p.request("source/map", {"workspaceRoot": str(tagged_profile.parent)})
    f = m["files"][0]
    line = max(f["lines"], key=lambda ln: ln["count"])
    df = p.kernels_at(f["file"], line["line"], workspace_root=tagged_profile.parent)
    assert df.attrs["count"] == line["count"] > 0
    assert set(df["name"]) == {k["name"] for k in line["kernels"]}
    empty = p.kernels_at(f["file"], 999999)
    assert len(empty) == 0 and empty.attrs["count"] == 0


def test_explain_is_rich(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    need(methods, "kernel/explain", "analysis/run")
    name = prof.top_kernels().iloc[0]["name"]
    ex = prof.explain(name)
    assert isinstance(ex, dict) and ex["name"] == name
    md = ex._repr_markdown_()
    assert md == ex["markdown"] and len(md) > 40
    assert "<" in ex._repr_html_()
    with pytest.raises(NsysAIError) as ei:
        prof.explain(10**9)
    assert ei.value.code in (-32008, -32602)


def test_report_is_rich(prof: nsys_ai_native.Profile, methods: frozenset[str]) -> None:
    need(methods, "report/generate")
    rep = prof.report()
    assert isinstance(rep.get("findings"), list)
    md = rep._repr_markdown_()
    assert md.strip() and rep._repr_html_().startswith("<div")
    # the findings are one numbered list in the HTML too (not a list per finding, each "1.")
    findings_html = rep._repr_html_().split("<h2>Findings", 1)[1].split("<h2>", 1)[0]
    assert findings_html.count("<ol") == 1 and findings_html.count("<li>") == len(rep["findings"]) > 0
    f = rep.findings
    assert len(f) == len(rep["findings"])


def test_diff(small_profile: Path, small_profile_b: Path, methods: frozenset[str]) -> None:
    need(methods, "profile/diff")
    a = nsys_ai_native.open(small_profile)
    d = a.diff(small_profile_b, thresholds={"step": 5, "families": {"gemm": 10}}, limit=5, iteration_limit=3)
    assert isinstance(d, dict) and d.verdict in ("faster", "slower", "no_change", "incomparable", "unknown")
    assert d["verdict"]["text"] in d._repr_markdown_() and "<table>" in d._repr_html_()
    assert len(d.deltas) == len(d["deltas"]) <= 5 and list(d.components["component"]) == [
        "step", "compute", "ncclExposed", "idle", "copies", "launchOverhead"]
    its = d.iterations
    assert set(its["side"]) <= {"base", "compare"} and len(its) == len(d["iterations"]["base"]) + len(d["iterations"]["compare"])
    assert d.gate is not None and d.gate["status"] in ("pass", "regression", "incomparable")
    same = a.diff(a)
    assert same.verdict == "no_change" and same.gate is None and all(x["deltaNs"] == 0 for x in same["deltas"])


def test_real_profile(methods: frozenset[str]) -> None:
    path = need_real("nsys2026_h100_2gpu_1s")
    p = nsys_ai_native.open(path)
    info = p.info()
    assert info["counts"]["kernels"] == SQL().kernel_count(path)
    s, e = p.span()
    tl = p.timeline(s, e, width=1500)
    assert tl.attrs["start"] <= s and tl.attrs["end"] >= e and len(tl) > 0
    df = p.top_kernels()
    ref = SQL().top_kernels(path)
    top = df.iloc[0]
    assert (top["count"], top["totalNs"]) == ref[top["name"]][:2]


def test_search_and_kernel_details(prof: nsys_ai_native.Profile, small_profile: Path, sql: SQL,
                                   methods: frozenset[str]) -> None:
    need(methods, "search", "kernel/details", "timeline/range")
    ref = sql.top_kernels(small_profile)
    name = next(n for n in ref if n.startswith("nccl"))
    df = prof.search(name)
    hit = df[(df["kind"] == "kernel") & (df["name"] == name)]
    assert len(hit) == 1 and int(hit.iloc[0]["count"]) == ref[name][0] and int(hit.iloc[0]["totalNs"]) == ref[name][1]
    assert df.attrs["query"] == name
    # an event id from the timeline names the same op in kernel/details
    s, _ = prof.span()
    tl = prof.timeline(s + 20_000_000, s + 21_000_000, width=4000)
    ev = tl[(tl["type"] == "event") & (tl["kind"] == "kernel")].iloc[0]
    d = prof.kernel(int(ev["id"]))
    assert (d["name"], d["start"], d["end"]) == (ev["name"], ev["start"], ev["end"])
    with pytest.raises(NsysAIError):
        prof.kernel(10**8)


@pytest.mark.parametrize("path", sorted(PROFILES.glob("*.sqlite")) if PROFILES.is_dir() else [],
                         ids=lambda p: p.stem)
def test_every_real_profile_displays(path: Path, methods: frozenset[str]) -> None:
    """Every real export (old schemas, no kernels, no metadata, non-UTF-8) gives a timeline
    range, a tree page, top kernels and a report without an error."""
    need(methods, "timeline/range", "nvtx/tree", "analysis/run", "report/generate")
    p = nsys_ai_native.open(path)
    s, e = p.span()
    w = p.show()
    msg, bufs = w.answer_range({"start": s, "end": e, "width": 1000})
    res = decode_reply(msg, bufs[0])
    assert [t["id"] for t in res["tracks"]] == [t["id"] for t in w.tracks]
    assert_same_range(res, p.request("timeline/range", {"start": s, "end": e, "width": 1000}),
                      tol=max(1.0, (e - s) * 2e-7))
    sent: list[dict] = []
    tree = p.tree()
    tree.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    tree._on_msg(tree, {"id": 1, "kind": "roots"}, [])
    assert sent[0]["total"] == tree.total and "error" not in sent[0]
    top = p.top_kernels()
    kernels = SQL().kernel_count(path)
    assert (len(top) == 0) == (kernels == 0) and top["count"].sum() <= kernels
    assert p.report().markdown.strip()


def test_widget_epoch_clock_offsets(gen_dir: Path, methods: frozenset[str]) -> None:
    """On an epoch-clocked profile (times ~1.78e18, beyond 2^53) the front end sees offsets
    from an exact origin: span and view are small integers, a range request in offsets asks
    the server for origin + offset, a bucket request too, and the details panel prints the
    export's start and end digit for digit."""
    need(methods, "timeline/tracks", "timeline/range", "kernel/details")
    path = generate(gen_dir / "epoch.sqlite", "--preset", "small", "--epoch-clock")
    p = nsys_ai_native.open(path)
    s, e = p.span()
    assert s > 2**53
    w = p.show()
    o = int(w.origin)
    assert o == widget.clock_origin(s, e) and o % (1 << 40) == 0 and 0 <= s - o < 1 << 40
    assert w.span == {"start": s - o, "end": e - o} and w.span["end"] < 2**53
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
        k0, k1 = c.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1 OFFSET 7").fetchone()
    msg, bufs = w.answer_range({"start": k0 - o, "end": k0 - o + 1, "width": 1})
    r = json.loads(bufs[0])
    assert r["start"] <= k0 < r["end"] and r["start"] > 2**53, "the server was asked on its own clock"
    ids = [i for t in r["tracks"] if "events" in t for i, st in zip(t["events"]["id"], t["events"]["start"]) if st == k0]
    assert ids, "the kernel starting at k0 is in the reply"
    html = w.details_html(ids[0])
    assert f"start {k0} ns" in html and f"end {k1} ns" in html
    small = nsys_ai_native.open(generate(gen_dir / "small.sqlite", "--preset", "small")).show()
    assert small.origin == "0", "small clocks keep their times"


def test_widget_launch_flow_both_ways(gen_dir: Path, methods: frozenset[str]) -> None:
    """A kernel's details carry its launch flow (call and op, as offsets); the call's launched ops,
    found by binary search per GPU track, include that kernel and only ops kernel/details says
    the call launched, on small and epoch clocks."""
    need(methods, "timeline/tracks", "kernel/details")
    for path in (generate(gen_dir / "small.sqlite", "--preset", "small"),
                 generate(gen_dir / "epoch.sqlite", "--preset", "small", "--epoch-clock")):
        p = nsys_ai_native.open(path)
        w = p.show()
        o = int(w.origin)
        for op in (3, 281, 990, 1500):
            d = p.kernel(op)
            f = w._flow(d)
            assert f is not None and f["ops"][0]["start"] == int(d["start"]) - o
            api = f["api"]
            got = w.launched({"apiId": api["id"], "apiTrack": api["track"], "start": api["start"], "end": api["end"]})
            assert op in [x["id"] for x in got["ops"]], (path.name, op, got)
            for x in got["ops"]:
                assert p.kernel(x["id"])["api"]["id"] == api["id"]
