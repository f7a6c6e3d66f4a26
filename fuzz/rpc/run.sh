#!/usr/bin/env bash
# Builds and runs the rpc fuzz target for a bounded time (default 60 s) on a
# scratch copy of its seed corpus, then prints one summary line:
#   fuzz: N execs, 1 targets, 0 crashes
# Usage: fuzz/rpc/run.sh [SECONDS] [BUILD_DIR]   (needs clang with libFuzzer)
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build-fuzz}
if [ ! -d "$build" ]; then
  # -Wno-format-nonliteral: clang flags nsys_strbuf_vprintf (common/util.h)
  CC=clang meson setup "$build" "$root" -Dfuzz=true -Dc_args=-Wno-format-nonliteral >/dev/null
fi
ninja -C "$build" fuzz/rpc/fuzz_framing >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root"/fuzz/rpc/corpus/* "$work"/
cd "$work"
set +e
"$build"/fuzz/rpc/fuzz_framing -max_total_time="$secs" -print_final_stats=1 "$work" >log 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' log)
crashes=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \) | wc -l)
if [ $rc -ne 0 ]; then
  tail -40 log >&2
  mkdir -p "$root/fuzz/rpc/crashes"
  cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$root/fuzz/rpc/crashes/" 2>/dev/null || true
  crashes=$((crashes > 0 ? crashes : 1))
fi
echo "fuzz: ${execs:-0} execs, 1 targets, $crashes crashes (fuzz_framing, ${secs}s)"
exit $rc
