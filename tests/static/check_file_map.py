#!/usr/bin/env python3
"""docs/ARCHITECTURE.md names every file of the server and of protocol/: each
file under server/src/ and protocol/ appears there by its name (a header is
named by its .c file; protocol/schemas/ and meson.build files by their folder).
A file added without a word in the map fails this check.

    python3 tests/static/check_file_map.py [REPO]
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def unnamed(repo: Path) -> list[str]:
    doc = (repo / "docs" / "ARCHITECTURE.md").read_text()
    files = subprocess.run(["git", "-C", str(repo), "ls-files", "server/src", "protocol"], check=True,
                           capture_output=True, text=True).stdout.split()
    if not files:  # not a git checkout (e.g. an exported tree): walk the folders
        files = [p.relative_to(repo).as_posix() for top in ("server/src", "protocol")
                 for p in (repo / top).rglob("*") if p.is_file()]
    out = []
    for f in sorted(files):
        name = f.rsplit("/", 1)[-1]
        if f.startswith("protocol/schemas/") or name == "meson.build":
            continue
        if name in doc or name.endswith(".h") and name[:-2] + ".c" in doc:
            continue
        out.append(f)
    return out


def main() -> int:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    missing = unnamed(repo)
    for f in missing:
        print(f"{f}: not named in docs/ARCHITECTURE.md (say what it is in the code map)")
    if missing:
        return 1
    print("docs/ARCHITECTURE.md names every file of server/src and protocol")
    return 0


if __name__ == "__main__":
    sys.exit(main())
