#!/usr/bin/env python3
"""Precision and recall of kernel -> definition mapping against the labelled
truth table tests/source_eval/truth.json.

Three sets:
  fixtures  the committed trees in tests/fixtures/source_families, each with a
            profile made from the generator's tiny preset (kernel names,
            grid/block, streams and the process name set by SQL);
  captured  the project's own real exports (tests/fixtures/gpu) with the
            sources that made them, labelled per process: source/locate is
            asked for a kernel of that process (kernelId), and its evidence
            must name what tells the processes apart;
  repos     public repositories holding both the code and an nsys export of
            it, read from a git mirror at the commit the table names (default
            /work/.mirror/OWNER+NAME/repo, or --mirror DIR); skipped with a
            message when the mirror is absent. Nothing fetched is committed.

For every labelled kernel, source/locate is asked (through `nsys-ai call`);
the prediction is the top definition candidate when its confidence is above
every other's, else no prediction (ambiguous). precision = right / predicted,
recall = right / labelled (kernels labelled 'ambiguous' excluded: for them the
check is that no candidate reaches full confidence, 0.9). Exit status 1 when
a target is missed: precision >= 95 %, recall >= 90 %, no wrong mapping at
full confidence.

usage: bench/eval_source_map.py [--bin build/nsys-ai] [--mirror DIR] [--set fixtures|captured|repos|all] [-v]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRUTH = REPO / "tests" / "source_eval" / "truth.json"
FAMILIES = REPO / "tests" / "fixtures" / "source_families"
FULL = 0.9
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"


def load_truth() -> dict:
    return json.loads(TRUTH.read_text())


def _string_id(con: sqlite3.Connection, text: str) -> int:
    row = con.execute("SELECT id FROM StringIds WHERE value = ?", (text,)).fetchone()
    if row:
        return row[0]
    nid = con.execute("SELECT coalesce(max(id), 0) + 1 FROM StringIds").fetchone()[0]
    con.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (nid, text))
    return nid


def _set_process(con: sqlite3.Connection, exe: str) -> None:
    for (gpid,) in con.execute(f"SELECT DISTINCT globalPid FROM {KERNEL}").fetchall():
        if con.execute("SELECT count(*) FROM PROCESSES WHERE globalPid = ?", (gpid,)).fetchone()[0]:
            con.execute("UPDATE PROCESSES SET name = ? WHERE globalPid = ?", (exe, gpid))
        else:
            con.execute("INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
                        (gpid, (gpid >> 24) & 0xFFFFFF, exe))


def make_profile(base: Path, out: Path, kernels: list[dict], exe: str) -> Path:
    """A copy of `base` whose kernels are exactly `kernels` (4 launches each
    by default), run by a process named `exe`."""
    shutil.copy(base, out)
    con = sqlite3.connect(out)
    rows = [r[0] for r in con.execute(f"SELECT rowid FROM {KERNEL} ORDER BY start, rowid")]
    stream0 = con.execute(f"SELECT min(streamId) FROM {KERNEL}").fetchone()[0]
    i = 0
    for k in kernels:
        full, short = _string_id(con, k["full"]), _string_id(con, k["short"])
        g, b, ns = k.get("grid", [1, 1, 1]), k.get("block", [1, 1, 1]), k.get("streams", 1)
        for c in range(k.get("count", 4)):
            if i >= len(rows):
                raise ValueError("base profile has too few kernels")
            con.execute(f"UPDATE {KERNEL} SET demangledName=?, shortName=?, gridX=?, gridY=?, gridZ=?, "
                        "blockX=?, blockY=?, blockZ=?, streamId=? WHERE rowid=?",
                        (full, short, *g, *b, stream0 + (c % ns), rows[i]))
            i += 1
    con.executemany(f"DELETE FROM {KERNEL} WHERE rowid = ?", [(r,) for r in rows[i:]])
    _set_process(con, exe)
    con.commit()
    con.close()
    return out


def apply_variant(prof: Path, v: dict) -> None:
    """Rewrites a one-kernel export: name, configuration, streams, process."""
    con = sqlite3.connect(prof)
    if "full" in v:
        full, short = _string_id(con, v["full"]), _string_id(con, v["short"])
        con.execute(f"UPDATE {KERNEL} SET demangledName=?, shortName=?", (full, short))
    if "grid" in v:
        con.execute(f"UPDATE {KERNEL} SET gridX=?, gridY=?, gridZ=?", v["grid"])
    if "block" in v:
        con.execute(f"UPDATE {KERNEL} SET blockX=?, blockY=?, blockZ=?", v["block"])
    if v.get("streams") == 1:
        con.execute(f"UPDATE {KERNEL} SET streamId = (SELECT min(streamId) FROM {KERNEL})")
    if "exe" in v:
        _set_process(con, v["exe"])
    con.commit()
    con.close()


def locate(binary: str, prof: Path, root: Path, name: str) -> dict:
    r = subprocess.run([binary, "call", "source/locate", json.dumps({"name": name, "workspaceRoot": str(root)}),
                        "--profile", str(prof)], capture_output=True, timeout=300,
                       env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    if r.returncode != 0:
        return {"candidates": [], "error": r.stderr.decode(errors="replace").strip()}
    return json.loads(r.stdout)


def judge(res: dict, expect: str) -> tuple[str, str, float]:
    """-> (verdict, predicted, its confidence); verdict in right / wrong /
    none / ambiguous-ok / ambiguous-full."""
    defs = [c for c in res.get("candidates", []) if c["strategy"] == "definition"]
    top = defs[0] if defs else None
    unique = top is not None and (len(defs) == 1 or defs[1]["confidence"] < top["confidence"])
    pred = f"{top['file']}:{top['line']}" if top else ""
    conf = top["confidence"] if top else 0.0
    if expect == "ambiguous":
        full = any(c["confidence"] >= FULL for c in defs)
        return ("ambiguous-full" if full else "ambiguous-ok"), pred, conf
    if not unique:
        return "none", pred, conf
    return ("right" if pred == expect else "wrong"), pred, conf


def launches_listed(res: dict, want: list[str]) -> list[str]:
    have = {f"{c['file']}:{c['line']}" for c in res.get("candidates", []) if c["strategy"] == "launch"}
    return [w for w in want if w not in have]


def generated_base(tmp: Path) -> Path:
    out = tmp / "tiny.sqlite"
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_profile.py"), "-o", str(out), "--preset", "tiny"],
                   check=True, capture_output=True)
    return out


def fixture_cases(tmp: Path, base: Path):
    for case in load_truth()["fixtures"]:
        prof = make_profile(base, tmp / f"{case['id']}.sqlite", case["kernels"], case["exe"])
        yield case, prof, FAMILIES / case["workspace"]


def _call(binary: str, method: str, params: dict, prof: Path) -> dict | None:
    r = subprocess.run([binary, "call", method, json.dumps(params), "--profile", str(prof)], capture_output=True,
                       timeout=300, env={**os.environ, "NSYS_AI_NO_PROGRESS": "1"})
    return json.loads(r.stdout) if r.returncode == 0 else None


def kernel_of_process(binary: str, prof: Path, pid: int, name: str) -> int | None:
    """The first kernelId named `name` that process `pid` ran."""
    kid = 0
    while True:
        d = _call(binary, "kernel/details", {"kernelId": kid}, prof)
        if d is None:
            return None
        if d.get("pid") == pid and d.get("name") == name:
            return kid
        kid += 1


def captured_cases(tmp: Path):
    """(case, profile, workspace) of the 'captured' set: each case's labels are
    per process ('pid'); evaluate() asks for one kernel of each."""
    for case in load_truth().get("captured", []):
        prof = tmp / f"{case['id']}.sqlite"
        prof.write_bytes(gzip.decompress((REPO / case["profile"]).read_bytes()))
        yield case, prof, REPO / case["workspace"]


def extract(mirror: Path, repo: str, commit: str, dest: Path) -> Path | None:
    git = mirror / repo.replace("/", "+") / "repo"
    if not git.exists():
        return None
    out = dest / f"{repo.replace('/', '+')}@{commit[:12]}"
    if out.exists():
        return out
    out.mkdir(parents=True)
    names = subprocess.run(["git", "-C", str(git), "ls-tree", "--name-only", commit], capture_output=True,
                           text=True, check=True).stdout.split()
    for n in names:  # one entry at a time: a mirror may lack a few large blobs
        a = subprocess.run(["git", "-C", str(git), "archive", commit, n], capture_output=True)
        if a.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(out)], input=a.stdout, check=False)
    return out


def repo_cases(tmp: Path, mirror: Path, missing: list[str]):
    base = None
    for case in load_truth()["repos"]:
        root = extract(mirror, case["repo"], case["commit"], tmp / "repos")
        if root is None or ("profile" in case and not (root / case["profile"]).exists()):
            missing.append(case["repo"])
            continue
        prof = tmp / f"{case['id']}.sqlite"
        if "profile" not in case:  # the repository has no export: one made like the fixtures'
            base = base or generated_base(tmp)
            yield case, make_profile(base, prof, case["kernels"], case["exe"]), root
            continue
        shutil.copy(root / case["profile"], prof)
        if "variant" in case:
            apply_variant(prof, case["variant"])
        yield case, prof, root


def evaluate(binary: str, cases, verbose: bool) -> dict:
    t = {"labelled": 0, "predicted": 0, "right": 0, "wrong_full": 0, "ambiguous": 0, "ambiguous_full": 0,
         "launch_missing": 0, "misses": []}
    for case, prof, root in cases:
        labels = case.get("labels") or [{"name": n, "expect": e, "launches": case.get("launches", {}).get(n, [])}
                                        for n, e in case["expect"].items()]
        for lab in labels:
            name, expect = lab["name"], lab["expect"]
            if "pid" in lab:
                kid = kernel_of_process(binary, prof, lab["pid"], name)
                res = (_call(binary, "source/locate", {"kernelId": kid, "workspaceRoot": str(root)}, prof)
                       if kid is not None else None) or {"candidates": [], "error": f"no {name} in pid {lab['pid']}"}
                name = f"{name} (pid {lab['pid']})"
            else:
                res = locate(binary, prof, root, name)
            verdict, pred, conf = judge(res, expect)
            if verdict == "right" and lab.get("evidence"):
                top = next(c for c in res["candidates"] if c["strategy"] == "definition")
                lost = [w for w in lab["evidence"] if w not in top["evidence"]]
                if lost:
                    verdict = "no-evidence"
                    t["misses"].append(f"{case['id']}: {name}: evidence does not name {lost}: {top['evidence']}")
            if expect == "ambiguous":
                t["ambiguous"] += 1
                t["ambiguous_full"] += verdict == "ambiguous-full"
            else:
                t["labelled"] += 1
                t["predicted"] += verdict in ("right", "wrong", "no-evidence")
                t["right"] += verdict == "right"
                t["wrong_full"] += verdict == "wrong" and conf >= FULL
            if verdict not in ("right", "ambiguous-ok", "no-evidence"):
                t["misses"].append(f"{case['id']}: {name} -> {pred or '-'} ({conf}) expected {expect} [{verdict}]"
                                   + (f" {res['error']}" if res.get("error") else ""))
            for w in launches_listed(res, lab.get("launches", [])):
                t["launch_missing"] += 1
                t["misses"].append(f"{case['id']}: launch line {w} of {name} not listed")
            if verbose:
                print(f"  {case['id']:32} {name[:40]:40} {verdict:14} {pred} ({conf})")
    return t


def report(label: str, t: dict) -> bool:
    p = 100.0 * t["right"] / t["predicted"] if t["predicted"] else 100.0
    r = 100.0 * t["right"] / t["labelled"] if t["labelled"] else 100.0
    print(f"{label:9} labelled {t['labelled']:3}  predicted {t['predicted']:3}  right {t['right']:3}  "
          f"precision {p:5.1f}%  recall {r:5.1f}%  wrong at full confidence {t['wrong_full']}  "
          f"ambiguous {t['ambiguous']} (at full confidence: {t['ambiguous_full']})  "
          f"launch lines missing {t['launch_missing']}")
    for m in t["misses"]:
        print(f"    miss: {m}")
    return p >= 95.0 and r >= 90.0 and t["wrong_full"] == 0 and t["ambiguous_full"] == 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("NSYS_AI_BIN", str(REPO / "build" / "nsys-ai")))
    ap.add_argument("--mirror", default=os.environ.get("NSYS_AI_EVAL_MIRROR", "/work/.mirror"))
    ap.add_argument("--set", choices=["fixtures", "captured", "repos", "all"], default="all")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if a.set in ("fixtures", "all"):
            ok &= report("fixtures", evaluate(a.bin, fixture_cases(tmp, generated_base(tmp)), a.verbose))
        if a.set in ("captured", "all"):
            ok &= report("captured", evaluate(a.bin, captured_cases(tmp), a.verbose))
        if a.set in ("repos", "all"):
            missing: list[str] = []
            t = evaluate(a.bin, repo_cases(tmp, Path(a.mirror), missing), a.verbose)
            if missing:
                print(f"repos: skipped {len(missing)} case(s), mirror absent under {a.mirror}: "
                      f"{', '.join(sorted(set(missing)))}")
            if t["labelled"] or t["ambiguous"]:
                ok &= report("repos", t)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
