"""Hatch build hook: bundles the widget TypeScript (js/) into src/nsys_ai_native/static/,
and for a wheel the nsys-ai server when there is one to bundle (server_bundle.py).

Runs `npm ci` (when js/node_modules is absent) and `npm run build` unless the
bundles are newer than every source; fails the build when npm is missing and
no bundle exists, so a wheel never ships without its front end.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _server_bundle() -> Any:
    """server_bundle.py beside this file (hatch loads this hook by path, not as a package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_nsys_ai_server_bundle", Path(__file__).with_name("server_bundle.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BUNDLES = ("timeline.js", "tree.js", "views.js")


class WidgetBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        return _server_bundle().build_requirements(Path(self.root)) if self.target_name == "wheel" else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel":
            _server_bundle().bundle(Path(self.root), build_data)
        self._widget()

    def _widget(self) -> None:
        root = Path(self.root)
        js = root / "js"
        static = root / "src" / "nsys_ai_native" / "static"
        outs = [static / b for b in BUNDLES]
        srcs = [p for p in (js / "src").glob("*.ts")] + [js / "build.mjs", js / "package.json"] if js.is_dir() else []
        # views.js bundles the VS Code views (js/src/views.ts): the repo's, or the sdist's copy
        vscode = next((d for d in (root.parent / "vscode" / "src", js / "vscode-src") if d.is_dir()), None)
        srcs += [p for p in vscode.rglob("*") if p.suffix in (".ts", ".css")] if js.is_dir() and vscode else []
        fresh = all(o.exists() for o in outs) and (
            not srcs or min(o.stat().st_mtime for o in outs) >= max(s.stat().st_mtime for s in srcs if s.exists()))
        if fresh or os.environ.get("NSYS_AI_SKIP_JS") == "1":
            if not all(o.exists() for o in outs):
                raise RuntimeError("widget bundles missing and NSYS_AI_SKIP_JS=1")
            return
        npm = shutil.which("npm")
        if not npm or not js.is_dir():
            raise RuntimeError("building the widget needs npm (Node.js 18+) and clients/jupyter/js; "
                               "or build src/nsys_ai_native/static/*.js first")
        if not (js / "node_modules").is_dir():
            subprocess.run([npm, "ci" if (js / "package-lock.json").exists() else "install"], cwd=js, check=True)
        # the widget bundles only (not the html-manager test host)
        subprocess.run([npm, "run", "build"], cwd=js, check=True, env={**os.environ, "NSYS_AI_HOST": "0"})
        for o in outs:
            if not o.exists():
                raise RuntimeError(f"npm run build did not produce {o}")
