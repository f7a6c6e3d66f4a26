"""Imports the widget module (anywidget, ipywidgets: 0.3-0.6 s on a busy 2-core machine) on a
background thread as soon as the package is imported in a notebook kernel, so that the first
`p.show()` does not wait for it: it would otherwise be the largest part of the first frame of a
profile whose index is cached (bench_widget_ux.py). The main thread, if it gets to `show()` first,
waits on the import lock for the same import (never a second one). NSYS_AI_WIDGET_PRELOAD=0 turns
it off (the bench's comparison)."""
from __future__ import annotations

import importlib
import os
import sys
import threading


def in_kernel() -> bool:
    """Whether this process is an IPython kernel (checked without importing IPython)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def _import_widget() -> None:
    try:
        importlib.import_module("nsys_ai_native.widget")
    except Exception:  # e.g. anywidget missing: `show()` raises it where the user sees it
        pass


def start() -> bool:
    """Starts the background import when in a kernel and not disabled; whether it started."""
    if os.environ.get("NSYS_AI_WIDGET_PRELOAD", "1") == "0" or "nsys_ai_native.widget" in sys.modules or not in_kernel():
        return False
    threading.Thread(target=_import_widget, name="nsys-ai-widget-preload", daemon=True).start()
    return True
