"""timeline/range with format "columns": the same events and buckets as the
default "objects" format, one array per field and every string once in
`names`; it validates against the schema, and it is smaller. Checked on the
generated profile at several zoom levels and on every real profile."""
from __future__ import annotations

import json
import random

import pytest

from conftest import PROFILES, check_schema, real_path, real_profiles

NAMES = [p.name for p in real_profiles()] or ["<absent>"]


def from_columns(res: dict) -> list[dict]:
    """Rebuilds the objects-format tracks from a columns answer."""
    names = res["names"]
    out = []
    for tr in res["tracks"]:
        if "events" in tr:
            c = tr["events"]
            n = len(c["id"])
            assert all(len(c[k]) == n for k in c), tr["id"]
            events = [{"id": c["id"][i], "start": c["start"][i], "end": c["end"][i], "name": names[c["name"][i]],
                       "kind": names[c["kind"][i]], "depth": c["depth"][i]} for i in range(n)]
            out.append({"id": tr["id"], "events": events})
        else:
            c = tr["buckets"]
            n = len(c["index"])
            assert all(len(c[k]) == n for k in c), tr["id"]
            buckets = []
            for i in range(n):
                s = res["start"] + c["index"][i] * res["resolution"]
                b = {"start": s, "end": s + res["resolution"], "count": c["count"][i], "busyNs": c["busyNs"][i]}
                if c["longestId"][i] >= 0:
                    b["longest"] = {"id": c["longestId"][i], "name": names[c["longestName"][i]],
                                    "dur": c["longestDur"][i]}
                else:
                    assert c["longestName"][i] == -1 and c["longestDur"][i] == 0 and c["count"][i] == 0
                buckets.append(b)
            out.append({"id": tr["id"], "buckets": buckets})
    return out


def compare(server, pid: str, params: dict) -> tuple[int, int]:
    objs = server.request("timeline/range", {"profileId": pid, **params})
    cols = server.request("timeline/range", {"profileId": pid, **params, "format": "columns"})
    check_schema("timeline/range", "result", objs)
    check_schema("timeline/range", "result", cols)
    assert "format" not in objs and "names" not in objs
    assert cols["format"] == "columns"
    assert {k: cols[k] for k in ("resolution", "start", "end")} == {k: objs[k] for k in ("resolution", "start", "end")}
    assert len(set(cols["names"])) == len(cols["names"]), "a string is listed twice"
    assert from_columns(cols) == objs["tracks"]
    return len(json.dumps(objs, separators=(",", ":"))), len(json.dumps(cols, separators=(",", ":")))


@pytest.mark.not_sanitized("the same two timeline/range paths as the real-profile cases, at every zoom")
def test_columns_equal_objects_at_every_zoom(server, small_profile):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    s0, e0 = info["span"]["start"], info["span"]["end"]
    rng = random.Random(7)
    saw_events = saw_buckets = False
    for width in (1, 50, 1000, 4000):
        for _ in range(6):
            span = max(1, int((e0 - s0) * rng.choice([1.0, 0.3, 0.01, 0.0001])))
            start = rng.randint(s0 - span // 4, max(s0, e0 - span))
            objs_len, cols_len = compare(server, pid, {"start": start, "end": start + span, "width": width})
            res = server.request("timeline/range", {"profileId": pid, "start": start, "end": start + span,
                                                    "width": width, "format": "columns"})
            saw_events |= any("events" in t and t["events"]["id"] for t in res["tracks"])
            saw_buckets |= any("buckets" in t and t["buckets"]["index"] for t in res["tracks"])
    assert saw_events and saw_buckets


@pytest.mark.not_sanitized("a size comparison of replies the columns cases already request")
def test_columns_is_smaller_on_a_full_range_view(server, small_profile):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    objs_len, cols_len = compare(server, pid, {"start": info["span"]["start"], "end": info["span"]["end"],
                                               "width": 2000, "maxEvents": 0})
    assert cols_len < 0.6 * objs_len, (objs_len, cols_len)


def test_columns_with_track_subset_and_forced_events(server, small_profile):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    tracks = [t["id"] for t in server.request("timeline/tracks", {"profileId": pid})["tracks"]][:3]
    compare(server, pid, {"start": info["span"]["start"], "end": info["span"]["end"], "width": 100,
                          "tracks": tracks, "maxEvents": 1000000})


@pytest.mark.parametrize("bad", ["json", "", 3, ["columns"]])
def test_bad_format_is_invalid_params(server, small_profile, bad):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    rid = server.start("timeline/range", {"profileId": pid, "start": 0, "end": 10, "width": 10, "format": bad})
    reply = server.wait_reply(rid)
    assert reply["error"]["code"] == -32602 and "params.format" in reply["error"]["message"]
    assert server.request("timeline/range", {"profileId": pid, "start": 0, "end": 10, "width": 10,
                                             "format": "columns"})["format"] == "columns"


def open_real(server, name: str) -> tuple[str, int, int]:
    """Opens a real profile: its id and span (skips when the profiles are absent or it has no
    timed rows)."""
    if name == "<absent>":
        pytest.skip(f"real profiles not available: {PROFILES} is absent")
    pid = server.request("profile/open", {"path": str(real_path(name))}, timeout=300)["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    if not info.get("span"):
        pytest.skip(f"{name} has no timed rows")
    return pid, info["span"]["start"], info["span"]["end"]


@pytest.mark.parametrize("name", NAMES)
def test_columns_equal_objects_on_real_profiles(server, name):
    pid, s0, e0 = open_real(server, name)
    compare(server, pid, {"start": s0, "end": e0, "width": 1500})
    mid = (s0 + e0) // 2
    compare(server, pid, {"start": mid, "end": mid + max(1, (e0 - s0) // 200), "width": 800})


EVENT_COLS = ["id", "start", "end", "name", "kind", "depth"]
BUCKET_COLS = ["index", "count", "busyNs", "longestId", "longestName", "longestDur"]


@pytest.mark.parametrize("fields", [
    ["index", "count", "busyNs"],
    ["index", "count", "busyNs", "id", "start", "end", "name", "kind", "depth"],
    ["longestName", "index", "kind"],
    ["longestId"],
    [],
])
def test_fields_keep_only_the_listed_columns(server, small_profile, fields):
    """Each listed column equals the full answer's; the others are absent, and
    `names` holds only the strings the listed columns refer to (in the order
    they are first met)."""
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    s0, e0 = info["span"]["start"], info["span"]["end"]
    saw = set()
    for start, end, width in ((s0, e0, 1000), (s0 + (e0 - s0) // 3, s0 + (e0 - s0) // 3 + (e0 - s0) // 500, 2000)):
        params = {"profileId": pid, "start": start, "end": end, "width": width, "format": "columns"}
        full = server.request("timeline/range", params)
        part = server.request("timeline/range", {**params, "fields": fields})
        check_schema("timeline/range", "result", part)
        assert {k: part[k] for k in ("resolution", "start", "end")} == {k: full[k] for k in ("resolution", "start", "end")}
        for tf, tp in zip(full["tracks"], part["tracks"], strict=True):
            assert tf["id"] == tp["id"]
            key = "events" if "events" in tf else "buckets"
            assert key in tp, tp["id"]
            saw.add(key)
            want = [c for c in (EVENT_COLS if key == "events" else BUCKET_COLS) if c in fields]
            assert list(tp[key]) == want
            for c in want:
                if c in ("name", "kind", "longestName"):  # indexes into each answer's own names
                    assert [part["names"][i] if i >= 0 else None for i in tp[key][c]] == \
                           [full["names"][i] if i >= 0 else None for i in tf[key][c]], (tp["id"], c)
                else:
                    assert tp[key][c] == tf[key][c], (tp["id"], c)
        used = {part["names"][i] for t in part["tracks"] for k in ("events", "buckets") if k in t
                for c in ("name", "kind", "longestName") if c in t[k] for i in t[k][c] if i >= 0}
        assert set(part["names"]) == used
        assert len(json.dumps(part)) <= len(json.dumps(full))
    assert saw == {"events", "buckets"}


def check_compact_columns(server, pid: str, params: dict) -> int:
    """indexStep and busyPct, asked for with index and busyNs, decode to them:
    the steps' running sum is the index, and busyPct is busyNs over the
    resolution in whole percent rounded up. Returns the buckets checked."""
    res = server.request("timeline/range", {"profileId": pid, **params, "format": "columns",
                                            "fields": ["indexStep", "busyPct", "index", "busyNs", "start"]})
    check_schema("timeline/range", "result", res)
    r = res["resolution"]
    n = 0
    for tr in res["tracks"]:
        if "events" in tr:
            assert list(tr["events"]) == ["start"], tr["id"]
            continue
        c = tr["buckets"]
        assert list(c) == ["index", "busyNs", "indexStep", "busyPct"], tr["id"]
        at = 0
        for i, (idx, busy, step, pct) in enumerate(zip(c["index"], c["busyNs"], c["indexStep"], c["busyPct"],
                                                       strict=True)):
            assert step >= (0 if i == 0 else 1), (tr["id"], i)
            at += step
            assert at == idx, (tr["id"], i)
            assert 0 <= busy <= r
            assert pct == (0 if busy == 0 else min(100, -(-busy * 100 // r))), (tr["id"], i, busy, r)
            n += 1
    return n


def test_compact_bucket_columns_decode_to_index_and_busy(server, small_profile):
    """Both are left out unless asked for; asked for, they carry index and
    busyNs exactly (to the percent), from the full range down to a deep zoom,
    and on their own they are a fraction of the bytes."""
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    info = server.request("profile/info", {"profileId": pid})
    s0, e0 = info["span"]["start"], info["span"]["end"]
    full = server.request("timeline/range", {"profileId": pid, "start": s0, "end": e0, "width": 900,
                                             "format": "columns"})
    assert all(list(t["buckets"]) == BUCKET_COLS for t in full["tracks"] if "buckets" in t)
    checked = 0
    for k in range(6):
        span = (e0 - s0) >> (2 * k)
        checked += check_compact_columns(server, pid, {"start": s0 + (e0 - s0 - span) // 2,
                                                       "end": s0 + (e0 - s0 + span) // 2, "width": 900})
    assert checked > 1000
    base = {"profileId": pid, "start": s0, "end": e0, "width": 900, "format": "columns"}
    plain = server.request("timeline/range", {**base, "fields": ["index", "busyNs"]})
    compact = server.request("timeline/range", {**base, "fields": ["indexStep", "busyPct"]})
    size = lambda x: len(json.dumps(x, separators=(",", ":")))  # noqa: E731
    assert size(compact) < 0.6 * size(plain), (size(compact), size(plain))


@pytest.mark.parametrize("name", NAMES)
def test_compact_bucket_columns_on_real_profiles(server, name):
    pid, s0, e0 = open_real(server, name)
    check_compact_columns(server, pid, {"start": s0, "end": e0, "width": 1500, "maxEvents": 0})


@pytest.mark.parametrize("params,word", [
    ({"format": "columns", "fields": ["index", "nope"]}, "params.fields[1]"),
    ({"format": "columns", "fields": [3]}, "params.fields[0]"),
    ({"format": "columns", "fields": "index"}, "params.fields"),
    ({"fields": ["index"]}, "only with format"),
    ({"format": "objects", "fields": ["index"]}, "only with format"),
    ({"format": "objects", "fields": ["busyPct"]}, "only with format"),
    ({"format": "columns", "fields": ["busyPCT"]}, "params.fields[0]"),
])
def test_bad_fields_are_invalid_params(server, small_profile, params, word):
    pid = server.request("profile/open", {"path": str(small_profile)})["profileId"]
    rid = server.start("timeline/range", {"profileId": pid, "start": 0, "end": 10, "width": 10, **params})
    reply = server.wait_reply(rid)
    assert reply["error"]["code"] == -32602 and word in reply["error"]["message"], reply
