"""The views widget's Python side (nsys_ai_native.views): what it hands the front end and how it
answers the view's requests (the drawing itself: tests/browser/views_check.mjs, in Chromium)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

views = pytest.importorskip("nsys_ai_native.views", reason="anywidget or the widget bundle (npm run build in js/) is missing")
import nsys_ai_native  # noqa: E402

GEN = Path(__file__).resolve().parents[3] / "tools" / "gen_profile.py"


def _gen(out: Path, *args: str) -> Path:
    subprocess.run([sys.executable, str(GEN), "--preset", "tiny", "-o", str(out), *args], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("views")
    return (_gen(d / "base.sqlite", "--kernels", "400", "--seed", "1"),
            _gen(d / "new.sqlite", "--kernels", "400", "--seed", "1", "--plant-slow-kernels", "gemm", "--plant-factor", "1.5"))


def test_diff_view_init_and_requests(pair: tuple[Path, Path]) -> None:
    base, new = nsys_ai_native.open(pair[0]), nsys_ai_native.open(pair[1])
    w = views.diff_view(base, new)
    init = json.loads(w.init)
    assert init["type"] == "diffInit"
    assert (init["base"]["profileId"], init["compare"]["profileId"]) == (base.id, new.id)
    assert init["diff"]["deltas"] and init["base"]["tracks"]["tracks"]
    # a request of the view: the server's JSON text, undecoded
    r = w.answer({"id": 7, "kind": "rpc", "method": "kernel/details", "params": json.dumps({"profileId": new.id, "kernelId": 0})})
    assert r["id"] == 7 and json.loads(r["result"]) == new.kernel(0)
    # refused: a method the view may not call, a profile not of this view
    assert w.answer({"id": 8, "method": "profile/close", "params": json.dumps({"profileId": base.id})})["code"] == -32601
    other = nsys_ai_native.open(_gen(pair[0].parent / "other.sqlite", "--kernels", "400", "--seed", "5"))
    assert w.answer({"id": 9, "method": "kernel/details", "params": json.dumps({"profileId": other.id, "kernelId": 0})})["code"] == -32602
    # a server error comes back as an error, the widget keeps answering
    bad = w.answer({"id": 10, "method": "kernel/details", "params": json.dumps({"profileId": base.id, "kernelId": -5})})
    assert bad["error"] and "result" not in bad
    # p.diff(other).show(): the same view from the diff engineer's result object
    shown = json.loads(base.diff(new).show().init)
    assert shown["type"] == "diffInit" and shown["diff"]["deltas"] == init["diff"]["deltas"]
    assert shown["compare"]["title"] == pair[1].name


def test_rank_set_view_init(pair: tuple[Path, Path]) -> None:
    two = _gen(pair[0].parent / "ranks2.sqlite", "--gpus", "2", "--kernels", "600", "--seed", "3")
    w = views.rank_set_view([two])
    init = json.loads(w.init)
    assert init["type"] == "ranksInit"
    assert len(init["set"]["ranks"]) == 2 and len(init["profiles"]) == 1
    assert w.profile_ids == {init["profiles"][0]["profileId"]}
    # set/collectives of the view's own set (the server's matching of a clicked collective), exact text
    sid = init["set"]["setId"]
    ask = lambda i, p: w.answer({"id": i, "kind": "rpc", "method": "set/collectives", "params": json.dumps(p)})  # noqa: E731
    rows = json.loads(ask(1, {"setId": sid, "limit": 5})["result"])["rows"]
    c = rows[0]
    one = json.loads(ask(2, {"setId": sid, "rank": c["lastRank"], "at": c["startsNs"][c["lastRank"]]})["result"])
    assert one["rows"] == [c]
    assert ask(3, {"setId": sid + "x"})["code"] == -32602
    assert ask(4, {"setId": sid, "rank": 0})["code"] == -32602  # rank without at: the server's error, passed on
    # the diff view has no set: refused
    d = views.diff_view(nsys_ai_native.open(pair[0]), nsys_ai_native.open(pair[1]))
    assert d.answer({"id": 5, "method": "set/collectives", "params": json.dumps({"setId": sid})})["code"] == -32601


def test_views_drawn_in_chromium(tmp_path: Path) -> None:
    """tests/browser/views_check.mjs: the widget's module in headless Chromium, its messages
    answered by the Python widget (see there for what is checked on the pixels)."""
    import os
    import shutil
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    here = Path(__file__).resolve().parent
    r = subprocess.run([node, str(here / "browser" / "views_check.mjs"), sys.executable, str(tmp_path)],
                       capture_output=True, text=True, timeout=240, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if r.returncode == 77:
        pytest.skip(r.stdout.strip() or "no chromium or playwright-core")
    assert r.returncode == 0, r.stdout + r.stderr
