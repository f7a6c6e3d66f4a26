#!/usr/bin/env bash
# The timeline's speed in real code-server (not a test: CI does not run it).
# Installs like run.sh (env.sh), then runs bench.code-server.mjs; see the
# header of that file and clients/vscode/README.md for what it measures.
# Needs the built server (NSYS_AI_BIN, default build/nsys-ai), the package
# (NSYS_AI_VSIX, default clients/vscode/nsys-ai.vsix) and the generated
# profiles (bench/README.md: /tmp/nsys-ai-bench/default-{1000000,10000000}-s1.sqlite).
set -euo pipefail
source "$(dirname "$0")/env.sh"
echo "== code-server $(node -p "require('./node_modules/code-server/package.json').version") on node $(node -v)"
exec node bench.code-server.mjs "$@"
