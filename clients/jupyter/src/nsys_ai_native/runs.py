"""The workspace's run history (`.nsys-ai/runs.db`) and captures from a notebook.

    nsys_ai_native.runs()                          # DataFrame of runs, newest first
    p = nsys_ai_native.profile("python train.py")  # nsys profile -> a Profile of the new run
    nsys_ai_native.compare_runs()                  # the annotation loop: latest vs the one before
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
from typing import Any, Optional, Sequence, Union

from . import _server
from ._frames import frame
from .errors import EXPORT_FAILED, NsysAIError

_RUN_COLUMNS = ("name", "status", "createdNs", "command", "git", "report", "summary", "stats", "notes")


def _root(root: Optional[Union[str, "os.PathLike[str]"]]) -> str:
    """`root`, else the nearest of the current directory and its parents that holds a run
    history (`.nsys-ai/runs.db`, found as git finds `.git`: a notebook in `notebooks/` sees
    the workspace's runs), else the current directory; the CLI resolves it the same way."""
    if root is not None:
        return os.path.abspath(os.fspath(root))
    cwd = os.getcwd()
    d = cwd
    while True:
        if os.path.exists(os.path.join(d, ".nsys-ai", "runs.db")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return cwd
        d = up


def runs(root: Optional[Union[str, "os.PathLike[str]"]] = None, *, limit: Optional[int] = None,
         server: Optional[str] = None, frames: bool = True) -> Any:
    """`runs/list`: the runs of the workspace `root` (default: the nearest with a history),
    newest first; a DataFrame (historyPath in `df.attrs`), or the list without pandas."""
    params: dict[str, Any] = {"workspaceRoot": _root(root)}
    if limit is not None:
        params["limit"] = limit
    res = _server.shared_server(server)[0].request("runs/list", params)
    if not frames:
        return res["runs"]
    return frame(res["runs"], {"historyPath": res["historyPath"]}, _RUN_COLUMNS)


def note(run: str, text: str, *, kind: str = "note", root: Optional[Union[str, "os.PathLike[str]"]] = None,
         server: Optional[str] = None) -> dict:
    """`runs/note`: a note, hypothesis or decision on a run ("latest", a name, "#ID")."""
    out: dict = _server.shared_server(server)[0].request(
        "runs/note", {"workspaceRoot": _root(root), "run": run, "text": text, "kind": kind})["note"]
    return out


def compare_runs(before: Optional[str] = None, after: Optional[str] = None, *,
                 root: Optional[Union[str, "os.PathLike[str]"]] = None, server: Optional[str] = None) -> dict:
    """`runs/compare`: tags added since `before`, kernels per innermost tag, convergence
    and coverage over time (default: the latest run against the one before)."""
    params: dict[str, Any] = {"workspaceRoot": _root(root)}
    if before:
        params["before"] = before
    if after:
        params["after"] = after
    out: dict = _server.shared_server(server)[0].request("runs/compare", params)
    return out


def profile(command: Union[str, Sequence[str]], *, root: Optional[Union[str, "os.PathLike[str]"]] = None,
            name: Optional[str] = None, note: Optional[str] = None, trace: Optional[str] = None,
            before: Optional[str] = None, nsys_flags: Sequence[str] = (), server: Optional[str] = None,
            timeout: Optional[float] = None) -> Any:
    """Captures `command` with `nsys-ai profile` (nsys profile with ML defaults, exported
    into ROOT/.nsys-ai/runs/NAME/), records the run and opens its report. The run and
    the doctor's findings are in `p.run` and `p.doctor`. Raises NsysAIError when nsys is
    absent or the capture fails (the run is kept as failed)."""
    from .profile import open as open_profile
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("profile: empty command")
    cli = [_server.find_server(server), "profile", "--format", "json", "--root", _root(root)]
    for flag, value in (("--name", name), ("--note", note), ("--trace", trace), ("--before", before)):
        if value:
            cli += [flag, value]
    for f in nsys_flags:
        cli += ["--nsys-flag", f]
    proc = subprocess.run(cli + ["--"] + argv, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        out = {}
    if proc.returncode != 0 or "error" in out:
        err = out.get("error") or {"code": EXPORT_FAILED, "message": proc.stderr.strip()[-2000:]}
        raise NsysAIError(err["code"], err["message"], {"run": err.get("run"), "stderr": proc.stderr[-8000:]})
    p = open_profile(out["run"]["report"], server=server)
    p.run = out["run"]  # type: ignore[attr-defined]
    p.doctor = out["doctor"]  # type: ignore[attr-defined]
    return p
