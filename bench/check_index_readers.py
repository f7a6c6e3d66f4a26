#!/usr/bin/env python3
"""The cold open with the kernel table read by K readers (rowid ranges,
server/src/index/index_read_ranges.c) against one reader: for each profile,
profile/open's answer and every cache file (index-*.bin, info-*.bin) must be
byte-identical. Prints one line per profile: kernel rows, the readers the
build used, the cold open's wall time per K, identical or what differs.
Exit status 1 when any profile differs.

usage: bench/check_index_readers.py [--bin build/nsys-ai] [--readers 4] PROFILE...
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

from test_index_readers import cold_open  # noqa: E402  (one definition of the comparison's open)


def kernel_rows(path: str) -> int:
    try:
        with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as db:
            return db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    except sqlite3.Error:
        return -1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    os.environ["NSYS_AI_BIN"] = a.bin
    bad = 0
    print(f"load {os.getloadavg()[0]:.2f}")
    print(f"{'profile':44} {'kernels':>9} {'K':>2} {'K=1 ms':>8} {'K=' + str(a.readers) + ' ms':>8}  result")
    with tempfile.TemporaryDirectory(prefix="readers-") as tmp:
        for p in a.profiles:
            t0 = time.monotonic()
            one, files1, _ = cold_open(Path(p), Path(tmp) / "k1", 1)
            t1 = time.monotonic()
            many, files_k, used = cold_open(Path(p), Path(tmp) / "kn", a.readers)
            t2 = time.monotonic()
            diff = []
            if many != one:
                diff.append("profile/open")
            if sorted(files1) != sorted(files_k):
                diff.append(f"cache files {sorted(files1)} vs {sorted(files_k)}")
            diff += [n for n in files1 if n in files_k and files1[n] != files_k[n]]
            bad += bool(diff)
            print(f"{Path(p).name[:44]:44} {kernel_rows(p):>9} {used:>2} {(t1 - t0) * 1000:>8.0f} "
                  f"{(t2 - t1) * 1000:>8.0f}  {'identical (' + str(len(files1)) + ' files)' if not diff else 'DIFFERS: ' + ', '.join(diff)}",
                  flush=True)
    print(f"load {os.getloadavg()[0]:.2f}; {len(a.profiles) - bad} of {len(a.profiles)} identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
