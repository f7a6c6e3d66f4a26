"""Notebook widgets of the views over several profiles: the diff view of two profiles
(`diff_view(base, new)`) and the multi-rank timeline of a rank set (`rank_set_view(paths)`).

They are the VS Code extension's views, drawn by the same code (clients/vscode/src/webview,
bundled into static/views.js by js/src/views.ts): the widget's `init` trait is the view's
data (the extension host's `diffInit` / `ranksInit` message, clients/vscode/src/protocol/
viewMessages.ts) as exact JSON text, and the view's requests come as custom messages
`{id, kind: "rpc", method, params}` (params as JSON text), answered `{id, kind: "rpc",
result}` with the server's JSON text undecoded (exact 64-bit integers), or `{id, kind:
"rpc", error, code}`. Only the read-only methods the VS Code webview may call are served,
and only for the view's own profiles (and set/collectives for the ranks view's own set).
"""
from __future__ import annotations

import json
import os
import pathlib
from typing import TYPE_CHECKING, Any, Optional, Union

import anywidget
import traitlets

from . import _protocol, _server
from .errors import NsysAIError
from .widget import _bundle

if TYPE_CHECKING:
    from .profile import Profile

# what a view may ask (the VS Code webview's WEBVIEW_METHODS, clients/vscode/src/client/nsysClient.ts)
VIEW_METHODS = frozenset({
    _protocol.TIMELINE_TRACKS, _protocol.TIMELINE_RANGE, _protocol.NVTX_TREE, _protocol.KERNEL_DETAILS,
    _protocol.KERNEL_EXPLAIN, _protocol.ANALYSIS_RUN, _protocol.ANALYSIS_LIST, _protocol.REPORT_GENERATE,
    _protocol.SEARCH, _protocol.PROFILE_INFO,
})


class ViewWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """A view over several profiles (see the module's docstring)."""

    _esm = _bundle("views.js")
    init = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(640).tag(sync=True)

    def __init__(self, server: _server.Server, init: dict, height: int = 640, **kwargs: Any) -> None:
        super().__init__(init=json.dumps(init), height=height, **kwargs)
        self._server = server
        self.set_id = init["set"]["setId"] if init.get("type") == "ranksInit" else None
        if init.get("type") == "diffInit":
            self.profile_ids = frozenset({init["base"]["profileId"], init["compare"]["profileId"]})
        else:
            self.profile_ids = frozenset(p["profileId"] for p in init.get("profiles", []))
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("kind") == "rpc":
            self.send(self.answer(content))

    def answer(self, content: dict) -> dict:
        """The reply to one request of the view."""
        rid = content.get("id")
        try:
            method = str(content.get("method"))
            params = json.loads(str(content.get("params") or "{}"))
            if method not in VIEW_METHODS and not (method == _protocol.SET_COLLECTIVES and self.set_id):
                return {"id": rid, "kind": "rpc", "error": f"{method} is not available to the view", "code": -32601}
            if method == _protocol.SET_COLLECTIVES:  # the ranks view links a collective as the server matched it
                if not isinstance(params, dict) or params.get("setId") != self.set_id:
                    return {"id": rid, "kind": "rpc", "error": f"{method}: the request names no set of this view",
                            "code": -32602}
            elif not isinstance(params, dict) or params.get("profileId") not in self.profile_ids:
                return {"id": rid, "kind": "rpc", "error": f"{method}: the request names no profile of this view",
                        "code": -32602}
            return {"id": rid, "kind": "rpc", "result": self._server.request_raw(method, params).decode("utf-8")}
        except NsysAIError as e:
            return {"id": rid, "kind": "rpc", "error": e.message, "code": e.code}
        except Exception as e:  # never leave the view waiting
            return {"id": rid, "kind": "rpc", "error": f"{type(e).__name__}: {e}", "code": None}


def _side(srv: _server.Server, side: dict) -> dict:
    """A run of a profile/diff result as the view needs it: its id, file name, info and tracks."""
    pid = side["profileId"]
    return {"profileId": pid, "title": pathlib.Path(str(side.get("file") or pid)).name,
            "info": srv.request(_protocol.PROFILE_INFO, {"profileId": pid}),
            "tracks": srv.request(_protocol.TIMELINE_TRACKS, {"profileId": pid})}


def diff_result_view(diff: dict, *, server: Optional[str] = None, height: int = 640) -> ViewWidget:
    """The diff view of a profile/diff result (`p.diff(other)`'s, whose `.show()` calls this):
    both timelines on one clock aligned on their steady-state starts (pans and zooms linked),
    the verdict and comparability on top, the ranked deltas beside them (a click shows both
    runs' evidence windows)."""
    srv, _ = _server.shared_server(server)
    init = {"type": "diffInit", "base": _side(srv, diff["base"]), "compare": _side(srv, diff["compare"]), "diff": dict(diff)}
    return ViewWidget(srv, init, height=height)


def diff_view(base: "Profile", new: "Profile", height: int = 640) -> ViewWidget:
    """The diff view of two profiles (see diff_result_view)."""
    return diff_result_view(base.request(_protocol.PROFILE_DIFF, {"compare": new.id}, id_key="base"),
                            server=base._server_arg, height=height)


def rank_set_view(paths: "list[Union[str, os.PathLike[str]]]", *, server: Optional[str] = None,
                  height: int = 640) -> ViewWidget:
    """The multi-rank timeline of a rank set (one export per rank, or one multi-GPU export):
    one utilisation row per rank on the set's clock (click a rank for its streams), collectives
    linked across ranks (the last arriver marked), the straggler table beside it."""
    srv, _ = _server.shared_server(server)
    res = srv.request(_protocol.PROFILE_OPEN_SET, {"paths": [os.path.abspath(os.fspath(p)) for p in paths]})
    profiles = []
    for f in res["files"]:
        pid = f.get("profileId")
        if pid is None:  # closed after its summary (the set's memory budget): not drawn
            continue
        profiles.append({"profileId": pid, "title": pathlib.Path(str(f["path"])).name,
                         "info": srv.request(_protocol.PROFILE_INFO, {"profileId": pid}),
                         "tracks": srv.request(_protocol.TIMELINE_TRACKS, {"profileId": pid})})
    return ViewWidget(srv, {"type": "ranksInit", "set": res, "profiles": profiles}, height=height)
