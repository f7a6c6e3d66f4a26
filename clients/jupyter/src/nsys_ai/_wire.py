"""The timeline widget's reply layout: a `timeline/range` result in the "columns" format,
packed into one binary buffer of typed columns for the browser (no per-item encoding).

Message `{kind: "range", format: "bin", start, end, resolution, base, names, tracks}` plus
one buffer. Each track is `{id, type: "events"|"buckets", n, cols: {field: [offset, dtype]}}`:
the column starts at byte `offset` of the buffer (aligned to its element size) and holds
`n` elements of `dtype` (u8, i16, u16, i32, u32, f32, f64; little-endian, as JavaScript's typed
arrays read them). Times are float32 offsets from `base` (the request's start), so they are
exact to well under a pixel inside the requested window at any zoom:

  events:  start, end (f32, ns from base), id (i32|f64), name, kind (i16|i32 indexes into
           names, -1 = none), depth (u8)
  buckets: index (u16|i32; bucket j covers [start + index*resolution, +resolution)),
           count (u32|f64), busy (f32 ns), longestId (i32|f64, -1 when none),
           longestName (i16|i32, -1 when none), longestDur (f32 ns)

`columns_from_objects` turns an "objects" result (servers without the "columns" format)
into the same columns, so the front end has one decoder.
"""
from __future__ import annotations

import sys
from array import array
from typing import Any, Sequence

try:  # numpy (with pandas) converts big integers to float32 offsets 3-4x faster than a loop
    import numpy as _np
except ImportError:  # pragma: no cover - the plain-Python path is tested by hiding numpy
    _np = None  # type: ignore[assignment]

_CODES = {"u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "f32": "f", "f64": "d"}
_I32 = (-(2**31), 2**31 - 1)


class _Packer:
    def __init__(self) -> None:
        self.buf = bytearray()

    def add(self, dtype: str, values: Any) -> list[Any]:
        a = values if isinstance(values, array) else array(_CODES[dtype], values)
        if sys.byteorder != "little":
            a.byteswap()
        return self._put(a.tobytes(), a.itemsize, dtype)

    def _put(self, data: bytes, itemsize: int, dtype: str) -> list[Any]:
        self.buf += b"\0" * (-len(self.buf) % itemsize)
        off = len(self.buf)
        self.buf += data
        return [off, dtype]

    def offsets(self, values: list, base: int) -> list[Any]:
        """Times as float32 ns from base."""
        if _np is not None:
            return self._put((_np.asarray(values, dtype=_np.int64) - base).astype("<f4").tobytes(), 4, "f32")
        return self.add("f32", [x - base for x in values])

    def small(self, values: list) -> list[Any]:
        """Small non-negative integers (depths) as u8, clamped."""
        try:
            return self.add("u8", values)
        except OverflowError:
            return self.add("u8", [min(255, max(0, v)) for v in values])


def _int_type(values: Sequence[int], lo: int = _I32[0], hi: int = _I32[1]) -> str:
    if not values:
        return "i32"
    return "i32" if lo <= min(values) and max(values) <= hi else "f64"


def _names(values: Sequence[int], n_names: int) -> tuple[str, Any]:
    """Name indexes (-1 = none): i16 when the table is small, else i32."""
    return ("i16" if n_names < 32768 else "i32"), values


def pack_range(res: dict, base: int) -> tuple[dict, bytes]:
    """A "columns" timeline/range result -> (message fields, the one buffer)."""
    p = _Packer()
    names: list = res.get("names") or []
    nn = len(names)
    tracks = []
    for t in res.get("tracks") or []:
        ev = t.get("events")
        if ev is not None:
            n = len(ev.get("start") or [])
            ids = ev.get("id") or []
            nt, nv = _names(ev.get("name") or [], nn)
            kt, kv = _names(ev.get("kind") or [], nn)
            cols = {
                "start": p.offsets(ev.get("start") or [], base),
                "end": p.offsets(ev.get("end") or [], base),
                "id": p.add(_int_type(ids), ids),
                "name": p.add(nt, nv),
                "kind": p.add(kt, kv),
                "depth": p.small(ev.get("depth") or [0] * n),
            }
            tracks.append({"id": t.get("id"), "type": "events", "n": n, "cols": cols})
            continue
        b = t.get("buckets") or {}
        idx = b.get("index") or []
        n = len(idx)
        count = b.get("count") or []
        lid = b.get("longestId") or []
        nt, nv = _names(b.get("longestName") or [], nn)
        cols = {
            "index": p.add("u16" if not idx or max(idx) < 65536 else _int_type(idx), idx),
            "count": p.add("u32" if not count or max(count) < 2**32 else "f64", count),
            "busy": p.add("f32", b.get("busyNs") or []),
            "longestId": p.add(_int_type(lid), lid),
            "longestName": p.add(nt, nv),
            "longestDur": p.add("f32", b.get("longestDur") or []),
        }
        tracks.append({"id": t.get("id"), "type": "buckets", "n": n, "cols": cols})
    msg = {"kind": "range", "format": "bin", "start": res.get("start"), "end": res.get("end"),
           "resolution": res.get("resolution"), "base": base, "names": names, "tracks": tracks}
    return msg, bytes(p.buf)


def columns_from_objects(res: dict) -> dict:
    """An "objects" timeline/range result in the "columns" layout (docs/protocol.md)."""
    index: dict[Any, int] = {}
    names: list = []

    def k(s: Any) -> int:
        if s is None:
            return -1
        i = index.get(s)
        if i is None:
            i = index[s] = len(names)
            names.append(s)
        return i

    start = int(res.get("start", 0))
    resolution = max(1, int(res.get("resolution", 1)))
    tracks = []
    for t in res.get("tracks") or []:
        if "buckets" in t:
            bs = t["buckets"] or []
            longest = [b.get("longest") or {} for b in bs]
            tracks.append({"id": t.get("id"), "buckets": {
                "index": [(int(b["start"]) - start) // resolution for b in bs],
                "count": [b.get("count", 0) for b in bs], "busyNs": [b.get("busyNs", 0) for b in bs],
                "longestId": [lg.get("id", -1) for lg in longest],
                "longestName": [k(lg.get("name")) for lg in longest],
                "longestDur": [lg.get("dur", 0) for lg in longest]}})
        else:
            es = t.get("events") or []
            tracks.append({"id": t.get("id"), "events": {
                "id": [e.get("id") for e in es], "start": [e.get("start") for e in es],
                "end": [e.get("end") for e in es], "name": [k(e.get("name")) for e in es],
                "kind": [k(e.get("kind")) for e in es], "depth": [e.get("depth", 0) for e in es]}})
    return {"resolution": res.get("resolution"), "start": res.get("start"), "end": res.get("end"),
            "format": "columns", "names": names, "tracks": tracks}


def unpack_range(msg: dict, buf: bytes) -> dict:
    """The inverse of `pack_range` (for tests and tools): a "columns" result whose times are
    floats (base + float32 offset)."""
    tracks = []
    for t in msg.get("tracks") or []:
        cols: dict[str, list] = {}
        for field, (off, dtype) in t["cols"].items():
            a = array(_CODES[dtype])
            a.frombytes(buf[off:off + t["n"] * a.itemsize])
            if sys.byteorder != "little":
                a.byteswap()
            cols[field] = a.tolist()
        if t["type"] == "events":
            cols["start"] = [msg["base"] + x for x in cols["start"]]
            cols["end"] = [msg["base"] + x for x in cols["end"]]
            tracks.append({"id": t["id"], "events": cols})
        else:
            cols["busyNs"] = cols.pop("busy")
            tracks.append({"id": t["id"], "buckets": cols})
    return {"resolution": msg.get("resolution"), "start": msg.get("start"), "end": msg.get("end"),
            "format": "columns", "names": msg.get("names") or [], "tracks": tracks}
