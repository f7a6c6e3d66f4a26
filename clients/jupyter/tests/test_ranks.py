"""nsys_ai_native.ranks: a rank set reduced from summaries mapped over a Dask
LocalCluster (each task runs `nsys-ai rank-summary` as a subprocess; thread
workers keep the test cheap, the map is the same on process workers or Slurm)
equals the set the server opens itself; the planted straggler and clock offset
come through."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import generate
from nsys_ai_native import ranks

SET_KEYS = ("ranks", "clock", "collectives", "stragglers", "aligned", "window")


@pytest.fixture(scope="session")
def rank_files(gen_dir: Path) -> list[str]:
    out = gen_dir / "ranks4"
    generate(gen_dir / "ranks4_all.sqlite", "--preset", "tiny", "--gpus", "4", "--iterations", "15",
             "--kernels", "4000", "--shape", "nccl-nvtx", "--rank-files", str(out), "--ranks-per-node", "2",
             "--node-offset-ns", "3000000", "--straggler-rank", "2")
    return [str(out / ("rank%d.sqlite" % r)) for r in range(4)]


def _set_level(info: dict) -> dict:
    d = {k: info[k] for k in SET_KEYS}
    d["ranks"] = [{k: v for k, v in r.items() if k not in ("profileId", "file")} for r in d["ranks"]]
    return d


def test_summarize_runs_the_cli(rank_files: list[str]) -> None:
    sums = ranks.summarize(rank_files[0])
    assert len(sums) == 1 and sums[0]["device"] == 0 and sums[0]["payloadRank"] == 0
    assert len(sums[0]["collectives"]["start"]) == sums[0]["ncclKernels"]
    packed = ranks.summarize(rank_files[0], packed=True)
    assert packed[0]["collectives"]["n"] == sums[0]["ncclKernels"] and isinstance(packed[0]["collectives"]["packed"], str)
    assert {k: v for k, v in packed[0].items() if k != "collectives"} == {k: v for k, v in sums[0].items() if k != "collectives"}


def test_local_reduce_equals_open_set(rank_files: list[str]) -> None:
    local = ranks.open_set(rank_files, threads=2)
    red = ranks.reduce([s for f in rank_files for s in ranks.summarize(f)])
    assert _set_level(red.info) == _set_level(local.info)
    assert red.info["stragglers"]["straggler"] == 2
    local.close()
    red.close()


def test_dask_equals_server(rank_files: list[str]) -> None:
    distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'nsys-ai-native[dask]')")
    local = ranks.open_set(rank_files)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            dsk = ranks.open_set_dask(rank_files, client)
    assert _set_level(dsk.info) == _set_level(local.info)
    assert dsk.collectives() == local.collectives()
    assert dsk.stragglers() == {**local.stragglers(), "setId": dsk.id}
    assert dsk.nccl() == {**local.nccl(), "setId": dsk.id}
    ev = [e for e in dsk.stragglers(rank=2)["events"] if e["cause"] == "dataLoad"]
    assert {e["step"] for e in ev} == {0, 7, 14}
    assert {n["host"]: n["correctionNs"] for n in dsk.info["clock"]["nodes"]}["node1"] == 3_000_000
    local.close()
    dsk.close()


def _answers(s: ranks.RankSet) -> str:
    """Everything the set answers, without its id, as one JSON text."""
    import json
    strip = lambda d: {k: v for k, v in d.items() if k != "setId"}  # noqa: E731
    return json.dumps([strip(s.info), s.collectives(), strip(s.stragglers()), strip(s.nccl())])


def test_dask_reduce_in_pieces_under_the_frame_limit(rank_files: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose frame limit holds at most two of the packed summaries: open_set_dask
    reduces in pieces (set/reduce partial, then partialId), every request under the limit,
    and the set is the one-shot reduce's, to the byte."""
    import json

    from conftest import BIN
    from nsys_ai_native import _server
    distributed = pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'nsys-ai-native[dask]')")
    sums = [s for f in rank_files for s in ranks.summarize(f, packed=True)]
    whole = ranks.reduce(sums)  # one request on the default limit
    want = _answers(whole)
    whole.close()
    sizes = [len(json.dumps(s, separators=(",", ":")).encode()) for s in sums]
    limit = 2 * max(sizes) + 4096 + 2
    small = _server.Server(BIN, args=("--max-frame-bytes", str(limit)))
    sent: list[int] = []
    send = small._send
    monkeypatch.setattr(small, "_send", lambda msg: (sent.append(len(json.dumps(msg).encode())), send(msg))[1])
    monkeypatch.setattr(_server, "_shared", small)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
            with distributed.Client(cluster) as client:
                dsk = ranks.open_set_dask(rank_files, client)
        reduces = [n for n in sent if n > max(sizes)]
        assert 2 <= len(reduces) <= len(sums) and max(sent) <= limit, (sent, limit)
        assert _answers(dsk) == want
        assert dsk.info["stragglers"]["straggler"] == 2
        dsk.close()
    finally:
        small.close()


def test_pieces_stay_under_the_limit_and_keep_the_order() -> None:
    import json

    from nsys_ai_native import RequestTooLargeError
    sums = [{"path": "r%d" % i, "pad": "x" * (50 * (i % 7))} for i in range(40)]
    limit = 4096 + 700
    pieces = ranks._pieces(sums, limit)
    assert [s for p in pieces for s in p] == sums and all(pieces)
    assert all(len(json.dumps({"summaries": p}, separators=(",", ":"))) <= limit - 4096 + 20 for p in pieces)
    assert len(pieces) > 1 and ranks._pieces(sums, None) == [sums]
    with pytest.raises(RequestTooLargeError, match="summaries\\[3\\] alone"):
        ranks._pieces(sums[:3] + [{"pad": "y" * 800}], limit)
