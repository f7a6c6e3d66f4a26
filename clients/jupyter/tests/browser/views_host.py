"""The Python side of views_check.mjs: makes the test profiles, the two views widgets
(nsys_ai_native.views) and answers their messages through the widget's own handler.
Protocol on stdin/stdout, one JSON object a line: first {"ready": {name: {init, height}},
"probe": {...}}; then each {"w": name, "content": msg} read gets {"w": name, "reply": msg}."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))
import nsys_ai_native  # noqa: E402
from nsys_ai_native.views import diff_view, rank_set_view  # noqa: E402

GEN = HERE.parents[3] / "tools" / "gen_profile.py"
out = Path(sys.argv[1])


def gen(name: str, *args: str) -> Path:
    p = out / f"{name}.sqlite"
    subprocess.run([sys.executable, str(GEN), "--preset", "tiny", "-o", str(p), *args], check=True, capture_output=True)
    return p


base = gen("base", "--kernels", "400", "--seed", "1")
new = gen("new", "--kernels", "400", "--seed", "1", "--plant-slow-kernels", "gemm", "--plant-factor", "1.5")
# a planted straggler: rank 1 (GPU 1) starts every NCCL kernel half its duration late (same end)
ranks = gen("ranks", "--gpus", "2", "--kernels", "600", "--seed", "3")
db = sqlite3.connect(ranks)
NCCL = "shortName IN (SELECT id FROM StringIds WHERE value LIKE '%nccl%')"
db.execute(f'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + ("end" - start) / 2 WHERE deviceId = 1 AND {NCCL}')
db.commit()
# independently of the views: rank 0's third collective and rank 1's instance of it (same name, ending within it)
mine = db.execute(f'SELECT start, "end", streamId, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0 AND {NCCL} '
                  'ORDER BY start LIMIT 1 OFFSET 2').fetchone()
theirs = db.execute(f'SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 1 AND shortName = ? '
                    'ORDER BY abs("end" - ?) LIMIT 1', (mine[3], mine[1])).fetchone()
db.close()

widgets = {"diff": diff_view(nsys_ai_native.open(base), nsys_ai_native.open(new)), "ranks": rank_set_view([ranks])}
sent: list[dict] = []
for w in widgets.values():
    w.send = lambda content, buffers=None: sent.append(content)  # no kernel: the reply is written below
tracks = json.loads(widgets["ranks"].init)["profiles"][0]["tracks"]["tracks"]
track = next(t["id"] for t in tracks if t["kind"] == "gpu" and t.get("device") == 0 and t.get("stream") == mine[2])
print(json.dumps({"ready": {k: {"init": w.init, "height": w.height} for k, w in widgets.items()},
                  "probe": {"mine": {"start": mine[0], "end": mine[1], "track": track}, "theirs": {"start": theirs[0], "end": theirs[1]}}}),
      flush=True)
for line in sys.stdin:
    m = json.loads(line)
    w = widgets[m["w"]]
    w._on_msg(w, m["content"], [])
    while sent:
        print(json.dumps({"w": m["w"], "reply": sent.pop(0)}), flush=True)
