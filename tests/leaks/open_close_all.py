#!/usr/bin/env python3
"""Leak and memory-growth checks for a long-lived server.

1. valgrind memcheck over a `nsys-ai serve` session that opens and closes every
   real profile (and a generated one): no definite or indirect leaks, no errors.
2. RSS of a plain server stays flat over 200 open/close cycles of one profile.
Prints one summary line; exits non-zero on failure.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "protocol"))
from nsys_rpc import RpcError, Server  # noqa: E402

SHARED = Path(os.environ.get("NSYS_AI_SHARED", REPO.parent / "shared"))


def profiles(tmp: Path) -> list[Path]:
    gen = tmp / "small.sqlite"
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "--preset", "small", "-o", str(gen)],
                   check=True)
    real = sorted((SHARED / "profiles").glob("*.sqlite")) if (SHARED / "profiles").is_dir() else []
    if not real:
        print(f"leaks: {SHARED}/profiles absent: checking the generated profile only")
    return [gen, *real]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    binary = os.environ.get("NSYS_AI_BIN", str(REPO / "build" / "nsys-ai"))
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        paths = profiles(tmp)
        cache = tmp / "cache"
        failures = []
        # 1. valgrind session
        if shutil.which("valgrind"):
            log = tmp / "vg.log"
            wrapper = tmp / "vg-nsys-ai"
            wrapper.write_text("#!/bin/sh\nexec valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect "
                               f"--error-exitcode=99 -q --log-file={log} {binary} \"$@\"\n")
            wrapper.chmod(0o755)
            os.environ["NSYS_AI_BIN"] = str(wrapper)
            s = Server(env={"NSYS_AI_CACHE_DIR": str(cache)})
            opened = 0
            for p in paths:
                try:
                    r = s.request("profile/open", {"path": str(p)}, timeout=600)
                    s.request("profile/close", {"profileId": r["profileId"]})
                    opened += 1
                except RpcError as e:
                    failures.append(f"{p.name}: {e}")
            rc = s.close(timeout=300)
            text = log.read_text() if log.exists() else ""
            if rc != 0 or text.strip():
                failures.append(f"valgrind session exit {rc}:\n{text[-3000:]}")
            print(f"leaks: valgrind session opened and closed {opened}/{len(paths)} profiles, exit {rc}")
            os.environ["NSYS_AI_BIN"] = binary
        else:
            print("leaks: valgrind not installed, skipping the memcheck session")
        # 2. RSS over 200 cycles
        target = max(paths, key=lambda p: p.stat().st_size if p.stat().st_size < 64 << 20 else 0)
        s = Server(env={"NSYS_AI_CACHE_DIR": str(cache)})
        samples = []
        for i in range(200):
            r = s.request("profile/open", {"path": str(target)}, timeout=600)
            s.request("profile/close", {"profileId": r["profileId"]})
            if i in (19, 199):
                samples.append(rss_kb(s.proc.pid))
        s.close()
        growth = samples[1] - samples[0]
        bound_kb = 8 * 1024
        print(f"leaks: RSS after 20 cycles {samples[0]} KiB, after 200 {samples[1]} KiB "
              f"(growth {growth} KiB, bound {bound_kb} KiB) on {target.name}")
        if growth > bound_kb:
            failures.append(f"RSS grew {growth} KiB over 180 open/close cycles")
        for f in failures:
            print("leaks: FAIL", f, file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
