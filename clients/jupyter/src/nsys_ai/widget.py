"""Notebook widgets (anywidget): the zoomable timeline and the NVTX tree.

The timeline's front end asks for data with custom messages
`{id, kind: "range", start, end, width}`; the Python side answers each with
`timeline/range` as `{id, kind: "range", resolution, start, end, tracks: [...]}`
plus one binary buffer per track (Float64 columns), or `{id, error, code}`.
"""
from __future__ import annotations

import array
import pathlib
import sys
import time
from typing import TYPE_CHECKING, Any, Optional

import anywidget
import traitlets

from .errors import NsysAIError

if TYPE_CHECKING:
    from .profile import Profile

STATIC = pathlib.Path(__file__).parent / "static"


def _bundle(name: str) -> pathlib.Path:
    path = STATIC / name
    if not path.exists():
        raise RuntimeError(f"nsys_ai widget bundle {path} is missing: build it with "
                           "`npm ci && npm run build` in clients/jupyter/js (the wheel build does this)")
    return path


def encode_range(result: dict) -> tuple[dict, list[bytes]]:
    """A `timeline/range` result as a widget message plus one Float64 buffer per track.

    events  -> buffer [start, end, depth, kernelId] per event; names, kinds as lists
    buckets -> buffer [start, end, count, busyNs, longestId, longestDur] per bucket; longest names
    """
    tracks: list[dict] = []
    buffers: list[bytes] = []
    for t in result.get("tracks", []):
        if "buckets" in t:
            bs = t["buckets"]
            col = array.array("d")
            names: list[Any] = []
            for b in bs:
                lg = b.get("longest") or {}
                col.extend((b["start"], b["end"], b.get("count", 0), b.get("busyNs", 0),
                            lg.get("id", -1) if lg.get("id") is not None else -1, lg.get("dur", 0) or 0))
                names.append(lg.get("name"))
            tracks.append({"id": t["id"], "type": "buckets", "n": len(bs), "names": names, "buffer": len(buffers)})
        else:
            es = t.get("events") or []
            col = array.array("d")
            names = []
            kinds: list[Any] = []
            for e in es:
                eid = e.get("id")
                col.extend((e["start"], e["end"], e.get("depth", 0) or 0, eid if isinstance(eid, (int, float)) else -1))
                names.append(e.get("name"))
                kinds.append(e.get("kind"))
            tracks.append({"id": t["id"], "type": "events", "n": len(es), "names": names, "kinds": kinds,
                           "buffer": len(buffers)})
        if sys.byteorder != "little":  # JS typed arrays are little-endian on every supported platform
            col.byteswap()
        buffers.append(col.tobytes())
    msg = {"kind": "range", "resolution": result.get("resolution"), "start": result.get("start"),
           "end": result.get("end"), "tracks": tracks}
    return msg, buffers


class TimelineWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A canvas timeline of a profile: wheel zooms around the cursor, drag pans,
    double-click resets. Every view change is one `timeline/range` request."""

    _esm = _bundle("timeline.js")
    tracks: Any = traitlets.List().tag(sync=True)
    span = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict().tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    served = traitlets.Int(0).tag(sync=True)  # range requests answered (for tests and the status line)

    def __init__(self, profile: "Profile", start: Optional[int] = None, end: Optional[int] = None,
                 height: int = 420, **kwargs: Any) -> None:
        from .profile import M_TRACKS
        s0, s1 = profile.span()
        tracks_res = profile.request(M_TRACKS)
        tracks = tracks_res.get("tracks", []) if isinstance(tracks_res, dict) else tracks_res
        super().__init__(tracks=tracks, span={"start": s0, "end": s1},
                         view={"start": s0 if start is None else int(start), "end": s1 if end is None else int(end)},
                         height=height, title=pathlib.Path(profile.path).name, **kwargs)
        self._profile = profile
        self.last_ms = 0.0  # server + encoding time of the last range request
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("kind") != "range":
            return
        rid = content.get("id")
        try:
            msg, buffers = self.answer_range(content)
            msg["id"] = rid
            self.send(msg, buffers)
        except NsysAIError as e:
            self.send({"id": rid, "kind": "range", "error": e.message, "code": e.code})
        except Exception as e:  # report every failure to the front end, never leave it waiting
            self.send({"id": rid, "kind": "range", "error": f"{type(e).__name__}: {e}", "code": None})

    def answer_range(self, content: dict) -> tuple[dict, list[bytes]]:
        """Serves one front-end range request (also callable directly, e.g. by the bench)."""
        from .profile import M_RANGE
        t0 = time.perf_counter()
        params: dict[str, Any] = {"start": int(content["start"]), "end": int(content["end"]),
                                  "width": max(1, int(content.get("width", 1000)))}
        if content.get("tracks"):
            params["tracks"] = list(content["tracks"])
        res = self._profile.request(M_RANGE, params)
        msg, buffers = encode_range(res)
        self.last_ms = (time.perf_counter() - t0) * 1e3
        msg["serverMs"] = round(self.last_ms, 3)
        self.served += 1
        return msg, buffers


class NvtxTreeWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A collapsible NVTX tree: CPU time, projected GPU time, op count and kernel time per range."""

    _esm = _bundle("tree.js")
    roots: Any = traitlets.List().tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
