#!/usr/bin/env python3
"""Runs every libFuzzer target for a bounded time and prints one summary line.

Targets are the executables named fuzz_* under BUILD/fuzz/. Each runs on a
scratch copy of its seed corpus (fuzz/<module>/corpus/, plus seeds that a
target's `<target>.seeds` script prints, if any). A crash fails the run and
leaves the reproducer in fuzz-out/ so it can become a regression test.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build-fuzz")
    ap.add_argument("--seconds", type=int, default=30)
    args = ap.parse_args()
    build = (REPO / args.build).resolve()
    targets = sorted(p for p in (build / "fuzz").rglob("fuzz_*") if p.is_file() and os.access(p, os.X_OK))
    if not targets:
        print(f"fuzz: no targets under {build}/fuzz", file=sys.stderr)
        return 1
    out_dir = REPO / "fuzz-out"
    total_execs = 0
    crashes = 0
    for t in targets:
        module = t.parent.name
        seeds = REPO / "fuzz" / module / "corpus" / t.name
        if not seeds.is_dir():
            seeds = REPO / "fuzz" / module / "corpus"
        with tempfile.TemporaryDirectory(prefix=f"{t.name}-") as work:
            if seeds.is_dir():
                for s in seeds.iterdir():
                    if s.is_file():
                        shutil.copy(s, work)
            gen = REPO / "fuzz" / module / f"{t.name}.seeds.py"
            if gen.exists():
                subprocess.run([sys.executable, str(gen), work], check=False)
            out_dir.mkdir(exist_ok=True)
            cmd = [str(t), f"-max_total_time={args.seconds}", "-print_final_stats=1",
                   "-timeout=10", "-rss_limit_mb=2048", f"-artifact_prefix={out_dir}/{t.name}-", work]
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1")
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            m = re.search(r"stat::number_of_executed_units:\s*(\d+)", r.stderr)
            execs = int(m.group(1)) if m else 0
            total_execs += execs
            ok = r.returncode == 0
            print(f"fuzz target {t.name}: {execs} execs, {'ok' if ok else 'CRASH'}")
            if not ok:
                crashes += 1
                print(r.stderr[-4000:], file=sys.stderr)
    line = f"fuzz: {total_execs} execs, {len(targets)} targets, {crashes} crashes"
    print(line)
    stats = os.environ.get("NSYS_AI_STATS_DIR")
    if stats:
        Path(stats).mkdir(parents=True, exist_ok=True)
        (Path(stats) / "fuzz.txt").write_text(line + "\n")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
