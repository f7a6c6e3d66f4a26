"""Notebook widgets (anywidget): the zoomable timeline and the NVTX tree.

The timeline's front end asks for data with custom messages
`{id, kind: "range", start, end, width, tracks?, fields?, inflate?}`; the Python side
answers each with `timeline/range` in the server's compact "columns" format, restricted
to `fields` (the columns drawing needs), as one binary buffer: the server's JSON as is
("json"), deflated ("jsonz", when the browser can inflate: a zoom step's bytes are what
the notebook's messaging pays for); or with `{id, kind, error, code}`. The first view is
answered at show() and sent with the widget's state (`_first`, a binary buffer), so the first
frame needs no request. What drawing does not need is asked for when it is
shown: `{id, kind: "bucket", track, start, resolution}` answers one bucket's count and
longest op (the tooltip), `{id, kind: "details", opId | bucket, explain?}` the details panel of
an op, or of a bucket's longest op (`bucket`: {track, start, resolution}, one round trip for a
click on a bucket; the reply's `opId` says which, -1: none) (`explain: false`: without the
explanation, which `{id, kind: "explain", opId | bucket}` answers beside it),
`{id, kind: "buckets", start, end, width, tracks}` the bucket columns of a view's GPU rows
(BUCKET_FIELDS, on the view's grid: asked once the view is drawn, so that hovers and clicks need no
request), `{id, kind: "search", query, exact?, kinds?, instances, offset? | at?, start?, end?}` a page of
search's instances (the search box's next/previous, the outlines of the rows `w.show(rows)`
marks; times as the front end's offsets) and
`{id, kind: "analysis", name, start, end, limit?, perIteration?}` an analysis of the area selection,
`{id, kind: "analyses", start, end, names, params?: {name: {limit?, perIteration?}}}` several in one
message, answered by one `{id, kind: "analyses", name, summary, rows}` (or `{id, kind, name, error,
code}`) per name as each is done (the area selection's panel: one message up, the analyses side by
side; the answers of the last ANALYSES_HELD windows held). In a kernel, requests are served on worker
threads (ranges, buckets, details, explanations and searches each on their own, analyses on four:
`WORKERS`), so a slow explanation never holds up a zoom and the kernel's message loop never waits on
the server; `{kind: "cancel", of: id}` drops an explanation not yet answered (cancelled on the
server if it is being worked on; no reply), and a new "explain" cancels every earlier one (a click
on another op). `{id, kind: "ping"}` is answered at once (the bench's empty round trip).
"""
from __future__ import annotations

import os
import pathlib
import queue
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any, Optional

import anywidget
import traitlets

from ._first_rows import first_tracks
from ._preload import in_kernel
from ._server import Cancel
from .errors import CANCELLED, NsysAIError

if TYPE_CHECKING:
    from .profile import Profile

STATIC = pathlib.Path(__file__).parent / "static"
# range reply layouts (TimelineWidget.answer_range)
WIRES = ("jsonz", "json")
# The timeline/range columns the front end's zoom steps ask for (js/src/range_client.ts
# FIELDS, which is clients/vscode/src/client/tileColumns.ts TILE_FIELDS; a test checks that
# they agree): what drawing, the event tooltip and a click need.
DRAW_FIELDS = ("id", "start", "end", "name", "kind", "indexStep", "busyPct")
# The bucket columns a tooltip and a click need beyond drawing's, asked for the GPU rows in view
# once a view is drawn ("buckets" messages; js/src/range_client.ts BUCKET_FIELDS, checked alike).
BUCKET_FIELDS = ("indexStep", "count", "busyNs", "longestId", "longestDur", "longestName")
# The plot width (px) the first view is answered at when show() builds the widget (the front end
# draws it in its first frame, no round trip, when its own width puts the view on the same grid:
# range_client.ts gridResolution); after a range request, that request's width (the last
# widget's plot width in this kernel).
FIRST_WIDTH = 960
# A first view larger than this (bytes sent: its JSON, else deflated) is not sent with the widget (the
# front end asks).
FIRST_MAX_BYTES = 1 << 20
# worker threads per kind of request in a kernel: an area selection asks for 4 analyses at once
# (70-500 ms each at 10M kernels), answered side by side (the server serves requests concurrently)
WORKERS = {"range": 1, "bucket": 1, "details": 1, "explain": 1, "search": 1, "analysis": 4}
# the area analyses' answers held per window (a drag over the whole profile asked again, or the
# widget shown again, answered from memory)
ANALYSES_HELD = 16


_ALIGN = 1 << 40
_SMALL = 1 << 50


def clock_origin(start: int, end: int) -> int:
    """The origin of the front end's clock (clockOrigin in clients/vscode/src/client/exactJson.ts,
    which the widget imports: the same rule):
    0 when the profile's span is within ±2^50 ns, else its start rounded down to a multiple of
    2^40 ns. The front end draws in offsets from it, numbers exact below 2^53 ns, where an
    epoch clock's absolute times (~1.7e18) would round to 256 ns in JavaScript."""
    if -_SMALL < start < _SMALL and -_SMALL < end < _SMALL:
        return 0
    return start - start % _ALIGN


def _bundle(name: str) -> pathlib.Path:
    path = STATIC / name
    if not path.exists():
        raise RuntimeError(f"nsys_ai_native widget bundle {path} is missing: build it with "
                           "`npm ci && npm run build` in clients/jupyter/js (the wheel build does this)")
    return path


class TimelineWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A canvas timeline of a profile, with Nsight Systems' and Perfetto's input (Ctrl+wheel
    zooms at the cursor, the wheel and drag pan, W/A/S/D, a drag on the time axis selects a
    range, `/` searches, `?` lists the keys). Every view change is one `timeline/range` request.

    `w.view` is the visible window on the profile's clock, exact ints (set it to move the
    widget: `w.view = (start, end)`); `w.selection` the area selection (or None)."""

    _esm = _bundle("timeline.js")
    tracks: Any = traitlets.List().tag(sync=True)
    # times the front end sees are offsets from `origin` (a decimal string: exact in JavaScript)
    origin = traitlets.Unicode("0").tag(sync=True)
    span = traitlets.Dict().tag(sync=True)
    # the window shown, as offsets from origin (both ways: the front end writes it after each
    # view change, Python's `view` setter moves the widget); `view` is the exact public face
    _view = traitlets.Dict().tag(sync=True)
    # the area selection, offsets ({} when none): written by the front end
    _selection = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    # the rows `show` marks: [{kind, name, count, totalNs}] (the front end outlines their instances)
    _marks: Any = traitlets.List().tag(sync=True)
    # wall-clock ms of the first frame's Python stages: {open, opened, show, shown} (bench_widget_ux.py)
    _stamps = traitlets.Dict().tag(sync=True)
    # the first view's data, answered at show() and sent with the widget's state (a binary buffer:
    # a range reply's body, as answer_range makes it), and its reply fields + the plot `width`
    # it was asked at; b"" when none (the front end then asks, as for every later view)
    _first = traitlets.Bytes(b"").tag(sync=True)
    _first_meta = traitlets.Dict().tag(sync=True)
    # the plot width of this kernel's last range request (FIRST_WIDTH until one comes)
    plot_width = FIRST_WIDTH

    def __init__(self, profile: "Profile", start: Optional[int] = None, end: Optional[int] = None,
                 height: int = 420, wire: Optional[str] = None, **kwargs: Any) -> None:
        from .profile import M_TRACKS
        t_show = time.time() * 1e3
        # "jsonz" (default): the server's "columns" JSON deflated here (zlib level 1, ~0.2 ms for
        # 100 KB) and inflated by the browser (fflate, synchronously), for a front end that says
        # it can inflate (else "json"); "json": the JSON forwarded undecoded, turned into typed
        # arrays by the browser.
        # A zoom step is drawn in the first animation frame after the input only when its answer
        # comes within ~15 ms, and the bytes are what the notebook's messaging pays for: with the
        # compact bucket columns a 10M-kernel step is ~100 KB of JSON, ~14 KB deflated. Measured
        # side by side (bench_widget.py --ab json,jsonz): "jsonz" drew as many or more steps in
        # the first frame (59-82% vs 41-82%, more under load), for ~1 ms more decoding in the
        # browser. (Decoding in Python and packing typed columns lost to both and is gone.)
        self.wire = wire or os.environ.get("NSYS_AI_WIDGET_WIRE") or "jsonz"
        if self.wire not in WIRES:
            raise ValueError(f"wire: expected one of {', '.join(WIRES)}, not {self.wire!r}")
        s0, s1 = profile.span()
        tracks_res = profile.request(M_TRACKS)
        tracks = tracks_res.get("tracks", []) if isinstance(tracks_res, dict) else tracks_res
        t_tracks = time.time() * 1e3
        o = clock_origin(s0, s1)
        self._origin = o
        self._profile = profile
        self.served = 0     # range requests answered (each reply carries it: no extra state message)
        self.last_ms = 0.0  # server + packing time of the last range request
        view = {"start": (s0 if start is None else int(start)) - o, "end": (s1 if end is None else int(end)) - o}
        first, first_meta = self._first_view(view, first_tracks(tracks, height))
        super().__init__(tracks=tracks, origin=str(o), span={"start": s0 - o, "end": s1 - o},
                         _view=view, _first=first, _first_meta=first_meta,
                         height=height, title=pathlib.Path(profile.path).name,
                         _stamps={**dict(zip(("open", "opened"), getattr(profile, "opened_ms", ()))), "show": t_show,
                                  "tracks": t_tracks, "first": time.time() * 1e3}, **kwargs)
        # in a kernel: serve on worker threads (None: inline, e.g. in tests and benches)
        self._queues: Optional[dict[str, "queue.SimpleQueue[Any]"]] = None
        if in_kernel() and os.environ.get("NSYS_AI_WIDGET_THREADS", "1") != "0":
            self._queues = {k: queue.SimpleQueue() for k in WORKERS}
            for name, q in self._queues.items():
                for i in range(WORKERS[name]):
                    threading.Thread(target=self._worker, args=(q,), name=f"nsys-ai-widget-{name}-{i}", daemon=True).start()
        # the explanations asked and not yet answered: id -> Cancel (`{kind: "cancel"}`, a newer explain)
        self._explains: dict[Any, Cancel] = {}
        self._explains_lock = threading.Lock()
        # analysis answers by (name, start, end, limit, perIteration), the last ANALYSES_HELD
        self._analyses_held: dict[tuple, dict] = {}
        self._analyses_lock = threading.Lock()
        self.on_msg(self._on_msg)

    def _first_view(self, view: dict, tracks: Optional[list[str]] = None) -> tuple[bytes, dict]:
        """The first view's data at the last known plot width, as a range request from the front
        end would get it (answer_range: DRAW_FIELDS, deflated for "jsonz"), so that the widget
        draws its first frame without a round trip; (b"", {}) when it fails or is larger than
        FIRST_MAX_BYTES (the front end then asks), or NSYS_AI_WIDGET_FIRST=0. `tracks`: only
        these (the rows the first frame shows, _first_rows.first_tracks; None: every track; the
        page asks for the rest after its first frame); NSYS_AI_WIDGET_FIRST_ALL=1 sends every
        track (the layout before lab15b, the bench's comparison)."""
        if os.environ.get("NSYS_AI_WIDGET_FIRST_ALL") == "1":
            tracks = None
        if view["end"] <= view["start"] or os.environ.get("NSYS_AI_WIDGET_FIRST", "1") == "0":  # 0: the bench's comparison
            return b"", {}
        width = TimelineWidget.plot_width
        # undeflated ("json") unless larger than FIRST_MAX_BYTES: the page then decodes it
        # synchronously when it renders (JSON.parse, ~5 ms for the 330 KB of a 1M-kernel profile's
        # first view); the deflated one ("jsonz", NSYS_AI_WIDGET_FIRST_WIRE=jsonz) is inflated
        # asynchronously (DecompressionStream), and its promise's steps waited behind JupyterLab's own
        # work on the page's main thread (~100 ms from render to decoded at 1M kernels, load 3)
        inflate = os.environ.get("NSYS_AI_WIDGET_FIRST_WIRE", "json") == "jsonz"
        try:
            for z in ((inflate,) if inflate else (False, True)):
                msg, bufs = self.answer_range({"start": view["start"], "end": view["end"], "width": width,
                                               "fields": list(DRAW_FIELDS), "inflate": z, "wire": "jsonz" if z else "json",
                                               **({"tracks": tracks} if tracks else {})},
                                              count=False)
                if len(bufs[0]) <= FIRST_MAX_BYTES:
                    break
        except Exception:  # the front end asks for it (and shows the error if it fails again)
            return b"", {}
        if len(bufs[0]) > FIRST_MAX_BYTES:
            return b"", {}
        # the request's own window and width (the reply's start/end lie on the bucket grid): the
        # front end asks for the same view's bucket columns with them (bucket_cols.ts)
        return bufs[0], {**msg, "width": width, "start": view["start"], "end": view["end"],
                         **({"tracks": len(tracks)} if tracks else {})}

    @property
    def view(self) -> tuple[int, int]:
        """The visible window (start, end) in ns on the profile's clock, exact ints."""
        return int(self._view["start"]) + self._origin, int(self._view["end"]) + self._origin

    @view.setter
    def view(self, window: tuple[int, int]) -> None:
        start, end = (int(t) for t in window)
        if end <= start:
            raise ValueError(f"view: end ({end}) must be greater than start ({start})")
        self._view = {"start": start - self._origin, "end": end - self._origin}

    @property
    def selection(self) -> Optional[tuple[int, int]]:
        """The area selection (start, end) in ns on the profile's clock, or None."""
        s = self._selection
        if not s or "start" not in s:
            return None
        return int(s["start"]) + self._origin, int(s["end"]) + self._origin

    def show(self, rows: Any = None, kind: Optional[str] = None) -> "TimelineWidget":
        """Marks rows on the timeline: every instance in view of the kernels or NVTX ranges they
        name is outlined, and a list under the toolbar zooms to each one's next instance per click.
        `rows`: a DataFrame (or one row) of `top_kernels()` (kernels by name), `nvtx_tree()` (NVTX
        ranges by name) or `search()` (its `kind` column), those results without pandas, an NVTX
        tree widget (`p.tree()`: its roots), or a list of names (`kind`: "kernel", the default, or
        "nvtx"). Names match exactly (search's `exact`), never as substrings. None clears.
        Returns the widget (so `w.show(...)` as a cell's last line displays it)."""
        self._marks = mark_entries(self._profile, rows, kind)
        return self

    @property
    def marked(self) -> list[dict]:
        """The rows `show` marks: [{kind, name, count, totalNs}] (count, totalNs: the whole profile)."""
        return [dict(m) for m in self._marks]

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("kind") if isinstance(content, dict) else None
        if kind not in ("range", "bucket", "buckets", "details", "explain", "launched", "ping", "search", "analysis",
                        "analyses", "cancel"):
            return
        content["recvAt"] = time.time() * 1e3  # wall clock ms, for the bench's breakdown
        if kind == "cancel":
            self._cancel_explains(lambda rid: rid == content.get("of"))
            return
        if kind == "explain":  # a click on another op: the explanations asked before are not wanted
            rid = content.get("id")
            self._cancel_explains(lambda other: other != rid)
            with self._explains_lock:
                self._explains[rid] = Cancel()
        if kind == "analyses":  # one message, one answer per analysis, each as it is done
            for part in self._analysis_parts(content):
                if self._queues is not None and not content.get("inline"):
                    self._queues["analysis"].put(part)
                else:
                    self._serve(part)
            return
        if kind == "ping":  # the notebook's own message round trip, for comparison with a range's
            pad = content.get("pad")  # the bench's padded ping: a reply of that many bytes, no work
            bufs = [bytes(min(int(pad), 1 << 24))] if isinstance(pad, int) and pad > 0 else []
            self.send({"id": content.get("id"), "kind": "ping", "recvAt": content["recvAt"], "sentAt": time.time() * 1e3},
                      bufs)
        elif self._queues is not None and not content.get("inline"):  # "inline": the bench's comparison
            self._queues[{"launched": "details", "buckets": "bucket"}.get(str(kind), str(kind))].put(content)
        else:
            self._serve(content)

    def _worker(self, q: "queue.SimpleQueue[Any]") -> None:
        while True:
            content = q.get()
            if content is None:
                return
            try:
                self._serve(content)
            except Exception:  # e.g. the widget closed while a reply was being sent: keep serving
                pass

    def close(self) -> None:
        if self._queues is not None:
            for name, q in self._queues.items():
                for _ in range(WORKERS[name]):
                    q.put(None)
            self._queues = None
        super().close()

    def _serve(self, content: dict) -> None:
        kind = content.get("kind")
        rid = content.get("id")
        try:
            if kind == "range":
                msg, buffers = self.answer_range(content)
            elif kind == "bucket":
                msg, buffers = {"kind": "bucket", **self.bucket(content)}, []
            elif kind == "buckets":  # the bucket columns of the GPU rows in view (js/src/bucket_cols.ts)
                msg, buffers = self.answer_range({**content, "fields": list(BUCKET_FIELDS)}, count=False)
                msg["kind"] = "buckets"
            elif kind == "launched":
                msg, buffers = {"kind": "launched", "flow": self.launched(content)}, []
            elif kind == "search":
                msg, buffers = {"kind": "search", **self.search_page(content)}, []
            elif kind == "analysis":
                msg, buffers = {"kind": "analysis", **self.analysis(content)}, []
            elif kind == "analyses":  # one part of an "analyses" message
                msg, buffers = {"kind": "analyses", "name": content["name"], **self.analysis(content)}, []
            elif kind == "explain":
                with self._explains_lock:
                    cancel = self._explains.get(rid)
                if cancel is None or cancel.cancelled:  # cancelled while queued: no reply (the page dropped it)
                    return
                try:
                    op = self.op_of(content)
                    msg, buffers = {"kind": "explain", "opId": op, "html": self.explain_html(op, cancel) if op >= 0 else ""}, []
                except NsysAIError as e:
                    if e.code == CANCELLED and cancel.cancelled:
                        return
                    raise
                finally:
                    with self._explains_lock:
                        self._explains.pop(rid, None)
            else:  # details; `explain: false`: without the explanation (the front end asks "explain" beside it)
                op = self.op_of(content)
                d = self._profile.kernel(op) if op >= 0 else None
                msg, buffers = {"kind": "details", "opId": op, "flow": self._flow(d) if d else None,
                                "html": self.details_html(op, d, content.get("explain") is not False) if d else ""}, []
            msg["id"] = rid
            if "recvAt" in content:
                msg["recvAt"] = content["recvAt"]
                msg["sentAt"] = time.time() * 1e3
            self.send(msg, buffers)
        except NsysAIError as e:
            self.send({"id": rid, "kind": kind, "error": e.message, "code": e.code, **self._part_of(content)})
        except Exception as e:  # report every failure to the front end, never leave it waiting
            self.send({"id": rid, "kind": kind, "error": f"{type(e).__name__}: {e}", "code": None, **self._part_of(content)})

    @staticmethod
    def _part_of(content: dict) -> dict:
        """An "analyses" part's name, for its error reply."""
        return {"name": content.get("name")} if content.get("kind") == "analyses" else {}

    def _cancel_explains(self, which: Any) -> None:
        """Cancels the explanations whose request ids `which` picks (queued: dropped when
        dequeued; being worked on: cancelled on the server)."""
        with self._explains_lock:
            picked = [c for rid, c in self._explains.items() if which(rid)]
        for c in picked:
            c.cancel()

    @staticmethod
    def _analysis_parts(content: dict) -> list[dict]:
        """An "analyses" message as one "analyses" part per name: {id, kind, name, start, end,
        limit?, perIteration?, recvAt}."""
        given = content.get("params")
        params: dict = given if isinstance(given, dict) else {}
        names = [str(n) for n in content.get("names") or []]
        return [{"id": content.get("id"), "kind": "analyses", "name": n, "start": content.get("start"), "end": content.get("end"),
                 **{k: v for k, v in dict(params.get(n) or {}).items() if k in ("limit", "perIteration")},
                 "recvAt": content["recvAt"]} for n in names]

    def op_of(self, content: dict) -> int:
        """The op a details/explain request names: `opId`, or `bucket` ({track, start, resolution}:
        a zoomed-out bucket, whose longest op it is; -1 when no op starts in it), so that a click
        on a bucket is one round trip."""
        if content.get("opId") is not None:
            return int(content["opId"])
        return int(self.bucket(dict(content["bucket"]))["longestId"])

    def search_page(self, content: dict) -> dict:
        """A page of search's instances for the search box: {total, offset, names, items}, times
        (at, start, end in; items' start/end out) as offsets from the widget's origin."""
        o = self._origin
        params: dict = {"query": str(content["query"]), "limit": 1,
                        "instances": max(1, min(int(content.get("instances", 500)), 10000))}
        if content.get("exact"):
            params["exact"] = True
        if isinstance(content.get("kinds"), list):
            params["kinds"] = [str(k) for k in content["kinds"]]
        if content.get("at") is not None:
            params["at"] = int(content["at"]) + o
        else:
            params["offset"] = max(0, int(content.get("offset") or 0))
        if content.get("start") is not None and content.get("end") is not None:
            params["start"], params["end"] = int(content["start"]) + o, int(content["end"]) + o
        inst = self._profile.request("search", params).get("instances") or {}
        items = [{**it, "start": int(it["start"]) - o, "end": int(it["end"]) - o} for it in inst.get("items", [])]
        return {"total": inst.get("total", 0), "offset": inst.get("offset", 0), "names": inst.get("names", []), "items": items}

    def analysis(self, content: dict) -> dict:
        """analysis/run of one analysis over the area selection (offsets in): {summary, rows}."""
        o = self._origin
        params: dict = {"start": int(content["start"]) + o, "end": int(content["end"]) + o}
        if content.get("limit") is not None:
            params["limit"] = int(content["limit"])
        if isinstance(content.get("perIteration"), bool):
            params["perIteration"] = content["perIteration"]
        key = (str(content["name"]), params["start"], params["end"], params.get("limit"), params.get("perIteration"))
        with self._analyses_lock:  # (the four analysis workers share it)
            held = self._analyses_held.get(key)
        if held is not None:
            return held
        r = self._profile.request("analysis/run", {"name": str(content["name"]), "params": params})
        out = {"summary": r.get("summary") or {}, "rows": r.get("rows") or []}
        with self._analyses_lock:
            self._analyses_held[key] = out
            while len(self._analyses_held) > ANALYSES_HELD:
                del self._analyses_held[next(iter(self._analyses_held))]
        return out

    def _flow(self, d: dict) -> Optional[dict]:
        """A GPU op's launch (kernel/details' api) for the front end: the call and the op, times
        as offsets from the widget's origin; None without a launching call."""
        api = d.get("api")
        if not api:
            return None
        o = self._origin
        return {"api": {"id": api["id"], "track": f"api:{api['pid']}:{api['tid']}", "start": int(api["start"]) - o,
                        "end": int(api["end"]) - o},
                "ops": [{"id": d["id"], "track": d.get("track"), "start": int(d["start"]) - o, "end": int(d["end"]) - o}]}

    def launched(self, content: dict) -> dict:
        """The GPU ops the API call `apiId` (on `apiTrack`, starting at offset `start`) launched.
        A stream runs its ops in launch order and kernelIds number each GPU track's ops by start
        (timeline/tracks order, `count` each; docs/protocol.md), so on each of the process's GPU
        tracks a binary search on the launching call's start (kernel/details' api) finds the first
        op launched at or after the call, and the ops that call launched follow it: O(log n)
        kernel/details per track. (The protocol has no API -> ops method.)"""
        api_id, track = int(content["apiId"]), str(content["apiTrack"])
        pid = track.split(":")[1]
        t0 = int(content["start"]) + self._origin
        launch: dict[int, Optional[dict]] = {}

        def call_of(op: int) -> Optional[dict]:
            if op not in launch:
                launch[op] = self._flow(self._profile.kernel(op))
            return launch[op]

        def launched_at(op: int) -> int:  # the op's launching call's start (its own start without one)
            f = call_of(op)
            return int(f["api"]["start"]) + self._origin if f else int(self._profile.kernel(op)["start"])

        ops = []
        base = 0
        for t in self.tracks:
            if t.get("kind") != "gpu":
                continue
            n = int(t.get("count") or 0)
            lo, hi = base, base + n
            base += n
            if str(t.get("pid")) != pid or n == 0:
                continue
            while lo < hi:
                mid = (lo + hi) // 2
                if launched_at(mid) < t0:
                    lo = mid + 1
                else:
                    hi = mid
            for op in range(lo, min(lo + 64, base)):  # a graph launch puts many ops on a stream
                f = call_of(op)
                if not f or int(f["api"]["start"]) + self._origin != t0:
                    break
                if f["api"]["id"] == api_id and f["api"]["track"] == track:
                    ops.append(f["ops"][0])
        return {"api": {"id": api_id, "track": track, "start": int(content["start"]), "end": int(content["end"])},
                "ops": ops}

    def explain_html(self, op_id: int, cancel: Optional[Cancel] = None) -> str:
        """`kernel/explain` of a kernel as escaped HTML ("" for other ops): the details panel's second
        part, asked beside the details (an explanation takes 0.1-1.5 s at 10M kernels, the details ms)."""
        from ._rich import markdown_to_html
        d = self._profile.kernel(op_id)
        return markdown_to_html(self._profile.explain(str(d.get("name")), cancel).markdown) if d.get("kind") == "kernel" else ""

    def details_html(self, op_id: int, d: Optional[dict] = None, explain: bool = True) -> str:
        """The panel shown when a GPU op is clicked: `kernel/details` (`d`, when already asked),
        plus (`explain`) `kernel/explain` for kernels (escaped HTML rendered from the server's markdown)."""
        from ._rich import _ns, markdown_to_html
        if d is None:
            d = self._profile.kernel(op_id)
        api = d.get("api") or {}
        path = " > ".join(str(n.get("name")) for n in d.get("nvtxPath") or [])
        lines = [f"**{d.get('name')}** · {d.get('kind')} · {_ns(d.get('durNs'))} · "
                 f"GPU {d.get('device')} stream {d.get('stream')}",
                 # the profile's own clock, every digit (what the export's start/end columns hold)
                 f"start {d.get('start')} ns · end {d.get('end')} ns"]
        if api:
            lines.append(f"launched by `{api.get('name')}` on thread {api.get('threadName') or api.get('tid')}")
        if path:
            lines.append(f"NVTX: {path}")
        md = "\n\n".join(lines)
        if explain and d.get("kind") == "kernel":
            ex = self._profile.explain(str(d.get("name")))
            md += "\n\n" + ex.markdown
        return markdown_to_html(md)

    def bucket(self, content: dict) -> dict:
        """One bucket of a track at a resolution (`start` on its grid): what the zoom replies
        leave out (count, longest op's id and duration), for the tooltip and a click. A
        one-pixel `timeline/range` on the bucket's own grid cell, always as buckets:
        `{count, busyNs, longestId, longestName, longestDur}` (longestId -1: no op starts in it)."""
        from .profile import M_RANGE
        start, res = int(content["start"]) + self._origin, int(content["resolution"])
        if res <= 0 or res & (res - 1):
            raise ValueError("resolution: expected a power of two")
        r = self._profile.request(M_RANGE, {"start": start, "end": start + res, "width": 1, "maxEvents": 0,
                                            "tracks": [str(content["track"])], "format": "columns"})
        out = {"count": 0, "busyNs": 0, "longestId": -1, "longestName": None, "longestDur": 0}
        names = r.get("names") or []
        for t in r.get("tracks") or []:
            b = t.get("buckets") or {}
            for j, ix in enumerate(b.get("index") or []):
                if int(r["start"]) + ix * int(r["resolution"]) != start:
                    continue
                nm = b["longestName"][j]
                out = {"count": b["count"][j], "busyNs": b["busyNs"][j], "longestId": b["longestId"][j],
                       "longestName": names[nm] if 0 <= nm < len(names) else None,
                       "longestDur": b["longestDur"][j]}
        return out

    def answer_range(self, content: dict, count: bool = True) -> tuple[dict, list[bytes]]:
        """Serves one front-end range request (also callable directly, e.g. by the bench):
        the message fields and the one buffer: the server's "columns" JSON as it wrote it
        (format "json"), or deflated (format "jsonz", when the request says `inflate`).
        `fields` (a list of column names) asks the server for those columns only. `count`: a
        front end's request (counted in `served`; its width is remembered for the next widget's
        first view; not by a `rest` request, the tracks the first view left out, asked at its width)."""
        from .profile import M_RANGE
        t0 = time.perf_counter()
        o = self._origin  # the front end's times are offsets from it
        params: dict[str, Any] = {"start": int(content["start"]) + o, "end": int(content["end"]) + o,
                                  "width": max(1, int(content.get("width", 1000))), "format": "columns"}
        if content.get("tracks"):
            params["tracks"] = [str(t) for t in content["tracks"]]
        fields = content.get("fields")
        if isinstance(fields, list) and fields:
            params["fields"] = [str(f) for f in fields]
        wire = content.get("wire") if content.get("wire") in WIRES else self.wire  # bench A/B
        if wire == "jsonz" and not content.get("inflate"):
            wire = "json"
        body = self._profile.request(M_RANGE, params, raw=True)
        t1 = time.perf_counter()
        json_bytes = len(body)
        if wire == "jsonz":
            body = zlib.compress(body, 1)
        t2 = time.perf_counter()
        self.last_ms = (t2 - t0) * 1e3
        if count:
            self.served += 1
            if not content.get("rest"):  # the first view's other tracks, asked at its width, not the page's
                TimelineWidget.plot_width = params["width"]
        return {"kind": "range", "format": wire, "source": "columns", "serverMs": round(self.last_ms, 3),
                "jsonBytes": json_bytes,  # the inflated size: the browser inflates into one buffer
                "served": self.served, "timing": {"rpc": round((t1 - t0) * 1e3, 3), "decode": 0,
                                                  "pack": round((t2 - t1) * 1e3, 3)}}, [body]


MARK_KINDS = ("kernel", "nvtx")
MAX_MARKS = 50


def _mark_rows(rows: Any, kind: Optional[str]) -> tuple[list[Any], Optional[str]]:
    """The rows of what `TimelineWidget.show` was given, and the kind its rows name by default."""
    from ._frames import flatten_tree
    if isinstance(rows, NvtxTreeWidget):
        return [n for n in rows._level(None, 0)[0]], kind or "nvtx"
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a DataFrame
        cols = set(rows.columns)
        attrs = getattr(rows, "attrs", {}) or {}
        default = kind or ("nvtx" if {"depth", "path"} <= cols or "childCount" in cols else
                           "kernel" if attrs.get("name") == "top_kernels" or "pctOfGpu" in cols else None)
        return rows.to_dict("records"), default
    if hasattr(rows, "to_dict") and hasattr(rows, "index"):  # one row of a DataFrame (a Series)
        return [rows.to_dict()], kind
    if isinstance(rows, dict):
        if isinstance(rows.get("rows"), list):  # an analysis result without pandas (top_kernels)
            return rows["rows"], kind or ("kernel" if rows.get("name", "top_kernels") == "top_kernels" else None)
        if isinstance(rows.get("results"), list):  # search's result
            return rows["results"], kind
        return [rows], kind
    if isinstance(rows, str):
        return [rows], kind
    rows = list(rows)
    if rows and all(isinstance(r, dict) for r in rows) and any("children" in r for r in rows):  # nvtx_tree() roots
        return flatten_tree(rows), kind or "nvtx"
    return rows, kind


def mark_entries(profile: "Profile", rows: Any, kind: Optional[str] = None) -> list[dict]:
    """`TimelineWidget.show`'s entries: one per distinct (kind, name) in row order, with the
    whole profile's count and total time (search with `exact`). A row's own `kind` (search's
    rows) wins over the default; NVTX rows are recognised by their depth/path/childCount,
    kernel rows otherwise."""
    if rows is None:
        return []
    if kind is not None and kind not in MARK_KINDS:
        raise ValueError(f"kind: expected one of {', '.join(MARK_KINDS)}, not {kind!r}")
    items, default = _mark_rows(rows, kind)
    seen: set[tuple[str, str]] = set()
    out: list[dict] = []
    for r in items:
        if isinstance(r, dict):
            name = r.get("name")
            own = r.get("kind")
            k: str = own if isinstance(own, str) and own in MARK_KINDS and kind is None else \
                default or ("nvtx" if "depth" in r or "childCount" in r else "kernel")
        else:
            name, k = r, default or "kernel"
        if not isinstance(name, str) or not name:
            raise ValueError(f"show: a row without a name: {r!r}")
        if (k, name) in seen:
            continue
        seen.add((k, name))
        if len(seen) > MAX_MARKS:
            raise ValueError(f"show: more than {MAX_MARKS} distinct names; pass fewer rows (e.g. .head(10))")
        res = profile.request("search", {"query": name, "exact": True, "kinds": [k], "limit": 100000})
        out.append({"kind": k, "name": name, "count": int(res.get("matches", 0)),
                    "totalNs": sum(int(h.get("totalNs", 0)) for h in res.get("results") or [])})
    return out


class NvtxTreeWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A collapsible NVTX tree: CPU time, projected GPU time, op count and kernel time per range.

    Loaded lazily, so it stays small on a 10M-kernel profile: the front end asks
    for pages of roots `{id, kind: "roots", offset, limit}` and for a node's children
    `{id, kind: "children", key}`; each answer is `{id, kind, nodes, total?}`.
    Every level is one `nvtx/tree` level (the roots, or `parent` = the node's id),
    fetched page by page with its cursor when first asked for; `aggregate=True`
    asks for the aggregate tree (equal name paths merged, ids are path ids).
    """

    _esm = _bundle("tree.js")
    title = traitlets.Unicode("").tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)       # number of roots
    aggregated = traitlets.Bool(False).tag(sync=True)

    PAGE = 500

    def __init__(self, profile: "Profile", params: Optional[dict] = None, **kwargs: Any) -> None:
        self._profile = profile
        self._params = dict(params or {})
        self._max_depth: Optional[int] = self._params.pop("maxDepth", None)
        agg = bool(self._params.pop("aggregate", False)) or self._params.get("mode") == "aggregate"
        self._params["mode"] = "aggregate" if agg else "ranges"
        self._levels: dict[Optional[int], tuple[list[dict], Optional[str], int]] = {}
        first = self._level(None, 0)
        super().__init__(title=pathlib.Path(profile.path).name, total=first[2], aggregated=agg, **kwargs)
        self.on_msg(self._on_msg)

    def _level(self, parent: Optional[int], upto: int) -> tuple[list[dict], Optional[str], int]:
        """The level's nodes fetched so far (at least `upto` when it has that many), its cursor, its total."""
        from .profile import M_TREE
        nodes, cursor, total = self._levels.get(parent, ([], None, -1))
        while total < 0 or (cursor is not None and len(nodes) < upto):
            params = {**self._params, "limit": self.PAGE, **({"parent": parent} if parent is not None else {}),
                      **({"cursor": cursor} if cursor else {})}
            res = self._profile.request(M_TREE, params)
            nodes = nodes + list(res.get("nodes") or [])
            cursor, total = res.get("next"), int(res.get("total", 0))
        self._levels[parent] = (nodes, cursor, total)
        return nodes, cursor, total

    @staticmethod
    def _public(node: dict, path: list[int]) -> dict:
        """A node for the front end: how many children it has, and a key to ask for them."""
        out = {k: v for k, v in node.items() if k != "children"}
        out["childCount"] = node.get("childCount")
        out["key"] = {"path": path, "id": node.get("id"), "depth": node.get("depth")}
        return out

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("kind") not in ("roots", "children"):
            return
        rid = content.get("id")
        try:
            if content["kind"] == "roots":
                off = max(0, int(content.get("offset", 0)))
                lim = max(1, min(2000, int(content.get("limit", 200))))
                roots, _, total = self._level(None, off + lim)
                nodes = [self._public(n, [off + i]) for i, n in enumerate(roots[off:off + lim])]
                self.send({"id": rid, "kind": "roots", "total": total, "offset": off, "nodes": nodes})
            else:
                key = content.get("key") or {}
                self.send({"id": rid, "kind": "children", "nodes": self.children(key)})
        except NsysAIError as e:
            self.send({"id": rid, "kind": content.get("kind"), "error": e.message, "code": e.code})
        except Exception as e:
            self.send({"id": rid, "kind": content.get("kind"), "error": f"{type(e).__name__}: {e}", "code": None})

    def children(self, key: dict) -> list[dict]:
        """The children of the node `key` names (front-end keys, see `_public`), at most 5000."""
        path = [int(i) for i in key.get("path") or []]
        node_id, depth = int(key["id"]), int(key["depth"])
        if self._max_depth is not None and depth >= self._max_depth:
            return []
        kids, _, _ = self._level(node_id, 5000)
        return [self._public(c, path + [i]) for i, c in enumerate(kids[:5000])]
