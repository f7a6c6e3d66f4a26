#!/usr/bin/env bash
# The package suite (scripts/test-all.sh: SUITES=package): what a user installs.
#  1. scripts/package.sh builds the binary, wheel, sdist and platform VSIX into dist/;
#  2. scripts/check-binary.sh: dist/nsys-ai needs only glibc, no symbol newer than
#     2.28; and it rejects the developer build (which needs libsqlite3 etc.), so
#     the check can fail;
#  3. the wheel in a clean venv, run inside a private mount namespace where the
#     build trees and the libraries of sqlite3, cJSON, libuv and libcurl are
#     hidden: `nsys-ai report` on the generated example, an LLM request that
#     says libcurl is missing, and the quickstart notebook through the bundled
#     server (run_notebook.py);
#  4. a wheel built from the sdist (pip: meson + the vendored sources) runs;
#  5. the platform VSIX in code-server with no nsys-ai on PATH and no
#     serverPath: the end-to-end test through its bundled server.
# Needs root for unshare -m (skipped with a message otherwise). Prints
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d /tmp/nsys-ai-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0; failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }
exec 3>&1  # timings go to the suite's output even when a step's output goes to a log
timed() { local t0=$SECONDS; "$@"; local rc=$?; echo "($((SECONDS - t0)) s: $(basename "$1")${2:+ $2})" >&3; return $rc; }

if [ "$(id -u)" -ne 0 ]; then echo "the package suite needs root (unshare -m, apt)"; exit 77; fi

# -- 1. build everything --------------------------------------------------------------
timed scripts/package.sh > "$work/package.log" 2>&1 \
  && ok "scripts/package.sh built dist/" || { tail -40 "$work/package.log"; bad "scripts/package.sh"; echo "$passed passed, $failed failed"; exit 1; }
version=$(dist/nsys-ai --version | awk '{print $2}')
wheel=$root/dist/nsys_ai_native-$version-py3-none-manylinux_2_28_x86_64.whl
sdist=$root/dist/nsys_ai_native-$version.tar.gz
vsix=$root/dist/nsys-ai-linux-x64-$version.vsix
for f in "$wheel" "$sdist" "$vsix"; do [ -f "$f" ] && ok "built $(basename "$f")" || bad "missing $f"; done

# -- 2. glibc only, nothing newer than 2.28 --------------------------------------------
scripts/check-binary.sh dist/nsys-ai 2.28 && ok "dist/nsys-ai: glibc only, <= 2.28" || bad "check-binary dist/nsys-ai"
if [ -x build/nsys-ai ]; then
  scripts/check-binary.sh build/nsys-ai 2.28 >/dev/null && bad "check-binary accepted the developer build" \
    || ok "check-binary rejects the developer build (needs libsqlite3, libcjson, libuv)"
fi

# -- 3. the wheel, in a clean venv, with the build and the -dev libraries hidden ---------
venv=$work/venv
python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$wheel[pandas]" nbclient nbformat ipykernel \
  > "$work/pip.log" 2>&1 && ok "wheel installed in a clean venv" || { tail -20 "$work/pip.log"; bad "pip install the wheel"; }
python3 tools/gen_profile.py --preset example -o "$work/example.sqlite" >/dev/null
cat > "$work/inside.sh" <<'INSIDE'
# Runs in the private mount namespace: hide, then use only what the wheel installed.
set -u
root=$1; work=$2; venv=$3
mount --make-rprivate /
hidden=0
for f in /usr/lib/x86_64-linux-gnu/libsqlite3.so* /usr/lib/x86_64-linux-gnu/libcjson*.so* \
         /usr/lib/x86_64-linux-gnu/libuv.so* /usr/lib/x86_64-linux-gnu/libcurl*.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] && mount --bind /dev/null "$f" && hidden=$((hidden + 1))
done
for d in "$root"/build "$root"/build-*; do [ -d "$d" ] && mount -t tmpfs none "$d"; done
mount -t tmpfs none "$root/dist"
echo "inside: $hidden libraries and the build trees hidden"
export PATH="$venv/bin:/usr/bin:/bin"
unset NSYS_AI_SERVER NSYS_AI_BIN
export NSYS_AI_CACHE_DIR=$work/cache NSYS_AI_NO_PROGRESS=1
fails=0
[ "$(command -v nsys-ai)" = "$venv/bin/nsys-ai" ] || { echo "FAILED: nsys-ai on PATH is $(command -v nsys-ai)"; fails=$((fails + 1)); }
python3 -c 'import ctypes.util, sys; sys.exit(0 if ctypes.CDLL("libsqlite3.so.0") else 1)' 2>/dev/null \
  && { echo "FAILED: libsqlite3.so.0 still loads"; fails=$((fails + 1)); }
if nsys-ai report "$work/example.sqlite" > "$work/report.txt" 2>&1 && grep -q '^Findings:' "$work/report.txt"; then
  echo "ok: nsys-ai report ($(grep '^Findings:' "$work/report.txt"))"
else
  echo "FAILED: nsys-ai report"; head -20 "$work/report.txt"; fails=$((fails + 1))
fi
# an LLM endpoint configured, libcurl hidden: a clear error (exit 2), not a crash
NSYS_AI_LLM_PROVIDER=openai NSYS_AI_LLM_BASE_URL=http://127.0.0.1:1/v1 NSYS_AI_LLM_MODEL=m \
  NSYS_AI_CONFIG=/nonexistent nsys-ai call kernel/explain '{"name":"gemm","llm":true}' > "$work/llm.txt" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'libcurl' "$work/llm.txt"; then echo "ok: without libcurl an LLM request says: $(grep -o 'needs libcurl[^(]*' "$work/llm.txt" | head -1)"
else echo "FAILED: LLM request without libcurl (exit $rc)"; cat "$work/llm.txt"; fails=$((fails + 1)); fi
inpkg=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/nsys_ai_native/bin/nsys-ai
if (cd "$root/clients/jupyter/examples" && "$venv/bin/python" "$root/tests/package/run_notebook.py" \
      quickstart.ipynb "$work/example.sqlite" "$inpkg"); then echo "ok: the quickstart notebook"
else echo "FAILED: the quickstart notebook"; fails=$((fails + 1)); fi
exit $fails
INSIDE
unshare -m bash "$work/inside.sh" "$root" "$work" "$venv" 2>&1 | tee "$work/inside.log"
n_ok=$(grep -c '^ok: ' "$work/inside.log"); n_bad=$(grep -c '^FAILED: ' "$work/inside.log")
passed=$((passed + n_ok)); failed=$((failed + n_bad))
[ "$n_ok" -ge 3 ] || { bad "the namespace checks did not all run"; }

# -- 4. the sdist builds from source ------------------------------------------------------
if timed "$venv/bin/pip" wheel -q --no-deps -w "$work/from-sdist" "$sdist" > "$work/sdist.log" 2>&1; then
  w=$(ls "$work/from-sdist"/nsys_ai_native-*.whl)
  python3 -m zipfile -e "$w" "$work/from-sdist/x" && b="$work/from-sdist/x/nsys_ai_native-$version.data/scripts/nsys-ai"
  chmod +x "$b" 2>/dev/null
  "$b" report "$work/example.sqlite" > "$work/sdist-report.txt" 2>&1  # not piped: grep -q would end it early
  if grep -q '^Findings:' "$work/sdist-report.txt"; then ok "a wheel built from the sdist ($(basename "$w")) reports"
  else bad "the sdist's server does not run"; fi
else tail -30 "$work/sdist.log"; bad "pip wheel from the sdist"; fi

# -- 5. the platform VSIX in code-server, through its bundled server ----------------------
if NSYS_AI_VSIX=$vsix NSYS_AI_E2E_BUNDLED=1 timed bash clients/vscode/test/e2e/run.sh > "$work/e2e.log" 2>&1; then
  ok "VSIX end-to-end through the bundled server ($(grep -E '^# pass' "$work/e2e.log"))"
else tail -40 "$work/e2e.log"; bad "VSIX end-to-end"; fi

echo "package suite: $SECONDS s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
