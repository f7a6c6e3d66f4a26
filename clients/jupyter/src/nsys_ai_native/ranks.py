"""Rank sets: many per-rank exports on one clock, collectives matched across ranks,
stragglers with causes, NCCL bandwidth (docs/multirank.md).

    from nsys_ai_native import ranks
    s = ranks.open_set(glob.glob("run/rank*.sqlite"))      # the server indexes them in parallel
    s.stragglers()["events"]; s.collectives(); s.nccl()

Past one machine, the map step runs on a Dask cluster: each worker runs
`nsys-ai rank-summary FILE` (a subprocess; nothing shared but the file system),
and the set is reduced by the local server from the gathered summaries:

    from dask.distributed import Client
    s = ranks.open_set_dask(paths, Client(cluster))

The results are the server's own (set/reduce runs the same reduction as
profile/openSet), so a set reduced on Dask equals the set opened locally.
Summaries too large for one request under the server's frame limit are sent in
pieces, each under it (`reduce`).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from typing import Any, Iterable, Optional

from . import _protocol, _server
from .errors import RequestTooLargeError

M_OPEN_SET = _protocol.PROFILE_OPEN_SET
M_COLLECTIVES = _protocol.SET_COLLECTIVES
M_STRAGGLERS = _protocol.SET_STRAGGLERS
M_NCCL = _protocol.SET_NCCL
M_CLOSE = _protocol.SET_CLOSE
M_REDUCE = _protocol.SET_REDUCE


def summarize(path: str, binary: Optional[str] = None, packed: bool = False) -> list[dict]:
    """One file's rank summaries (`nsys-ai rank-summary FILE`, run as a subprocess:
    what a Dask worker calls). Uses the worker's index cache like any open. `packed`:
    the collectives in the packed form (`--packed`: one base64 string instead of a JSON
    array per column; `reduce` reads both), what `open_set_dask` gathers."""
    exe = _server.find_server(binary)
    out = subprocess.run([exe, "rank-summary", os.fspath(path), *(["--packed"] if packed else [])], check=False,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("nsys-ai rank-summary %s failed (%d): %s" % (path, out.returncode, out.stderr.strip()))
    return list(json.loads(out.stdout)["summaries"])


class RankSet:
    """A set kept by the server (profile/openSet or set/reduce); `info` is that reply."""

    def __init__(self, info: dict, server: Optional[str] = None) -> None:
        self.info = info
        self.id = info["setId"]
        self._server_arg = server

    def _srv(self) -> _server.Server:
        return _server.shared_server(self._server_arg)[0]

    def _all(self, method: str, params: dict, key: str) -> dict:
        """Every page of a paged set method, rows concatenated under `key`."""
        res = self._srv().request(method, {"setId": self.id, **params})
        rows = list(res[key])
        while res.get("next"):
            res = self._srv().request(method, {"setId": self.id, **params, "cursor": res["next"]})
            rows += res[key]
        res[key] = rows
        res["next"] = None
        return dict(res)

    def collectives(self, type: Optional[str] = None) -> list[dict]:
        """Every matched collective (set/collectives, all pages)."""
        params = {"limit": 100000, **({"type": type} if type else {})}
        return list(self._all(M_COLLECTIVES, params, "rows")["rows"])

    def stragglers(self, rank: Optional[int] = None, step_offset: int = 0, step_limit: int = 256) -> dict:
        """set/stragglers with every event page."""
        params: dict[str, Any] = {"limit": 100000, "stepOffset": step_offset, "stepLimit": step_limit}
        if rank is not None:
            params["rank"] = rank
        return self._all(M_STRAGGLERS, params, "events")

    def nccl(self) -> dict:
        """The NCCL summary per collective type and size bucket (set/nccl)."""
        return dict(self._srv().request(M_NCCL, {"setId": self.id}))

    def close(self) -> bool:
        return bool(self._srv().request(M_CLOSE, {"setId": self.id})["closed"])


def open_set(paths: Iterable[str], *, memory_budget_mb: Optional[int] = None, threads: Optional[int] = None,
             server: Optional[str] = None) -> RankSet:
    """profile/openSet on the local server: files indexed in parallel within the budget."""
    params: dict[str, Any] = {"paths": [os.path.abspath(os.fspath(p)) for p in paths]}
    if memory_budget_mb is not None:
        params["memoryBudgetMb"] = memory_budget_mb
    if threads is not None:
        params["threads"] = threads
    return RankSet(_server.shared_server(server)[0].request(M_OPEN_SET, params), server)


# room left in a request for its envelope and the params besides the summaries
_ENVELOPE_BYTES = 4096


def _pieces(summaries: list[dict], limit: Optional[int]) -> list[list[dict]]:
    """The summaries in consecutive pieces, each request's body under `limit` bytes (None: one piece)."""
    if limit is None:
        return [summaries]
    room = limit - _ENVELOPE_BYTES
    out: list[list[dict]] = [[]]
    used = 0
    for i, s in enumerate(summaries):
        size = len(json.dumps(s, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) + 1
        if size > room:
            raise RequestTooLargeError(f"{M_REDUCE} (summaries[{i}] alone)", size + _ENVELOPE_BYTES, limit)
        if used + size > room and out[-1]:
            out.append([])
            used = 0
        out[-1].append(s)
        used += size
    return out


def reduce(summaries: list[dict], server: Optional[str] = None) -> RankSet:
    """set/reduce on the local server: gathered summaries (file order) to a set. When they do
    not fit one request under the server's frame limit (`maxFrameBytes`), they go in pieces
    (set/reduce `partial`, then `partialId`), each under it: the same set, to the byte."""
    srv = _server.shared_server(server)[0]
    pieces = _pieces(summaries, srv.max_frame_bytes)
    partial_id: Optional[str] = None
    try:
        for piece in pieces[:-1]:
            partial_id = srv.request(M_REDUCE, {"summaries": piece, "partial": True,
                                                **({"partialId": partial_id} if partial_id else {})})["partialId"]
        info = srv.request(M_REDUCE, {"summaries": pieces[-1], **({"partialId": partial_id} if partial_id else {})})
    except BaseException:
        if partial_id is not None:  # a piece failed: drop what the server kept
            try:
                srv.request(M_CLOSE, {"setId": partial_id}, timeout=30)
            except Exception:
                pass
        raise
    return RankSet(info, server)


def open_set_dask(paths: Iterable[str], client: Any, *, binary: Optional[str] = None,
                  server: Optional[str] = None) -> RankSet:
    """The map step on a Dask cluster (`client`: a dask.distributed.Client), one task per
    file running `nsys-ai rank-summary --packed` on a worker (`binary`: its path there; default: the
    worker's $NSYS_AI_SERVER or installed nsys-ai), then `reduce` locally. Needs
    `pip install 'nsys-ai-native[dask]'`; on Slurm, make `client` from dask_jobqueue.SLURMCluster."""
    if importlib.util.find_spec("distributed") is None:  # pragma: no cover - depends on the environment
        raise ImportError("open_set_dask needs dask.distributed: pip install 'nsys-ai-native[dask]'")
    files = [os.path.abspath(os.fspath(p)) for p in paths]
    futures = client.map(summarize, files, binary=binary, packed=True, pure=False)
    per_file = client.gather(futures)
    return reduce([s for file_sums in per_file for s in file_sums], server)
