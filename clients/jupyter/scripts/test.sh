#!/usr/bin/env bash
# The Jupyter client's whole test: venv, widget bundle, wheel, clean-venv install,
# pytest against the real server, the example notebook, and the browser test
# (JupyterLab 4, Notebook 7, a VS Code-like html-manager host and VS Code's own ipywidgets 8
# widget manager, in headless Chromium).
#
#   NSYS_AI_BIN=/path/to/nsys-ai clients/jupyter/scripts/test.sh
#
# NSYS_AI_BIN defaults to <repo>/build/nsys-ai. Needs python3 (3.9+), node + npm,
# network access to PyPI and npm the first time (later runs reuse .venv and
# js/node_modules). The browser part needs /usr/bin/chromium (or $CHROMIUM) and
# is skipped with a message when it is absent. Exits non-zero on any failure.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
cd "$HERE"
BIN="${NSYS_AI_BIN:-$REPO/build/nsys-ai}"
BIN="$(cd "$(dirname "$BIN")" 2>/dev/null && pwd)/$(basename "$BIN")"
VENV="$HERE/.venv"
OUT="$HERE/test-output"
PY="${PYTHON:-python3}"
FAILED=()

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAILED: $*"; FAILED+=("$*"); }

if [ ! -x "$BIN" ]; then
  echo "nsys-ai server not found at $BIN: build it (meson setup build && ninja -C build) or set NSYS_AI_BIN"
  exit 1
fi
export NSYS_AI_BIN="$BIN" NSYS_AI_SERVER="$BIN"
export NSYS_AI_CACHE_DIR="${NSYS_AI_CACHE_DIR:-$(mktemp -d -t nsys-ai-jupyter-cache.XXXXXX)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
rm -rf "$OUT" && mkdir -p "$OUT"

# -- 1. development venv (only re-installed when the requirement list changes) -------------
step "venv $VENV"
REQS="jupyterlab>=4,<5 notebook>=7,<8 anywidget>=0.9 pandas nbclient nbformat ipykernel build hatchling pytest jsonschema mypy dask[distributed]"
if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV" || { echo "cannot create venv"; exit 1; }; fi
if [ "$(cat "$VENV/.nsys-ai-reqs" 2>/dev/null)" != "$REQS" ]; then
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install -q $REQS || { echo "pip install failed"; exit 1; }
  echo "$REQS" > "$VENV/.nsys-ai-reqs"
fi
VPY="$VENV/bin/python"

# -- 2. widget bundle (TypeScript -> esbuild) ----------------------------------------------
step "widget bundle (js/)"
( cd js && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } \
  && npm run --silent typecheck && npm run --silent build ) || fail "widget build"

# -- 3. generated protocol types ---------------------------------------------------------
step "protocol types"
"$VPY" ../../protocol/gen.py --check || fail "generated protocol files are stale (run protocol/gen.py)"

# -- 4. static typing ----------------------------------------------------------------------
step "mypy"
"$VPY" -m mypy --config-file mypy.ini src/nsys_ai_native || fail "mypy"

# -- 5. wheel, installed into a clean venv ---------------------------------------------------
step "wheel"
rm -rf dist && "$VPY" -m build --wheel --no-isolation --outdir dist . >"$OUT/build.log" 2>&1 \
  || { cat "$OUT/build.log"; fail "wheel build"; }
WHEEL="$(ls dist/nsys_ai_native-*.whl 2>/dev/null | head -1)"
if [ -n "$WHEEL" ]; then
  "$VPY" - "$WHEEL" <<'EOF' || fail "wheel contents"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = {"nsys_ai_native/__init__.py", "nsys_ai_native/py.typed", "nsys_ai_native/_protocol.py", "nsys_ai_native/static/timeline.js",
        "nsys_ai_native/static/tree.js", "nsys_ai_native/_jupyter_server.py",
        "nsys_ai_native-0.1.0.data/data/etc/jupyter/jupyter_server_config.d/nsys_ai_native.json"}
missing = need - names
print("wheel:", sys.argv[1], len(names), "files", "missing: %s" % sorted(missing) if missing else "(complete)")
sys.exit(1 if missing else 0)
EOF
  step "clean venv install"
  CLEAN="$(mktemp -d -t nsys-ai-clean-venv.XXXXXX)"
  if "$PY" -m venv "$CLEAN" && "$CLEAN/bin/pip" install -q "$WHEEL" >"$OUT/clean-install.log" 2>&1; then
    SMALL="$OUT/small.sqlite"
    "$PY" "$REPO/tools/gen_profile.py" --preset small -o "$SMALL" >/dev/null
    (cd "$CLEAN" && "$CLEAN/bin/python" - "$SMALL" <<'EOF') || fail "clean venv smoke test"
import sys
import nsys_ai_native, nsys_ai_native.widget
p = nsys_ai_native.open(sys.argv[1])
assert p.frames is False, "pandas is not installed here: results must be plain"
info = p.info()
assert info["counts"]["kernels"] > 0
top = p.top_kernels()
assert isinstance(top, dict) and top["rows"], top
w = p.show()
assert w.tracks and nsys_ai_native.widget.STATIC.joinpath("timeline.js").stat().st_size > 1000
print("clean venv OK:", nsys_ai_native.__file__, info["counts"]["kernels"], "kernels")
EOF
  else
    cat "$OUT/clean-install.log"; fail "clean venv install"
  fi
  rm -rf "$CLEAN"
fi

# -- 6. pytest (client, notebook) against the real server ----------------------------------
step "pytest"
"$VENV/bin/pip" install -q --no-deps -e . >/dev/null 2>&1 || fail "editable install"
"$VPY" -m pytest -q -p no:cacheprovider tests "$@" || fail "pytest"

# -- 7. the widget in JupyterLab 4 and Notebook 7, in headless Chromium ---------------------
"$PY" "$REPO/tools/gen_profile.py" --preset small -o "$OUT/browser.sqlite" >/dev/null
# html-manager: the widget outside JupyterLab, rendered the way VS Code notebooks render widgets
# (@jupyter-widgets/html-manager + a real kernel + anywidget's AMD module; tests/browser/vscode_like)
# vscode-ipywidgets8: the widget in VS Code's own widget manager, the @vscode/jupyter-ipywidgets8
# bundle VS Code loads into notebook webviews (only its tarball, sha512-pinned; tests/browser/vscode_ipywidgets8)
tests/browser/vscode_ipywidgets8/fetch.sh "$HERE/build/vscode-ipywidgets8" || fail "fetch @vscode/jupyter-ipywidgets8"
for app in lab notebook html-manager vscode-ipywidgets8; do
  step "browser: $app + headless Chromium"
  "$VPY" tests/browser/run.py "$OUT/browser.sqlite" "$OUT/browser-$app" "$app"
  rc=$?
  if [ $rc -eq 77 ]; then echo "browser test ($app) SKIPPED (see above)"; break
  elif [ $rc -ne 0 ]; then fail "browser test $app (screenshots and logs in $OUT/browser-$app)"
  else echo "browser test ($app) passed (screenshots in $OUT/browser-$app)"; fi
done

echo
if [ ${#FAILED[@]} -gt 0 ]; then
  printf 'jupyter client: %d step(s) failed:\n' "${#FAILED[@]}"; printf '  - %s\n' "${FAILED[@]}"
  exit 1
fi
echo "jupyter client: all steps passed"
