#!/usr/bin/env bash
# The VS Code client's whole check: install, typecheck, build, unit tests
# (against the real server at $NSYS_AI_BIN), UI tests in headless Chromium,
# generated-types drift check, and the .vsix package step.
# Needs: node >= 18 and npm; the server binary (default ../../build/nsys-ai);
# Debian's chromium at /usr/bin/chromium for the UI tests (skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
export NSYS_AI_BIN="${NSYS_AI_BIN:-$(cd ../.. && pwd)/build/nsys-ai}"
[ -x "$NSYS_AI_BIN" ] || echo "note: $NSYS_AI_BIN is missing; server-backed tests will be skipped"

# by content, not dates (test/e2e/lockFresh.mjs): a copied or freshly checked-out tree is not reinstalled
if ! node test/e2e/lockFresh.mjs .; then
  npm ci --no-audit --no-fund
fi
# esbuild's postinstall may be held back by the npm install-script policy; the
# platform binary comes as an optional dependency, so check it runs.
npx --no-install esbuild --version >/dev/null

echo "== typecheck"
npm run --silent typecheck
echo "== build"
node scripts/build.mjs
echo "== generated protocol types are up to date"
node scripts/gen-types.mjs --check
echo "== unit tests (real server over stdio)"
node --test --test-timeout=60000 out/test/unit/
echo "== UI tests (headless Chromium)"
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  node --test --test-timeout=120000 --test-concurrency=1 out/test/ui/
else
  echo "SKIP UI tests: no chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install -y chromium)"
fi
echo "== package"
node scripts/build.mjs --production
npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license -o nsys-ai.vsix >/dev/null
ls -l nsys-ai.vsix
node scripts/build.mjs   # restore the dev build (source maps) for later test runs
