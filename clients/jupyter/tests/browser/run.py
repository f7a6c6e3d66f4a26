#!/usr/bin/env python3
"""The widget front-end test: a real JupyterLab 4 (or Notebook 7) in headless Chromium.

Writes a notebook that opens PROFILE and shows `p.show()` and `p.tree()`, starts
`jupyter lab` (or `jupyter notebook`) on 127.0.0.1 (isolated config/runtime dirs,
random token), and runs lab.mjs (playwright-core + Debian's chromium). Exit status 0
on success, 1 on failure, 77 when chromium or node modules are absent (the caller
reports the skip).

    python tests/browser/run.py PROFILE OUT_DIR [lab|notebook|html-manager|vscode-ipywidgets8]

html-manager: the widget outside JupyterLab, the way VS Code notebooks render widgets
(vscode_like/host.ts: @jupyter-widgets/html-manager + a real kernel + anywidget's AMD module).
vscode-ipywidgets8: the widget in VS Code's own ipywidgets 8 widget manager, the bundle the VS Code
Jupyter renderers load into the notebook webview (vscode_ipywidgets8/host.ts; the bundle is
fetched by vscode_ipywidgets8/fetch.sh into build/, or named by $NSYS_AI_VSCODE_IPYWIDGETS8).
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Iterator, Optional

HERE = Path(__file__).resolve().parent
PKG = HERE.parents[1]
NODE_MODULES = PKG / "js" / "node_modules"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def notebook(profile: Path, epoch: Optional[Path] = None) -> dict:
    """The test notebook; with `epoch` (an epoch-clocked profile) a last cell shows it with its
    output collapsed (metadata outputs_hidden): the widget renders hidden, lab.mjs shows it."""
    cells = [
        "import nsys_ai_native\n"
        f"p = nsys_ai_native.open({str(profile)!r})\n"
        "w = p.show(height=360)\n"
        "w",
        "p.tree()",
        "p.explain(p.top_kernels().iloc[0]['name'])",
    ]
    meta: list[dict] = [{} for _ in cells]
    if epoch is not None:
        cells.append(f"pe = nsys_ai_native.open({str(epoch)!r})\nwe = pe.show(height=300)\nwe")
        meta.append({"jupyter": {"outputs_hidden": True}})
    return {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": m, "execution_count": None, "outputs": [],
                   "source": src} for i, (src, m) in enumerate(zip(cells, meta))],
    }


def epoch_profile(out: Path) -> Path:
    """An epoch-clocked profile (times ~1.78e18, beyond 2^53) for lab.mjs's exact-time checks."""
    path = out / "epoch.sqlite"
    if not path.exists():
        subprocess.run([sys.executable, str(HERE.parents[3] / "tools" / "gen_profile.py"), "--preset", "small",
                        "--epoch-clock", "-o", str(path)], check=True, stdout=subprocess.DEVNULL)
    return path


@contextlib.contextmanager
def jupyter(app: str, nb: dict, out: Path, env_extra: Optional[dict] = None) -> Iterator[tuple[str, dict]]:
    """A `jupyter lab` (or `jupyter notebook`) on 127.0.0.1 serving the notebook `nb` as
    widget_test.ipynb (isolated config/runtime dirs, random token); yields (url of the
    notebook page, environment for node). Stops the server and its kernels on exit."""
    work = Path(tempfile.mkdtemp(prefix="nsys-ai-lab-"))
    (work / "widget_test.ipynb").write_text(json.dumps(nb, indent=1))
    if (env_extra or {}).get("NSYS_AI_NODELAY", os.environ.get("NSYS_AI_NODELAY", "1")) != "0":  # as `pip install` does
        d = work / "config" / "jupyter_server_config.d"
        d.mkdir(parents=True)
        shutil.copy(PKG / "jupyter-config" / "jupyter_server_config.d" / "nsys_ai_native.json", d / "nsys_ai_native.json")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, **(env_extra or {}),
           "JUPYTER_CONFIG_DIR": str(work / "config"), "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
           "JUPYTERLAB_WORKSPACES_DIR": str(work / "workspaces"), "IPYTHONDIR": str(work / "ipython")}
    log = open(out / f"jupyter-{app}.log", "w")
    common = ["--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
              "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}"]
    if app == "notebook":
        cmd = ["notebook", *common, "--JupyterNotebookApp.expose_app_in_browser=True"]
        page = "notebooks/widget_test.ipynb"
    else:
        cmd = ["lab", *common, "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
               "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        page = "lab/tree/widget_test.ipynb"
    lab = subprocess.Popen([sys.executable, "-m", "jupyter", *cmd],
                           stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if lab.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"jupyter {app} did not start; see {out / f'jupyter-{app}.log'}")
                time.sleep(0.5)
        yield f"{base}/{page}?token={token}", env
    finally:
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGTERM)  # the lab server and the kernels it started
            try:
                lab.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(lab.pid, signal.SIGKILL)
                lab.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


HOST_BUNDLE = PKG / "build" / "html-manager-host.js"


def html_manager_prerequisites() -> Optional[str]:
    if not (NODE_MODULES / "@jupyter-widgets" / "html-manager").is_dir():
        return f"{NODE_MODULES}/@jupyter-widgets/html-manager missing (npm ci in clients/jupyter/js)"
    if not HOST_BUNDLE.exists():
        return f"{HOST_BUNDLE} missing (npm run build in clients/jupyter/js)"
    return None


VSCODE_IPYWIDGETS8 = Path(os.environ.get("NSYS_AI_VSCODE_IPYWIDGETS8")
                          or PKG / "build" / "vscode-ipywidgets8" / "package" / "dist" / "ipywidgets.js")


def vscode_ipywidgets8_prerequisites() -> Optional[str]:
    if not VSCODE_IPYWIDGETS8.is_file():
        return (f"{VSCODE_IPYWIDGETS8} missing (tests/browser/vscode_ipywidgets8/fetch.sh "
                f"{PKG / 'build' / 'vscode-ipywidgets8'})")
    for m in ("requirejs", "esbuild", "@jupyterlab/services"):
        if not (NODE_MODULES / m).is_dir():
            return f"{NODE_MODULES}/{m} missing (npm ci in clients/jupyter/js)"
    return None


def kernel_nbextensions() -> Path:
    """The kernel environment's share/jupyter/nbextensions (the kernel runs in this venv)."""
    d = Path(sys.prefix) / "share" / "jupyter" / "nbextensions"
    if (d / "anywidget" / "index.js").exists():
        return d
    import anywidget  # not installed as data files (e.g. an editable install): the same files in the package
    tmp = Path(tempfile.mkdtemp(prefix="nsys-ai-nbext-"))
    shutil.copytree(Path(anywidget.__file__).parent / "nbextension", tmp / "anywidget")
    return tmp


def prerequisites() -> Optional[str]:
    """Why the browser tests cannot run here (None when they can)."""
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        return f"{chromium} not found (apt-get install chromium)"
    if not (NODE_MODULES / "playwright-core").is_dir():
        return f"{NODE_MODULES}/playwright-core missing (npm ci in clients/jupyter/js)"
    return None


def main() -> int:
    # a SIGTERM (e.g. from `timeout`) unwinds like an exception, so the jupyter server and
    # its kernels are stopped by jupyter()'s cleanup
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    profile = Path(sys.argv[1]).resolve()
    out = Path(sys.argv[2]).resolve()
    app = sys.argv[3] if len(sys.argv) > 3 else "lab"
    why = prerequisites() or (html_manager_prerequisites() if app == "html-manager" else
                              vscode_ipywidgets8_prerequisites() if app == "vscode-ipywidgets8" else None)
    if why:
        print(f"SKIP browser test: {why}")
        return 77
    out.mkdir(parents=True, exist_ok=True)
    node_env = {"CHROMIUM": os.environ.get("CHROMIUM", "/usr/bin/chromium"), "NODE_MODULES_DIR": str(NODE_MODULES)}
    try:
        server_app = "lab" if app in ("html-manager", "vscode-ipywidgets8") else app
        epoch = epoch_profile(out) if app == "lab" else None
        with jupyter(server_app, notebook(profile, epoch), out) as (url, env):
            if app == "vscode-ipywidgets8":
                cmd = ["node", str(HERE / "vscode_ipywidgets8" / "run.mjs"), url, str(out), str(VSCODE_IPYWIDGETS8),
                       str(kernel_nbextensions()), str(profile)]
            elif app == "html-manager":
                import anywidget
                amd = Path(sys.prefix) / "share" / "jupyter" / "nbextensions" / "anywidget" / "index.js"
                if not amd.exists():  # the same file, inside the package
                    amd = Path(anywidget.__file__).parent / "nbextension" / "index.js"
                cmd = ["node", str(HERE / "vscode_like" / "run.mjs"), url, str(out), str(HOST_BUNDLE), str(amd),
                       str(profile)]
            else:
                cmd = ["node", str(HERE / "lab.mjs"), url, str(out), *([str(epoch)] if epoch else [])]
            rc = subprocess.run(cmd, env={**env, **node_env}, timeout=420).returncode
        if rc == 0 and os.environ.get("NSYS_AI_NODELAY", "1") != "0":
            log = (out / f"jupyter-{server_app}.log").read_text(errors="replace")
            if "nsys_ai_native: TCP_NODELAY on kernel websockets on" not in log:
                print("FAILED: the nsys_ai_native server extension did not turn Nagle off (see the jupyter log)")
                return 1
    except RuntimeError as e:
        print(e)
        return 1
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
