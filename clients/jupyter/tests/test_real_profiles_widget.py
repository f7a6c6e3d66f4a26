"""The timeline widget on the real exports (../shared/profiles) in headless Chromium:
tests/browser/real_profiles_check.mjs (see there for what is checked on each). CI runs a
fixed varied subset (CI_SET, the VS Code webview's realProfiles.test.ts has the same);
NSYS_AI_REAL_PROFILES=all runs every export. Skips where the profiles are absent."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROFILES

CI_SET = [
    "nsys2021_a100_cuda_callchains", "nsys2022_nvtx_only_negative_ts", "nsys2022_windows_10streams",
    "nsys2025_h200_nvtx13k", "nsys2025_no_cuda_non_utf8", "nsys2026_2gpu_nccl_before",
    "nsys_failed_capture_no_meta", "nsys2025_blackwell_3rows",
]


def test_real_profiles_drawn_in_chromium(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    every = sorted(PROFILES.glob("*.sqlite")) if PROFILES.is_dir() else []
    chosen = every if os.environ.get("NSYS_AI_REAL_PROFILES") == "all" else [p for p in every if p.stem in CI_SET]
    if not chosen:
        pytest.skip(f"no real profiles at {PROFILES} (the exports listed in its PROVENANCE.tsv)")
    out = Path(os.environ.get("NSYS_AI_REAL_OUT", tmp_path))
    here = Path(__file__).resolve().parent
    r = subprocess.run([node, str(here / "browser" / "real_profiles_check.mjs"), sys.executable, str(out), *map(str, chosen)],
                       capture_output=True, text=True, timeout=400, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if r.returncode == 77:
        pytest.skip(r.stdout.strip() or "no chromium or playwright-core")
    assert r.returncode == 0, r.stdout + r.stderr
