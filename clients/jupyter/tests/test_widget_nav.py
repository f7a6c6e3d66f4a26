"""The timeline widget's navigation, Python side: `w.view` reads and sets the visible window
in exact ints on the profile's clock (epoch clocks included), `w.selection` reads the area
selection, the search box's pages (search's instances, offsets in and out) and the range's
analyses (analysis/run over the selection) agree with the server asked directly and with SQL."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Optional

import pytest

import nsys_ai_native

from conftest import generate, need


@pytest.mark.parametrize("clock", ["small", "epoch"])
def test_view_selection_search_and_range(gen_dir: Path, methods: frozenset[str], clock: str) -> None:
    need(methods, "search", "analysis/run", "timeline/tracks")
    args = ["--preset", "small"] + (["--epoch-clock"] if clock == "epoch" else [])
    path = generate(gen_dir / f"{clock}.sqlite", *args)
    p = nsys_ai_native.open(path)
    s, e = p.span()
    w = p.show()
    o = int(w.origin)
    assert w.view == (s, e) and all(type(t) is int for t in w.view)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as c:
        ks = [r for r in c.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName '
                                   "WHERE n.value LIKE '%nccl%' ORDER BY start, k.rowid")]
    assert len(ks) > 10
    # w.view = (start, end): exact, as offsets for the front end
    w.view = (ks[3][0], ks[3][1] + 1)
    assert w.view == (ks[3][0], ks[3][1] + 1)
    assert w._view == {"start": ks[3][0] - o, "end": ks[3][1] + 1 - o}
    with pytest.raises(ValueError):
        w.view = (5, 5)
    # the selection the front end writes (offsets) reads back exactly
    assert w.selection is None
    w._selection = {"start": ks[2][0] - o, "end": ks[9][1] - o}
    assert w.selection == (ks[2][0], ks[9][1])
    # the search box: from the first match at or after a time, then by offset; within a window
    page = w.search_page({"query": "nccl", "instances": 5, "at": ks[4][0] - o})
    direct = p.request("search", {"query": "nccl", "limit": 1, "instances": 5, "at": ks[4][0]})["instances"]
    assert page["total"] == direct["total"] and page["offset"] == direct["offset"]
    assert [(it["start"] + o, it["end"] + o) for it in page["items"]] == [(it["start"], it["end"]) for it in direct["items"]]
    kern = [it for it in page["items"] if it["kind"] == "kernel"]
    assert kern and (kern[0]["start"] + o, kern[0]["end"] + o) in ks
    nxt = w.search_page({"query": "nccl", "instances": 5, "offset": page["offset"] + 5})
    assert nxt["offset"] == page["offset"] + 5
    inside = w.search_page({"query": "nccl", "instances": 1000, "start": ks[2][0] - o, "end": ks[9][1] - o})
    assert inside["total"] == p.request("search", {"query": "nccl", "start": ks[2][0], "end": ks[9][1]})["matches"]
    # the range panel's analyses: the server's, over the same window
    a = w.analysis({"name": "top_kernels", "start": ks[2][0] - o, "end": ks[9][1] - o, "limit": 5})
    b = p.request("analysis/run", {"name": "top_kernels", "params": {"start": ks[2][0], "end": ks[9][1], "limit": 5}})
    assert a["summary"] == b["summary"] and a["rows"] == b["rows"] and a["summary"]["kernelCount"] >= 8
    # what the panel asks (nav_ui.ts AREA_PARAMS: summaries only) answers the full analyses' summaries
    win = {"start": ks[2][0] - o, "end": ks[9][1] - o}
    ov = w.analysis({"name": "overlap", **win, "perIteration": False})
    full = p.request("analysis/run", {"name": "overlap", "params": {"start": ks[2][0], "end": ks[9][1]}})
    assert not ov["summary"].get("iterations") and ov["summary"]["total"] == full["summary"]["total"]
    for name in ("gpu_idle_gaps", "kernel_launch_overhead"):
        one = w.analysis({"name": name, **win, "limit": 1})
        full = p.request("analysis/run", {"name": name, "params": {"start": ks[2][0], "end": ks[9][1]}})
        assert len(one["rows"]) <= 1 and one["summary"] == full["summary"], name
    # the panel's one "analyses" message: one reply per analysis (its name), each the analysis's
    # own; asked again, the same window is answered from the answers held (no server request)
    panel = {"top_kernels": {"limit": 5}, "overlap": {"perIteration": False}, "gpu_idle_gaps": {"limit": 1},
             "kernel_launch_overhead": {"limit": 1}}
    w._analyses_held.clear()  # (the calls above were held)
    for again in (False, True):
        sent: list = []
        w.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
        calls = {"n": 0}
        request = p.request

        def counting(method: str, params: Optional[dict] = None, **kw: Any) -> Any:
            calls["n"] += method == "analysis/run"
            return request(method, params, **kw)
        p.request = counting  # type: ignore[method-assign]
        try:
            w._on_msg(w, {"id": 7, "kind": "analyses", **win, "names": list(panel), "params": panel}, [])
        finally:
            p.request = request  # type: ignore[method-assign]
            del w.send
        assert [m["name"] for m in sent] == list(panel) and all(m["id"] == 7 and m["kind"] == "analyses" for m in sent)
        assert calls["n"] == (0 if again else 4)
        for m in sent:
            params = {"start": ks[2][0], "end": ks[9][1], **panel[m["name"]]}
            one = p.request("analysis/run", {"name": m["name"], "params": params})
            full = p.request("analysis/run", {"name": m["name"], "params": {"start": ks[2][0], "end": ks[9][1]}})
            assert m["summary"] == one["summary"] and m["rows"] == one["rows"], m["name"]
            if m["name"] == "overlap":
                assert m["summary"]["total"] == full["summary"]["total"]
            else:
                assert m["summary"] == full["summary"], m["name"]


def test_explanations_cancelled(small_profile: Path, methods: frozenset[str]) -> None:
    """An explanation asked again for another op cancels the ones asked before (queued: no reply),
    and `{kind: "cancel", of}` drops one; the latest is answered."""
    need(methods, "kernel/explain")
    p = nsys_ai_native.open(small_profile)
    w = p.show()
    s = p.span()[0]
    got = p.request("timeline/range", {"start": s + 20_000_000, "end": s + 21_000_000, "width": 4000})
    ids = sorted({int(e["id"]) for t in got["tracks"] for e in t.get("events", []) if e.get("kind") == "kernel"})
    assert len(ids) >= 3
    import queue
    w._queues = {k: queue.SimpleQueue() for k in nsys_ai_native.widget.WORKERS}  # queued, served by hand below
    sent: list = []
    w.send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    w._on_msg(w, {"id": 1, "kind": "explain", "opId": ids[0]}, [])
    w._on_msg(w, {"id": 2, "kind": "explain", "opId": ids[1]}, [])  # another op clicked: 1 cancelled
    w._on_msg(w, {"id": 3, "kind": "explain", "opId": ids[2]}, [])  # ... and 2
    w._on_msg(w, {"kind": "cancel", "of": 3}, [])                   # 3 dropped by the page
    w._on_msg(w, {"id": 4, "kind": "explain", "opId": ids[2]}, [])
    q = w._queues["explain"]
    w._queues = None
    while not q.empty():
        w._serve(q.get())
    assert [(m["id"], m.get("error")) for m in sent] == [(4, None)] and "html" in sent[0]


def test_frames_exact_ints_and_units(gen_dir: Path, methods: frozenset[str]) -> None:
    """DataFrames keep every integer exact on an epoch clock: a column with gaps (an NVTX range
    with no GPU work has no gpuStart) is nullable Int64, not float64; the ns columns are named
    in df.attrs["units"]."""
    need(methods, "nvtx/tree", "analysis/run")
    p = nsys_ai_native.open(generate(gen_dir / "epoch.sqlite", "--preset", "small", "--epoch-clock"))
    df = p.nvtx_tree()
    raw = p.nvtx_tree()
    p.frames = False
    flat = []
    stack = list(reversed(p.nvtx_tree()))
    while stack:
        n = stack.pop()
        flat.append(n)
        stack.extend(reversed(n.get("children") or []))
    assert len(flat) == len(raw)
    gs = [n.get("gpuStart") for n in flat]
    assert any(g is None for g in gs) and any(g is not None and g > 2**53 for g in gs)
    assert str(df["gpuStart"].dtype) == "Int64" and str(df["start"].dtype) == "int64"
    assert [None if v is None else v for v in gs] == [None if x is _pd_na() else int(x) for x in df["gpuStart"]]
    assert df.attrs["units"]["gpuStart"] == "ns" and df.attrs["units"]["kernelNs"] == "ns" and "name" not in df.attrs["units"]
    p.frames = True
    top = p.top_kernels()
    assert top.attrs["units"]["totalNs"] == "ns" and str(top["totalNs"].dtype) == "int64"


def _pd_na():
    import pandas as pd
    return pd.NA


def test_show_marks_rows_by_exact_name(small_profile: Path, methods: frozenset[str]) -> None:
    """`w.show(rows)`: top_kernels rows name kernels, nvtx_tree rows NVTX ranges, search rows their
    own kind; counts and totals are the whole profile's, by exact name (SQL); the front end's
    pages for an entry hold only its instances; None clears; bad input is a ValueError."""
    need(methods, "search", "analysis/run", "nvtx/tree")
    p = nsys_ai_native.open(small_profile)
    w = p.show()
    o = int(w.origin)
    top = p.top_kernels(limit=3)
    with sqlite3.connect(f"file:{small_profile}?mode=ro", uri=True) as c:
        def kernels(name: str) -> list[tuple[int, int]]:
            return list(c.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName '
                                  "WHERE n.value = ? ORDER BY start", (name,)))

        def ranges(name: str) -> list[tuple[int, int]]:
            return list(c.execute('SELECT start, "end" FROM NVTX_EVENTS WHERE text = ? AND "end" IS NOT NULL '
                                  "AND eventType IN (59, 60) ORDER BY start", (name,)))

        assert w.show(top) is w
        assert [(m["kind"], m["name"]) for m in w.marked] == [("kernel", n) for n in top["name"]]
        for m in w.marked:
            ref = kernels(m["name"])
            assert m["count"] == len(ref) > 0 and m["totalNs"] == sum(e - s for s, e in ref)
            page = w.search_page({"query": m["name"], "exact": True, "kinds": ["kernel"], "instances": 10000})
            assert [(it["start"] + o, it["end"] + o) for it in page["items"]] == ref
        tree = p.nvtx_tree(maxDepth=1)
        w.show(tree.head(2))
        assert [m["kind"] for m in w.marked] == ["nvtx", "nvtx"]
        for m in w.marked:
            assert m["count"] == len(ranges(m["name"])) > 0
        assert {m["kind"] for m in w.show(p.search("nccl")).marked} == {"kernel", "nvtx"}
        assert w.show(top.iloc[0]).marked[0]["name"] == top["name"][0]
        assert w.show([top["name"][0][:-1]]).marked[0]["count"] == 0  # a prefix is not the name
    assert w.show(None).marked == [] and w._marks == []
    with pytest.raises(ValueError):
        w.show(["setup"], kind="api")
    with pytest.raises(ValueError):
        w.show([{"count": 3}])
