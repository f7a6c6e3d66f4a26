#!/usr/bin/env bash
# Builds the installable nsys-ai into dist/ on a fresh Debian machine
# (installing what it needs, like scripts/setup.sh; idempotent):
#   dist/nsys-ai                 the self-contained x86-64 Linux binary: sqlite3,
#                                cJSON and libuv built in, libcurl loaded only for
#                                an LLM endpoint; runs on glibc >= 2.28
#   dist/nsys_ai_native-VERSION-py3-none-manylinux_2_28_x86_64.whl
#                                that binary (as the venv's bin/nsys-ai) and the
#                                Jupyter client (import nsys_ai_native)
#   dist/nsys_ai_native-VERSION.tar.gz
#                                the sdist: builds the server from source with meson
#   dist/nsys-ai-linux-x64-VERSION.vsix
#                                the VS Code extension with that binary
# How glibc 2.28 is reached: `zig cc -target x86_64-linux-gnu.2.28` (PyPI's
# ziglang) links against glibc 2.28's symbol versions whatever the build
# machine's glibc is; scripts/check-binary.sh checks the result.
# Build tools go into .venv-package/ (scripts/package-requirements.txt), the
# build into build-dist/, pinned sources into subprojects/ (vendor-sources.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# -- what the machine needs (Debian) ------------------------------------------
pkgs=(python3 python3-venv binutils patch xz-utils ca-certificates nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if command -v node >/dev/null && command -v npm >/dev/null; then  # node from elsewhere: keep it
  tmp=(); for p in "${missing[@]+"${missing[@]}"}"; do case $p in nodejs|npm) ;; *) tmp+=("$p");; esac; done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "package: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

venv=$root/.venv-package
req=scripts/package-requirements.txt
if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$(cat $req)" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r $req
  cp $req "$venv/.requirements"
fi
py=$venv/bin/python

# -- the self-contained binary --------------------------------------------------
scripts/vendor-sources.sh
# put FILE: stdin into FILE when that changes it (an unchanged compiler keeps the build).
put() { local t; t=$(mktemp); cat > "$t"; if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; chmod +x "$1"; fi; }
# zig's clang does not take the glibc-versioned target with input on stdin
# (meson's compiler probes): hand it a file.
put "$venv/bin/zig-cc-glibc2.28" <<ZIG
#!/usr/bin/env bash
args=(); tmp=""
for a in "\$@"; do
  if [ "\$a" = "-" ]; then tmp=\$(mktemp /tmp/zig-cc-stdin.XXXXXX.c); cat > "\$tmp"; args+=("\$tmp"); else args+=("\$a"); fi
done
"$py" -m ziglang cc -target x86_64-linux-gnu.2.28 "\${args[@]}"; rc=\$?
[ -z "\$tmp" ] || rm -f "\$tmp"
exit \$rc
ZIG
printf '#!/bin/sh\nexec "%s" -m ziglang ar "$@"\n' "$py" | put "$venv/bin/zig-ar"
put "$venv/zig-glibc2.28.ini" <<INI
[binaries]
c = '$venv/bin/zig-cc-glibc2.28'
ar = '$venv/bin/zig-ar'
[built-in options]
c_link_args = ['-s']
INI
if [ ! -f build-dist/build.ninja ]; then
  "$venv/bin/meson" setup build-dist --native-file "$venv/zig-glibc2.28.ini" \
    --force-fallback-for=sqlite3,libcjson,libuv --wrap-mode=nodownload \
    -Dbuildtype=release -Db_ndebug=false -Dtests=false >/dev/null
fi
"$venv/bin/ninja" -C build-dist nsys-ai > build-dist/ninja.log 2>&1 || { tail -50 build-dist/ninja.log; exit 1; }
mkdir -p dist
cp build-dist/nsys-ai dist/nsys-ai
scripts/check-binary.sh dist/nsys-ai 2.28
version=$(dist/nsys-ai --version | awk '{print $2}')

# -- the wheel and the sdist -----------------------------------------------------
rm -f dist/nsys_ai_native-*
NSYS_AI_BUNDLE_SERVER=$root/dist/nsys-ai NSYS_AI_WHEEL_TAG=py3-none-manylinux_2_28_x86_64 \
  "$py" -m build --wheel --no-isolation --outdir dist clients/jupyter >/dev/null
"$py" -m build --sdist --no-isolation --outdir dist clients/jupyter >/dev/null
wheel=$(ls dist/nsys_ai_native-"$version"-*.whl)
tag=$("$venv/bin/auditwheel" show "$wheel" | tr -s ' \n' ' ' | grep -o 'platform tag: "[^"]*"' | head -1)
echo "package: $wheel: auditwheel: $tag"
case $tag in
  *manylinux_2_28_x86_64*|*manylinux_2_2[0-7]_x86_64*|*manylinux_2_1[0-9]_x86_64*|*manylinux_2_5_x86_64*) ;;
  *) echo "package: auditwheel allows no tag of manylinux_2_28 or older" >&2; exit 1 ;;
esac

# -- the platform VSIX -------------------------------------------------------------
(
  cd clients/vscode
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund >/dev/null
  fi
  mkdir -p server
  cp "$root/dist/nsys-ai" server/nsys-ai
  for l in libcjson libuv; do cp "$root/subprojects/$l/LICENSE" "server/LICENSE.$l"; done
  node scripts/build.mjs --production
  npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license \
    --target linux-x64 -o "$root/dist/nsys-ai-linux-x64-$version.vsix" >/dev/null
  rm -rf server
)
ls -l dist/
