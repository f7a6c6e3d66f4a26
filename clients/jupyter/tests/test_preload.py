"""The widget module's background import (nsys_ai_native/_preload.py): in a notebook kernel,
importing the package starts importing the widget module on a thread, so the first `show()` does
not wait for anywidget/ipywidgets; outside a kernel, or with NSYS_AI_WIDGET_PRELOAD=0, nothing is
imported ahead. Each case runs in a fresh interpreter (the module cache decides the outcome)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

# a process that looks like an IPython kernel to _preload.in_kernel(): ipykernel imported and
# get_ipython() returning a shell with a kernel
PROBE = r"""
import json, sys, threading, time
fake = sys.argv[1] == "kernel"
if fake:
    import ipykernel, IPython
    class Shell:
        kernel = object()
    IPython.get_ipython = lambda: Shell()
t0 = time.perf_counter()
import nsys_ai_native
threads = [t for t in threading.enumerate() if t.name == "nsys-ai-widget-preload"]
for t in threads:
    t.join(60)
print(json.dumps({"thread": bool(threads), "widget": "nsys_ai_native.widget" in sys.modules}))
"""


def probe(mode: str, **env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])),
                              **env})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernel_imports_the_widget_module_in_the_background() -> None:
    assert probe("kernel") == {"thread": True, "widget": True}


def test_not_outside_a_kernel_nor_when_turned_off() -> None:
    assert probe("plain") == {"thread": False, "widget": False}
    assert probe("kernel", NSYS_AI_WIDGET_PRELOAD="0") == {"thread": False, "widget": False}
