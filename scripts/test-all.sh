#!/usr/bin/env bash
# Runs every test suite: C (normal and ASan/UBSan), protocol, generator,
# leak check, fuzz smoke, VS Code and Jupyter clients (browser tests included),
# the VS Code extension inside code-server, and the packages users install
# (tests/package/run.sh: wheel, sdist, platform VSIX, self-contained binary).
#   scripts/test-all.sh                 everything
#   SUITES="c protocol" scripts/test-all.sh   a subset
#   FUZZ_SECONDS=60 (default 30)        time per fuzz target
#   BUILD_DIR=DIR (default build)       the normal build (meson sets it)
# `meson test -C build --suite NAME` runs suite NAME through this script
# (tests/meson.build); exit 77 when every suite asked for was skipped.
# Real profiles are read from ../shared/profiles; tests that need them skip
# with a message when that folder is absent.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-$root/build}
export NSYS_AI_BIN="$build/nsys-ai"
export NSYS_AI_NO_PROGRESS=1
export NSYS_AI_CACHE_DIR="${NSYS_AI_CACHE_DIR:-$(mktemp -d /tmp/nsys-ai-test-cache.XXXXXX)}"
export NSYS_AI_STATS_DIR="${NSYS_AI_STATS_DIR:-$(mktemp -d /tmp/nsys-ai-stats.XXXXXX)}"
fuzz_seconds=${FUZZ_SECONDS:-30}
all_suites="c c-asan protocol leaks fuzz vscode vscode-e2e jupyter package"
suites=${SUITES:-$all_suites}

passed=(); failed=(); skipped=()
run_suite() {
  local name=$1; shift
  case " $suites " in *" $name "*) ;; *) return 0;; esac
  echo
  echo "=== suite $name: $*"
  local t0=$SECONDS
  "$@"
  local rc=$?
  if [ $rc -eq 0 ]; then passed+=("$name"); echo "=== suite $name passed ($((SECONDS - t0)) s)"
  elif [ $rc -eq 77 ]; then skipped+=("$name"); echo "=== suite $name skipped"
  else failed+=("$name"); echo "=== suite $name FAILED (exit $rc)"; fi
}

pytest_run() {
  python3 -m pytest -q -p no:cacheprovider "$@"
  local rc=$?
  [ $rc -eq 5 ] && return 0   # no tests collected in a directory is not a failure here
  return $rc
}

c_normal() {
  [ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null || return 1
  ninja -C "$build" && meson test -C "$build" --suite c --suite static --print-errorlogs
}

c_asan() {
  [ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null || return 1
  ninja -C build-asan || return 1
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    meson test -C build-asan --suite c --print-errorlogs || return 1
  # The protocol suite against the sanitized server: every request path under ASan/UBSan.
  NSYS_AI_BIN="$root/build-asan/nsys-ai" ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 NSYS_AI_SANITIZED=1 \
    pytest_run tests/protocol -x
}

protocol() {
  ninja -C "$build" >/dev/null || return 1
  pytest_run tests/protocol tests/generator
}

leaks() {
  command -v valgrind >/dev/null || { echo "valgrind not installed"; return 77; }
  ninja -C "$build" >/dev/null || return 1
  meson test -C "$build" --suite c --print-errorlogs \
    --wrap='valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1 -q' \
    || return 1
  python3 tests/leaks/open_close_all.py
}

fuzz() {
  command -v clang >/dev/null || { echo "clang not installed"; return 77; }
  [ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_lundef=false >/dev/null || return 1
  ninja -C build-fuzz || return 1
  python3 tests/fuzz/run_fuzzers.py --build build-fuzz --seconds "$fuzz_seconds"
}

vscode() { bash clients/vscode/scripts/test.sh; }
# The packaged extension inside a real VS Code (code-server on Node 24, both from npm).
vscode_e2e() {
  [ -f clients/vscode/nsys-ai.vsix ] || (cd clients/vscode && npm run -s package) || return 1
  bash clients/vscode/test/e2e/run.sh
}
jupyter() { bash clients/jupyter/scripts/test.sh; }
package() { bash tests/package/run.sh; }

run_suite c c_normal
run_suite c-asan c_asan
run_suite protocol protocol
run_suite leaks leaks
run_suite fuzz fuzz
run_suite vscode vscode
run_suite vscode-e2e vscode_e2e
run_suite jupyter jupyter
run_suite package package

echo
# What the robustness suites tried, on one line (fuzz + corrupt profiles + load).
robust=$(cat "$NSYS_AI_STATS_DIR"/fuzz.txt "$NSYS_AI_STATS_DIR"/protocol.txt 2>/dev/null | paste -sd ';' | sed 's/; */; /g')
[ -n "$robust" ] && echo "robustness: $robust"
echo "passed: ${passed[*]:-none}"
[ ${#skipped[@]} -gt 0 ] && echo "skipped: ${skipped[*]}"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ ${#failed[@]} -eq 0 ] || exit 1
[ ${#passed[@]} -eq 0 ] && [ ${#skipped[@]} -gt 0 ] && exit 77
exit 0
