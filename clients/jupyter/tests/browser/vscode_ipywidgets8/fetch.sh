#!/usr/bin/env bash
# Fetches VS Code's ipywidgets 8 widget-manager bundle, @vscode/jupyter-ipywidgets8 (the file
# the VS Code "Jupyter Notebook Renderers" extension loads into notebook webviews), into DEST
# (DEST/package/dist/ipywidgets.js). Only its tarball: the package's declared dependencies are
# already inside dist/ipywidgets.js (a webpack bundle) and are not installed. The tarball is
# checked against a pinned sha512 (the registry's dist.integrity). Does nothing when DEST
# already holds the checked version.
#
#   tests/browser/vscode_ipywidgets8/fetch.sh DEST
set -euo pipefail
VERSION=1.0.9
INTEGRITY="sha512-bocCThfa4JDIDd7qCFAfW3HpzHfTLYxOTpTbiDfw4DXOUjKHnr6ObkMBiIkuzYPRybh5bY4FhYLemuDuTvIbpQ=="
DEST="${1:?usage: fetch.sh DEST}"
STAMP="$DEST/.fetched"
if [ "$(cat "$STAMP" 2>/dev/null)" = "$VERSION $INTEGRITY" ] && [ -f "$DEST/package/dist/ipywidgets.js" ]; then
  exit 0
fi
rm -rf "$DEST" && mkdir -p "$DEST"
TGZ="$(cd "$DEST" && npm pack --silent "@vscode/jupyter-ipywidgets8@$VERSION" | tail -1)"
GOT="$(node -e 'const c=require("crypto"),fs=require("fs");
  console.log("sha512-"+c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' "$DEST/$TGZ")"
if [ "$GOT" != "$INTEGRITY" ]; then
  echo "@vscode/jupyter-ipywidgets8@$VERSION: integrity $GOT, expected $INTEGRITY" >&2
  exit 1
fi
tar xzf "$DEST/$TGZ" -C "$DEST"
rm -f "$DEST/$TGZ"
echo "$VERSION $INTEGRITY" > "$STAMP"
echo "@vscode/jupyter-ipywidgets8@$VERSION in $DEST/package"
