#!/usr/bin/env python3
"""The layering rule of docs/ARCHITECTURE.md: below methods/ (common/, profile/,
index/, analysis/, explain/, source/) no file includes cJSON or anything of
rpc/. The core returns C structs; methods/ turns them into JSON.

ALLOWED lists the files that still break the rule today (the core's move off
cJSON is planned work). The check fails on any other violation, and on an
ALLOWED entry that no longer violates it, so the list only shrinks: remove a
file from it in the commit that fixes it.

    python3 tests/static/check_layering.py [REPO]
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

BELOW_METHODS = ("common", "profile", "index", "analysis", "explain", "source", "capture")
FORBIDDEN = re.compile(r'^\s*#\s*include\s*[<"]((?:cjson/)?cJSON\.h|rpc/[^>"]+)[>"]', re.M)

# path under server/src -> why it may still include cJSON or rpc/ (what to move out)
ALLOWED: dict[str, str] = {}


# analysis/ may not reach cJSON or rpc/ through the headers it includes either
# (analysis results are typed: analysis/result.h). Files that still do, and
# why; the list only shrinks, like ALLOWED.
ANALYSIS_REACH_ALLOWED: dict[str, str] = {}
LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def reaches(src: Path, path: Path, seen: set[Path] | None = None) -> list[str]:
    """The forbidden includes of path and of the project headers it includes, transitively."""
    seen = set() if seen is None else seen
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    text = path.read_text(errors="replace")
    found = list(FORBIDDEN.findall(text))
    for inc in LOCAL_INCLUDE.findall(text):
        for cand in (src / inc, path.parent / inc):
            if cand.is_file():
                found += reaches(src, cand.resolve(), seen)
                break
    return found


def analysis_reach(src: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in sorted((src / "analysis").rglob("*.[ch]")):
        found = reaches(src, p.resolve())
        if found:
            out[p.relative_to(src).as_posix()] = sorted(set(found))
    return out


def violations(src: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for top in BELOW_METHODS:
        for p in sorted((src / top).rglob("*.[ch]")):
            found = FORBIDDEN.findall(p.read_text(errors="replace"))
            if found:
                out[p.relative_to(src).as_posix()] = found
    return out


def check(found: dict[str, list[str]], allowed: dict[str, str], breaks: str, list_name: str) -> int:
    """Prints the files that break a rule and are not allowed, and the allowed ones that no longer do."""
    bad = 0
    for f, inc in found.items():
        if f not in allowed:
            print(f"server/src/{f}: {breaks.format(', '.join(inc))}")
            bad += 1
    for f in sorted(f for f in allowed if f not in found):
        print(f"server/src/{f}: no longer breaks the layering: remove it from {list_name} in {Path(__file__).name}")
        bad += 1
    return bad


def main() -> int:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    found = violations(repo / "server" / "src")
    reach = analysis_reach(repo / "server" / "src")
    bad = check(found, ALLOWED, "includes {} below methods/ (see docs/ARCHITECTURE.md)", "ALLOWED")
    bad += check(reach, ANALYSIS_REACH_ALLOWED,
                 "reaches {} through its includes (analysis results are typed: analysis/result.h)",
                 "ANALYSIS_REACH_ALLOWED")
    if bad:
        return 1
    print(f"layering holds: {len(found)} allowed exceptions, no new ones; "
          f"{len(reach)} analysis files still reach cJSON through their includes (allowed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
