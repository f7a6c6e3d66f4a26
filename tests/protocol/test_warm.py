"""The background warm-up after profile/open (server/src/rpc/warm.h): what
area selections and explanations read is built on a low-priority thread.

1. Replies are the same bytes whether the warm-up is off (NSYS_AI_WARM=0),
   running while the requests come (NSYS_AI_WARM_DELAY_MS=0, requests sent
   at once after the open) or done (the profile reopened, its warm-up left to
   finish, then the same requests): the four area analyses with the clients'
   params on windows of 1/1, 1/2, 1/20 and the whole profile, kernel/explain
   of the largest names, and of one kernel of each of them per GPU (a click:
   by kernelId, the detectors the warm-up ran for that device).
2. A profile closed, and a server shut down, while its warm-up runs: the
   server answers on, exits 0, and (under an ASan/valgrind build) reports
   nothing.
Profile: a generated 30k-kernel export (the build takes long enough to be
caught midway).
"""
from __future__ import annotations

import time

import pytest

from conftest import generate
from nsys_rpc import Server

AREA = [("top_kernels", {"limit": 5}), ("overlap", {"perIteration": False}), ("gpu_idle_gaps", {"limit": 1}),
        ("kernel_launch_overhead", {"limit": 1})]


@pytest.fixture(scope="module")
def profile(generated_dir):
    return generate(generated_dir / "warm-30k.sqlite", "--kernels", "30000", "--gpus", "2")


def calls(pid: str, span: tuple[int, int], names: list[str], kernel_ids: list[int]) -> list[tuple[str, dict]]:
    a, b = span
    out = []
    wins = [{"start": a, "end": b}, {"start": a + (b - a) // 4, "end": a + 3 * (b - a) // 4},
            {"start": a + (b - a) // 2, "end": a + (b - a) // 2 + (b - a) // 20}, {}]
    for w in wins:
        for n, p in AREA:
            out.append(("analysis/run", {"profileId": pid, "name": n, "params": {**w, **p}}))
    out += [("kernel/explain", {"profileId": pid, "name": n}) for n in names]
    # clicks: explained by kernelId (grouped by demangled name, detectors per device)
    out += [("kernel/explain", {"profileId": pid, "kernelId": k}) for k in kernel_ids]
    return out


def one_kernel_per_device(srv: Server, pid: str, names: list[str]) -> list[int]:
    """For each name, the first instance on each device it ran on (search's instances)."""
    out = []
    for n in names:
        items = srv.request("search", {"profileId": pid, "query": n, "kinds": ["kernel"], "limit": 1,
                                       "instances": 200})["instances"]["items"]
        seen = set()
        for it in items:
            dev = it["track"].split(":")[1]
            if dev not in seen:
                seen.add(dev)
                out.append(it["id"])
    return out


def replies(srv: Server, cs: list[tuple[str, dict]]) -> list:
    ids = [srv.start(m, p) for m, p in cs]  # all at once, as a panel sends them
    out = []
    for i in ids:
        r = srv.wait_reply(i, timeout=120)
        assert "error" not in r, r
        out.append(r["result"])
    return out


def test_replies_with_warm_up_off_running_done(profile, cache_dir):
    with Server(env={"NSYS_AI_WARM": "0"}) as ref:
        info = ref.request("profile/open", {"path": str(profile)}, timeout=120)
        span = (info["info"]["span"]["start"], info["info"]["span"]["end"])
        rows = ref.request("analysis/run", {"profileId": info["profileId"], "name": "top_kernels",
                                            "params": {"limit": 3}})["rows"]
        names = [r["name"] for r in rows]
        ref.request("profile/close", {"profileId": info["profileId"]})
        info = ref.request("profile/open", {"path": str(profile)}, timeout=120)
        kids = one_kernel_per_device(ref, info["profileId"], names)
        assert len(kids) > len(names), "the profile's largest names should run on both GPUs"
        want = replies(ref, calls(info["profileId"], span, names, kids))
    with Server(env={"NSYS_AI_WARM_DELAY_MS": "0"}) as srv:
        pid = srv.request("profile/open", {"path": str(profile)}, timeout=120)["profileId"]
        assert replies(srv, calls(pid, span, names, kids)) == want  # the warm-up runs meanwhile
        srv.request("profile/close", {"profileId": pid})
        pid = srv.request("profile/open", {"path": str(profile)}, timeout=120)["profileId"]
        time.sleep(1.5)  # its warm-up done: explanations (detectors included) read what it computed
        assert replies(srv, calls(pid, span, names, kids)) == want
        srv.close()
        srv.assert_no_sanitizer_reports()


def test_close_and_exit_while_warming(profile, cache_dir):
    srv = Server(env={"NSYS_AI_WARM_DELAY_MS": "0"})
    for _ in range(3):
        pid = srv.request("profile/open", {"path": str(profile)}, timeout=120)["profileId"]
        assert srv.request("profile/close", {"profileId": pid}) == {"closed": True}
    pid = srv.request("profile/open", {"path": str(profile)}, timeout=120)["profileId"]
    r = srv.request("analysis/run", {"profileId": pid, "name": "kernel_launch_overhead", "params": {"limit": 1}})
    assert r["rows"]
    srv.request("profile/open", {"path": str(profile)}, timeout=120)  # the same profile: exit while warming
    assert srv.close(timeout=60) == 0
    srv.assert_no_sanitizer_reports()


def test_more_profiles_than_explain_slots(generated_dir, tmp_path, cache_dir):
    """Six profiles open (explain keeps four contexts): explanations asked on
    every profile at once, while the warm-ups run and after, equal those of a
    server without the warm-up, and an ASan/UBSan build reports nothing. The
    warm-up builds a context only into a free slot; a request's build may
    evict another profile's context while a request reads it, which is then
    freed by that read's release (before: a heap-use-after-free under ASan in
    one run in five to eight of this test)."""
    import shutil
    src = generate(generated_dir / "small.sqlite", "--preset", "small")
    paths = []
    for i in range(6):
        p = tmp_path / f"rank{i}.sqlite"
        shutil.copyfile(src, p)
        paths.append(p)
    with Server(env={"NSYS_AI_WARM": "0"}) as ref:
        pid = ref.request("profile/open", {"path": str(paths[0])}, timeout=120)["profileId"]
        names = [r["name"] for r in ref.request("analysis/run", {"profileId": pid, "name": "top_kernels",
                                                                "params": {"limit": 2}})["rows"]]
        want = ref.request("kernel/explain", {"profileId": pid, "name": names[0]})
    with Server(env={"NSYS_AI_WARM_DELAY_MS": "0"}) as srv:
        pids = [srv.request("profile/open", {"path": str(p)}, timeout=120)["profileId"] for p in paths]
        for _ in range(4):  # while the warm-ups run, then once they are done
            ids = [srv.start("kernel/explain", {"profileId": pid, "name": names[0]}) for pid in pids]
            for i in ids:
                r = srv.wait_reply(i, timeout=120)
                assert "error" not in r, r
                assert r["result"]["stats"] == want["stats"]
            time.sleep(0.2)
        srv.close()
        srv.assert_no_sanitizer_reports()
