#!/usr/bin/env bash
# Installs what nsys-ai needs on Debian (12+) and builds it into build/.
#   scripts/setup.sh            build deps + build
#   scripts/setup.sh --all      also the test/client deps (clang, valgrind, chromium, nsys, pip, npm)
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."

all=0
[ "${1:-}" = "--all" ] && all=1

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

build_pkgs=(meson ninja-build pkg-config gcc libsqlite3-dev libcjson-dev libuv1-dev libcurl4-openssl-dev python3)
# make, g++ and libkrb5-dev: native modules of code-server (the VS Code end-to-end suite)
test_pkgs=(clang libclang-rt-14-dev llvm valgrind strace sqlite3 chromium python3-venv nodejs npm make g++ libkrb5-dev)

missing=()
want=("${build_pkgs[@]}")
[ $all -eq 1 ] && want+=("${test_pkgs[@]}")
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from elsewhere (nodesource, nvm): do not fight them.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do case $p in nodejs|npm) ;; *) tmp+=("$p");; esac; done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ $all -eq 1 ]; then
  # A real nsys (CPU-side traces only without a GPU) for end-to-end tests. It lives in
  # Debian's non-free component; tests that need it skip when it is absent.
  if ! command -v nsys >/dev/null; then
    # nsight-systems is in non-free; its libcuda1 dependency needs nvidia-support from contrib.
    src=/etc/apt/sources.list.d/debian.sources
    if [ -f $src ] && ! grep -q "non-free" $src; then
      $SUDO sed -i 's/^Components: main$/Components: main contrib non-free/' $src
    fi
    $SUDO apt-get update -q || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nsight-systems libnvtoolsext1 \
      || echo "setup: nsight-systems unavailable; nsys end-to-end tests will skip"
  fi
  python3 -m pip install -q --disable-pip-version-check pytest jsonschema
  # validates every protocol test's replies against protocol/schemas ~100x faster than
  # jsonschema (which still words the errors, and validates alone without it)
  python3 -m pip install -q --disable-pip-version-check "jsonschema-rs==0.61.0" \
    || echo "setup: jsonschema-rs unavailable; the protocol tests validate replies with jsonschema (slower)"
  # the MCP clients that drive `nsys-ai mcp` in tests/protocol/test_mcp*.py (pinned)
  python3 -m pip install -q --disable-pip-version-check "mcp==1.22.0"
  # rank sets on Dask (clients/jupyter ranks.py, its LocalCluster test; bench/bench_ranks.py --dask)
  python3 -m pip install -q --disable-pip-version-check "dask[distributed]==2026.8.0" \
    || echo "setup: dask.distributed unavailable; the Dask rank-set test will skip"
  if command -v npm >/dev/null; then
    npm install -q --no-audit --no-fund --prefix tests/protocol/mcp-inspector "@modelcontextprotocol/inspector@0.17.2" \
      || echo "setup: the MCP Inspector is unavailable; its test will skip"
  fi
fi

if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build
