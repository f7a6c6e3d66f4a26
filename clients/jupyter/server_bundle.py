"""The nsys-ai server inside the wheel (used by hatch_build.py).

A platform wheel carries the `nsys-ai` binary twice: as a script (the venv's
bin/nsys-ai, the CLI) and as nsys_ai_native/bin/nsys-ai, which
`nsys_ai_native.find_server` uses after the explicit settings (another
package's `nsys-ai` console script may replace the first). The binary comes from
- $NSYS_AI_BUNDLE_SERVER: a built binary (scripts/package.sh hands it the
  self-contained one of build-dist/, and $NSYS_AI_WHEEL_TAG its manylinux tag);
- the sdist's native/ tree (the repository's meson build and the vendored
  sources of subprojects/): built here with meson and ninja, sqlite3, cJSON and
  libuv compiled in, tagged for this platform.
Neither: a pure-Python wheel that finds the server through $NSYS_AI_SERVER or PATH.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Optional

ENV_BINARY = "NSYS_AI_BUNDLE_SERVER"
ENV_TAG = "NSYS_AI_WHEEL_TAG"
VENDORED = ("sqlite3", "libcjson", "libuv")


def native_tree(root: Path) -> Optional[Path]:
    """The sdist's copy of the meson build, or None (a git checkout)."""
    native = root / "native"
    return native if (native / "meson.build").is_file() else None


def build_requirements(root: Path) -> list[str]:
    return ["meson>=1.1", "ninja>=1.10"] if native_tree(root) and not os.environ.get(ENV_BINARY) else []


def _tool(name: str) -> list[str]:
    """meson/ninja from the build environment (pip's isolated env puts them beside python)."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return [str(here)]
    found = shutil.which(name)
    if found:
        return [found]
    raise RuntimeError(f"building nsys-ai from source needs {name} (pip install {name})")


def _build_native(native: Path) -> Path:
    build = native / "build-wheel"
    if not (build / "build.ninja").exists():
        for d in VENDORED:
            if not (native / "subprojects" / d / "meson.build").is_file():
                raise RuntimeError(f"the sdist lacks subprojects/{d}: build it with scripts/package.sh")
        subprocess.run(_tool("meson") + ["setup", str(build), str(native), "--buildtype=release",
                                         "-Db_ndebug=false", "-Dtests=false", "--wrap-mode=nodownload",
                                         "--force-fallback-for=" + ",".join(VENDORED)], check=True)
    subprocess.run(_tool("ninja") + ["-C", str(build), "nsys-ai"], check=True)
    return build / "nsys-ai"


def _licenses(root: Path) -> dict[str, str]:
    """The licenses of the code built into the server (MIT asks to ship them; SQLite is
    public domain): the vendored trees of a checkout or of the sdist."""
    out = {}
    for base in (root.parent.parent / "subprojects", root / "native" / "subprojects"):
        for name in ("libcjson", "libuv"):
            lic = base / name / "LICENSE"
            if lic.is_file():
                out[str(lic)] = f"nsys_ai_native/bin/LICENSE.{name}"
    return out


def bundle(root: Path, build_data: dict[str, Any]) -> None:
    """Adds the server to a wheel's build_data when there is one to add."""
    given = os.environ.get(ENV_BINARY)
    native = native_tree(root)
    if given:
        binary = Path(given).resolve()
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise RuntimeError(f"${ENV_BINARY}={given} is not an executable file")
        tag = os.environ.get(ENV_TAG) or "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    elif native:
        binary = _build_native(native)
        tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    else:
        return
    build_data["pure_python"] = False
    build_data["tag"] = tag
    build_data["shared_scripts"][str(binary)] = "nsys-ai"
    build_data["force_include"][str(binary)] = "nsys_ai_native/bin/nsys-ai"
    build_data["force_include"].update(_licenses(root))
