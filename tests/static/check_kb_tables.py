#!/usr/bin/env python3
"""The knowledge base's build step (server/src/explain/gen_kb_tables.py):
data/kernels/*.json generates C tables, and a malformed file fails the build
with a message naming the file and the pattern (the binary parses no JSON,
so this is where a broken KB must be caught).

    python3 tests/static/check_kb_tables.py [REPO]
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

OK = {"id": "x.a", "prefix": "a", "origin": "o", "category": "c", "bound": "memory", "description": "d",
      "examples": ["a1"], "suggestions": ["s", {"text": "t", "frameworks": ["pytorch"], "minCc": 80}]}

BAD = [  # (document, text the error must contain)
    ("{", "not valid JSON"),
    ([], "'patterns' array"),
    ({"patterns": [dict(OK, contains="b")]}, "exactly one"),
    ({"patterns": [{k: v for k, v in OK.items() if k != "bound"}]}, "missing 'bound'"),
    ({"patterns": [OK, OK]}, "duplicate id"),
    ({"patterns": [dict(OK, examples=[])]}, "example"),
    ({"patterns": [dict(OK, suggestions=[{"frameworks": ["pytorch"]}])]}, "suggestions[0]"),
    ({"patterns": [dict(OK, suggestions=[{"text": "t", "minCc": 8}])]}, "minCc"),
    ({"patterns": [dict(OK, field="middle")]}, "'field'"),
    ({"patterns": [dict(OK, priority="high")]}, "'priority'"),
]


def run(gen: Path, files: list[Path], out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(gen), str(out), *map(str, files)], capture_output=True, text=True)


def main() -> int:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    gen = repo / "server" / "src" / "explain" / "gen_kb_tables.py"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kb_tables.c"
        real = sorted((repo / "data" / "kernels").glob("*.json"))
        r = run(gen, real, out)
        if r.returncode != 0 or "const nsys_kb_pattern nsys_kb_table[]" not in out.read_text():
            failures.append(f"the real knowledge base does not generate: {r.stderr.strip()}")
        good = Path(tmp) / "good.json"
        good.write_text(json.dumps({"family": "t", "patterns": [dict({k: v for k, v in OK.items() if k != "prefix"}, regex='a"b\\?c??(\u00e9')]}))
        r = run(gen, [good], out)
        text = out.read_text() if r.returncode == 0 else ""
        # quotes, backslashes, trigraph starters and UTF-8 are escaped in the C literal
        if r.returncode != 0 or '.match = "a\\"b\\\\\\?c\\?\\?(\\303\\251"' not in text:
            failures.append(f"string escaping: {r.stderr.strip() or text[-600:]}")
        for i, (doc, want) in enumerate(BAD):
            bad = Path(tmp) / f"bad{i}.json"
            bad.write_text(doc if isinstance(doc, str) else json.dumps(doc))
            r = run(gen, [bad], out)
            if r.returncode == 0 or want not in r.stderr or bad.name not in r.stderr:
                failures.append(f"bad{i}.json ({want}): rc {r.returncode}, {r.stderr.strip()!r}")
    for f in failures:
        print(f)
    if not failures:
        print(f"knowledge-base generator: real KB generates, {len(BAD)} malformed files rejected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
