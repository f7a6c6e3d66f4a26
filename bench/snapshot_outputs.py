#!/usr/bin/env python3
"""Captures the JSON answers of every analysis, report/generate and
profile/diff on a set of profiles, so an algorithmic change can be checked to
leave every number as it was:

    bench/snapshot_outputs.py capture OUTDIR [--bin B] PROFILE...   (or --real: /work/shared/profiles)
    bench/snapshot_outputs.py compare DIR_A DIR_B                    (exit 1 on any difference)

kernel/explain of the four largest kernel names of each profile is captured
too (kernel.explain.0-3). One file per (profile, method): OUTDIR/<profile stem>/<method>.json, written
with sorted keys (integers stay exact: Python parses JSON integers exactly).
profile/diff compares each profile with the next one in the list. Methods that
answer an error are recorded as {"error": {code, message}}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "protocol"))

from nsys_rpc import RpcError, Server  # noqa: E402

REAL = Path(os.environ.get("NSYS_AI_SHARED", REPO.parent / "shared")) / "profiles"
MFU_PARAMS = {"modelFlops": 1e15, "peakTflops": 989}


def call(srv: Server, method: str, params: dict):
    try:
        return srv.request(method, params, timeout=3600)
    except RpcError as e:
        return {"error": {"code": e.code, "message": e.message}}


def capture(out: Path, binary: str, profiles: list[Path]) -> int:
    os.environ["NSYS_AI_BIN"] = binary
    srv = Server()
    try:
        names = [a["name"] for a in srv.request("analysis/list", {})["analyses"]]
        ids = []
        for p in profiles:
            r = call(srv, "profile/open", {"path": str(p)})
            ids.append(r.get("profileId"))
        for i, (p, pid) in enumerate(zip(profiles, ids)):
            d = out / p.stem
            d.mkdir(parents=True, exist_ok=True)
            if pid is None:
                continue
            res = {}
            for n in names:
                res[n] = call(srv, "analysis/run", {"profileId": pid, "name": n,
                                                    "params": MFU_PARAMS if n == "mfu" else {}})
            res["report.generate"] = call(srv, "report/generate", {"profileId": pid})
            # kernel/explain of the four largest kernel names (hotspot verdict, context, detectors)
            for j, row in enumerate(res["top_kernels"].get("rows", [])[:4]):
                res[f"kernel.explain.{j}"] = call(srv, "kernel/explain", {"profileId": pid, "name": row["name"]})
            nxt = ids[(i + 1) % len(ids)]
            if nxt is not None:
                res["profile.diff"] = call(srv, "profile/diff", {"base": pid, "compare": nxt})
            for k, v in res.items():
                (d / f"{k}.json").write_text(json.dumps(v, sort_keys=True, indent=0) + "\n")
            print(f"captured {p.stem}: {len(res)} answers", file=sys.stderr)
    finally:
        srv.close()
    return 0


def compare(a: Path, b: Path) -> int:
    diffs = 0
    files = sorted({f.relative_to(a) for f in a.rglob("*.json")} | {f.relative_to(b) for f in b.rglob("*.json")})
    for f in files:
        fa, fb = a / f, b / f
        if not fa.exists() or not fb.exists():
            print(f"only in {'B' if not fa.exists() else 'A'}: {f}")
            diffs += 1
        elif fa.read_bytes() != fb.read_bytes():
            print(f"differs: {f}")
            diffs += 1
    print(f"{len(files)} answers compared, {diffs} differ")
    return 1 if diffs else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("out")
    c.add_argument("profiles", nargs="*", help="options first: capture [--real] [--bin B] OUT PROFILE...")
    c.add_argument("--real", action="store_true", help="add every export in the shared profiles folder")
    c.add_argument("--bin", default=str(REPO / "build" / "nsys-ai"))
    m = sub.add_parser("compare")
    m.add_argument("a")
    m.add_argument("b")
    args = ap.parse_args()
    if args.cmd == "compare":
        return compare(Path(args.a), Path(args.b))
    profiles = [Path(p) for p in args.profiles]
    if args.real:
        if not REAL.is_dir():
            print(f"no real exports at {REAL}", file=sys.stderr)
        else:
            profiles += sorted(REAL.glob("*.sqlite"))
    return capture(Path(args.out), args.bin, profiles)


if __name__ == "__main__":
    sys.exit(main())
