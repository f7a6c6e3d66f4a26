"""The Python side of real_profiles_check.mjs: opens each profile it is told, makes its
timeline widget (`p.show()`) and answers the widget's messages through the widget's own
handler (served inline: no kernel). Protocol on stdin/stdout, one JSON object a line:
{"open": PATH} gets {"state": {trait: value}, "first": base64 of `_first`, "openMs": ms}
(or {"error": text}); {"content": msg} gets one {"reply": msg, "buffers": [base64]} per
message the widget sends; {"ask": method, "params": {...}, "view"?: true} gets {"answer": the server's
result} (with "view": params start/end are the widget's first view)
(the check's own reference answers, not through the widget)."""
from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))
import nsys_ai_native  # noqa: E402

STATE = ("tracks", "origin", "span", "_view", "_selection", "height", "title", "_marks", "_stamps", "_first_meta")
widget: Any = None
sent: list[tuple[Any, list[bytes]]] = []


def out(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


for line in sys.stdin:
    m = json.loads(line)
    if "open" in m:
        if widget is not None:
            widget.close()
        try:
            t0 = time.perf_counter()
            widget = nsys_ai_native.open(m["open"]).show(height=360)
            widget.send = lambda content, buffers=None: sent.append((content, list(buffers or [])))
            out({"state": {k: getattr(widget, k) for k in STATE}, "first": base64.b64encode(widget._first).decode(),
                 "openMs": (time.perf_counter() - t0) * 1e3})
        except Exception as e:  # noqa: BLE001 (the page shows what failed)
            widget = None
            out({"error": f"{type(e).__name__}: {e}"})
    elif "ask" in m:
        start, end = widget.view  # exact ints on the profile's clock ("view": the widget's first view)
        out({"answer": widget._profile.request(m["ask"], {**m["params"], **({"start": start, "end": end} if m.get("view") else {})})})
    elif widget is not None:
        widget._on_msg(widget, m["content"], [])
        while sent:
            content, bufs = sent.pop(0)
            out({"reply": content, "buffers": [base64.b64encode(bytes(b)).decode() for b in bufs]})
