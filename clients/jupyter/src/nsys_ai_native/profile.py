"""`Profile`: one open Nsight Systems export, with methods mirroring the RPC methods."""
from __future__ import annotations

import html
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Optional, Union, cast

from . import _protocol, _server
from ._frames import flatten_tree, frame, have_pandas, timeline_rows
from ._rich import Explanation, Report
from .diff import Diff, diff_params
from .errors import PROFILE_NOT_OPEN, NsysAIError

if TYPE_CHECKING:
    from ._protocol import ProfileInfoResult
    from .widget import NvtxTreeWidget, TimelineWidget

# Method names: generated from protocol/methods.json.
M_OPEN = _protocol.PROFILE_OPEN
M_INFO = _protocol.PROFILE_INFO
M_CLOSE = _protocol.PROFILE_CLOSE
M_ANALYSIS = _protocol.ANALYSIS_RUN
M_ANALYSES = _protocol.ANALYSIS_LIST
M_REPORT = _protocol.REPORT_GENERATE
M_DIFF = _protocol.PROFILE_DIFF
M_TREE = _protocol.NVTX_TREE
M_TRACKS = _protocol.TIMELINE_TRACKS
M_RANGE = _protocol.TIMELINE_RANGE
M_EXPLAIN = _protocol.KERNEL_EXPLAIN
M_KERNELS_AT = _protocol.SOURCE_KERNELS_AT
M_SEARCH = _protocol.SEARCH
M_DETAILS = _protocol.KERNEL_DETAILS

TOP_KERNEL_COLUMNS = ("name", "count", "totalNs", "avgNs", "minNs", "maxNs", "medianNs", "pctOfGpu")


class Profile:
    """An Nsight Systems SQLite export opened by the shared `nsys-ai serve`.

    Tabular results are pandas DataFrames when pandas is installed (metadata such
    as the time window in `df.attrs`), plain dicts and lists otherwise; pass
    `frames=False` to always get the plain results. Server errors raise
    `NsysAIError(code, message)`.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, server: Optional[str] = None,
                 frames: Optional[bool] = None) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.frames = have_pandas() if frames is None else bool(frames and have_pandas())
        self._server_arg = server
        self._lock = threading.Lock()
        self._generation = -1
        self._id = ""
        self._info: Optional[dict] = None
        self._closed = False
        t0 = time.time() * 1e3
        self._open()
        # wall-clock ms of this open (the widget's first-frame breakdown, bench_widget_ux.py)
        self.opened_ms = (t0, time.time() * 1e3)

    # -- connection --------------------------------------------------------------
    def _open(self) -> tuple[_server.Server, str]:
        with self._lock:
            srv, gen = _server.shared_server(self._server_arg)
            if gen != self._generation:  # first use, or the server was restarted
                res = srv.request(M_OPEN, {"path": self.path}, progress=_notebook_progress(self.path))
                self._id = res["profileId"]
                self._info = res.get("info")
                self._generation = gen
                self._closed = False
            return srv, self._id

    @property
    def id(self) -> str:
        """The server's profileId (reopened transparently after a server restart)."""
        return self._open()[1]

    @property
    def server(self) -> _server.Server:
        return self._open()[0]

    def request(self, method: str, params: Optional[dict] = None, *, id_key: str = "profileId",
                timeout: Optional[float] = None, raw: bool = False, cancel: Optional[_server.Cancel] = None) -> Any:
        """Calls any server method with this profile's id added as `id_key`
        (`raw=True`: the result's JSON text as bytes, undecoded; `cancel`: cancellable from
        another thread, raising NsysAIError(CANCELLED))."""
        if self._closed:
            raise ValueError(f"profile {self.path} is closed")
        for attempt in (0, 1):
            srv, pid = self._open()
            try:
                if raw:
                    return srv.request_raw(method, {id_key: pid, **(params or {})}, timeout=timeout)
                return srv.request(method, {id_key: pid, **(params or {})}, timeout=timeout, cancel=cancel)
            except NsysAIError as e:
                if e.code != PROFILE_NOT_OPEN or attempt:
                    raise
                with self._lock:  # closed behind our back: reopen once
                    self._generation = -1

    def close(self) -> None:
        """Closes the profile on the server (the Python object becomes unusable)."""
        if not self._closed and self._generation >= 0:
            srv, gen = _server.shared_server(self._server_arg)
            if gen == self._generation:
                try:
                    srv.request(M_CLOSE, {"profileId": self._id})
                except NsysAIError:
                    pass
        self._closed = True

    def __enter__(self) -> "Profile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- methods -------------------------------------------------------------------
    def info(self) -> "ProfileInfoResult":
        """`profile/info`: versions, span, counts, GPUs, devices, processes, features."""
        return cast("ProfileInfoResult", self.request(M_INFO))

    def analyses(self) -> Any:
        """`analysis/list`: the analyses the server knows."""
        res = _server.shared_server(self._server_arg)[0].request(M_ANALYSES, {})
        rows = res.get("analyses", res) if isinstance(res, dict) else res
        return frame(rows) if self.frames and isinstance(rows, list) else rows

    def analyze(self, name: str, **params: Any) -> Any:
        """`analysis/run`: a DataFrame of its rows (name, params, window, summary in
        `df.attrs`), or the whole result dict without pandas."""
        res = self.request(M_ANALYSIS, {"name": name, "params": params})
        if not self.frames:
            return res
        attrs = {k: v for k, v in res.items() if k != "rows"}
        cols = TOP_KERNEL_COLUMNS if name == "top_kernels" else None
        return frame(res.get("rows") or [], attrs, cols)

    def top_kernels(self, **params: Any) -> Any:
        """The `top_kernels` analysis (rows: name, count, totalNs, avgNs, minNs, maxNs, medianNs, pctOfGpu, ...)."""
        return self.analyze("top_kernels", **params)

    def report(self) -> Report:
        """The root-cause report; displays as markdown/HTML in a notebook."""
        return Report(self.request(M_REPORT, {"format": "markdown"}))

    def nvtx_tree(self, **params: Any) -> Any:
        """`nvtx/tree` flattened depth-first (depth, path columns; roots in `df.attrs['roots']`),
        or the list of root nodes without pandas. Takes nvtx/tree's params; without
        maxDepth, each root's whole subtree (a page of roots within the 2 MiB reply cap:
        `df.attrs['next']` continues as `cursor=`, `maxBytes=` raises the cap)."""
        params = {"maxDepth": 65535, **params}
        res = self.request(M_TREE, params)
        roots: list[dict] = (res.get("roots", res.get("nodes", [])) if isinstance(res, dict) else res) or []
        if not self.frames:
            return roots
        attrs = {k: v for k, v in res.items() if k not in ("roots", "nodes")} if isinstance(res, dict) else {}
        attrs["roots"] = roots
        return frame(flatten_tree(roots), attrs, ("depth", "name", "path"))

    def tracks(self) -> Any:
        """`timeline/tracks`: every GPU stream and host thread row."""
        res = self.request(M_TRACKS)
        rows = res.get("tracks", []) if isinstance(res, dict) else res
        return frame(rows, None, ("id", "kind", "name")) if self.frames else rows

    def timeline(self, start: Optional[int] = None, end: Optional[int] = None, width: int = 2000,
                 tracks: Optional[list[str]] = None) -> Any:
        """`timeline/range` over [start, end) ns (default: the whole span): one row per event
        or bucket (track, type, start, end, ...; resolution in `df.attrs`), or the raw result."""
        span = self.span()
        params: dict[str, Any] = {"start": span[0] if start is None else int(start),
                                  "end": span[1] if end is None else int(end), "width": int(width)}
        if tracks is not None:
            params["tracks"] = list(tracks)
        res = self.request(M_RANGE, params)
        if not self.frames:
            return res
        attrs = {k: v for k, v in res.items() if k != "tracks"}
        return frame(timeline_rows(res), attrs, ("track", "type", "start", "end", "name"))

    def explain(self, kernel: Union[str, int], cancel: Optional[_server.Cancel] = None) -> Explanation:
        """`kernel/explain` by name (str) or kernelId (int); displays its markdown (`cancel`:
        cancellable from another thread)."""
        key = "kernelId" if isinstance(kernel, int) else "name"
        return Explanation(self.request(M_EXPLAIN, {key: kernel}, cancel=cancel))

    def search(self, query: str, kinds: Optional[list[str]] = None, limit: Optional[int] = None) -> Any:
        """`search`: kernel and NVTX names matching a substring or glob, with counts and total time."""
        params: dict[str, Any] = {"query": query}
        if kinds is not None:
            params["kinds"] = list(kinds)
        if limit is not None:
            params["limit"] = int(limit)
        res = self.request(M_SEARCH, params)
        if not self.frames:
            return res
        return frame(res.get("results") or [], {k: v for k, v in res.items() if k != "results"},
                     ("kind", "name", "count", "totalNs"))

    def kernel(self, kernel_id: int) -> dict:
        """`kernel/details`: every column of one GPU op, its launching API call and NVTX path."""
        return cast(dict, self.request(M_DETAILS, {"kernelId": int(kernel_id)}))

    def kernels_at(self, file: Union[str, "os.PathLike[str]"], line: int,
                   workspace_root: Optional[Union[str, "os.PathLike[str]"]] = None) -> Any:
        """`source/kernelsAt`: the kernels attributed to FILE:LINE (count, totalNs, pctGpu in
        `df.attrs`), or the raw result without pandas."""
        params: dict[str, Any] = {"file": os.fspath(file), "line": int(line)}
        if workspace_root is not None:
            params["workspaceRoot"] = os.fspath(workspace_root)
        res = self.request(M_KERNELS_AT, params)
        rows = res.get("kernels", []) if isinstance(res, dict) else res
        if not self.frames:
            return res
        attrs = {k: v for k, v in res.items() if k != "kernels"} if isinstance(res, dict) else {}
        return frame(rows, attrs)

    def diff(self, other: Union["Profile", str, "os.PathLike[str]"], thresholds: Optional[dict] = None,
             limit: Optional[int] = None, offset: Optional[int] = None, kinds: Optional[list] = None,
             iteration_limit: Optional[int] = None) -> Diff:
        """`profile/diff` with this profile as base and `other` (a Profile or a path) as compare:
        verdict, components, ranked deltas, per-iteration values (docs/diff.md). `thresholds`
        ({"step": 5, "families": {"gemm": 10}}) adds the gate's outcome (`.gate`)."""
        if not isinstance(other, Profile):
            other = Profile(other, server=self._server_arg, frames=self.frames)
        params = {"compare": other.id, **diff_params(thresholds, limit, offset, kinds, iteration_limit)}
        return Diff(self.request(M_DIFF, params, id_key="base"))

    # -- display ---------------------------------------------------------------------
    def span(self) -> tuple[int, int]:
        """(start, end) ns of the profile's activity (end > start)."""
        info = self._info or self.info()
        s = info.get("span") or {"start": 0, "end": 0}
        start, end = int(s["start"]), int(s["end"])
        return start, max(end, start + 1)  # never empty (a capture with no timed row has no span)

    def show(self, start: Optional[int] = None, end: Optional[int] = None,
             height: int = 420, wire: Optional[str] = None) -> "TimelineWidget":
        """An interactive timeline (wheel to zoom, drag to pan) served by `timeline/range`
        (`wire`: the reply layout, "jsonz" by default, or "json"; see the README)."""
        from .widget import TimelineWidget
        return TimelineWidget(self, start=start, end=end, height=height, wire=wire)

    def tree(self, **params: Any) -> "NvtxTreeWidget":
        """An NVTX tree widget (collapsible, loaded level by level; CPU and projected GPU
        times). Takes `nvtx/tree`'s params: start, end, device, thread, maxDepth,
        aggregate=True (merge equal paths across iterations), topKernels."""
        from .widget import NvtxTreeWidget
        return NvtxTreeWidget(self, params)

    def __repr__(self) -> str:
        return f"<nsys_ai_native.Profile {self.path!r} id={self._id!r}>"

    def _repr_html_(self) -> str:
        info = self._info or {}
        counts = info.get("counts") or {}
        gpus = ", ".join(str(g.get("name")) for g in info.get("gpus") or []) or "none listed"
        span = info.get("span") or {}
        dur = (span.get("end", 0) - span.get("start", 0)) / 1e9 if span else 0.0
        rows = [("file", self.path), ("nsys", info.get("nsysVersion")), ("GPUs", gpus),
                ("span", f"{dur:.3f} s"),
                ("kernels", f"{counts.get('kernels', 0):,}"), ("NVTX rows", f"{counts.get('nvtx', 0):,}"),
                ("memcpy", f"{counts.get('memcpy', 0):,}")]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                       f"{html.escape(str(v))}</td></tr>" for k, v in rows)
        return f"<table class='nsys-ai-profile'>{body}</table>"


def _notebook_progress(path: str, after_s: float = 0.5) -> Optional[Callable[[dict], None]]:
    """In a notebook kernel, a `$/progress` handler that shows a progress bar for opens
    that take longer than `after_s` (index builds) and clears it at the end."""
    try:
        from IPython import get_ipython
        ip = get_ipython()
        if ip is None or not hasattr(ip, "kernel"):
            return None
        from IPython.display import HTML, display
    except ImportError:
        return None
    t0 = time.monotonic()
    handle: Any = None
    name = html.escape(os.path.basename(path))

    def show(value: dict) -> None:
        nonlocal handle
        if value.get("kind") == "end":
            if handle is not None:
                handle.update(HTML(""))
            return
        if handle is None and time.monotonic() - t0 < after_s:
            return
        pct = value.get("percentage")
        what = html.escape(str(value.get("message") or value.get("title") or ""))
        bar = HTML(f"<progress max='100' value='{int(pct or 0)}'></progress> opening {name} {what}")
        if handle is None:
            handle = display(bar, display_id=True)
        else:
            handle.update(bar)

    return show


def open(path: Union[str, "os.PathLike[str]"], *, server: Optional[str] = None,  # noqa: A001
         frames: Optional[bool] = None) -> Profile:
    """Opens an Nsight Systems export (.sqlite, or .nsys-rep when nsys is installed)."""
    return Profile(path, server=server, frames=frames)
