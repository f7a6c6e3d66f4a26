#!/usr/bin/env bash
# Fetches the sources that the self-contained nsys-ai builds in (sqlite3,
# cJSON, libuv), pinned with their sha256 in subprojects/sources.lock, each
# with its registry's own client (npm pack, apt-get source), checks every hash,
# and unpacks them into subprojects/<name>/ with the meson.build of
# subprojects/packagefiles/<name>/ (Debian's patches applied in series order).
# Downloads are kept in subprojects/packagecache/. Idempotent.
#
# A Debian package whose pinned revision has left the archive: its current
# revision of the same upstream version is used (apt checks it against
# Debian's signed index; the upstream tarball's pinned hash must still match)
# and the new hash is printed, to be pinned in sources.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=$root/subprojects/packagecache
mkdir -p "$cache"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

sha() { sha256sum "$1" | cut -d' ' -f1; }

# The Debian source index (deb-src), added once like scripts/setup.sh adds non-free.
ensure_deb_src() {
  apt-cache showsrc libuv1 2>/dev/null | grep -q '^Package:' && return 0
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  $SUDO tee /etc/apt/sources.list.d/nsys-ai-deb-src.sources >/dev/null <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $codename-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $SUDO apt-get update -q
}

# fetch CLIENT PACKAGE VERSION FILE SHA256: FILE in $cache with that hash.
fetch() {
  local client=$1 pkg=$2 ver=$3 file=$4 want=$5
  if [ -f "$cache/$file" ] && [ "$(sha "$cache/$file")" = "$want" ]; then return 0; fi
  case $client in
    npm) (cd "$cache" && npm pack --silent "$pkg@$ver" >/dev/null) ;;
    apt)
      ensure_deb_src
      if ! (cd "$cache" && apt-get source -q --download-only "$pkg=$ver" >/dev/null 2>&1); then
        case $file in
          *.orig.*) ;;
          *) echo "vendor-sources: $pkg $ver is no longer in Debian's archive; using its current revision" >&2 ;;
        esac
        (cd "$cache" && apt-get source -q --download-only "$pkg" >/dev/null 2>&1) \
          || { echo "vendor-sources: apt-get source $pkg failed" >&2; return 1; }
      fi ;;
  esac
  if [ ! -f "$cache/$file" ]; then
    case $file in
      *.debian.tar.*)
        local now
        now=$(ls "$cache/${pkg}_"*.debian.tar.* 2>/dev/null | grep -v -- "$file" | tail -1 || true)
        [ -n "$now" ] || { echo "vendor-sources: no $file from $client" >&2; return 1; }
        echo "vendor-sources: WARNING: using $(basename "$now") (sha256 $(sha "$now")) instead of $file; pin it in subprojects/sources.lock" >&2
        cp "$now" "$cache/$file.current"
        return 0 ;;
      *) echo "vendor-sources: $client gave no $file" >&2; return 1 ;;
    esac
  fi
  local got
  got=$(sha "$cache/$file")
  if [ "$got" != "$want" ]; then
    echo "vendor-sources: $file has sha256 $got, subprojects/sources.lock pins $want" >&2
    return 1
  fi
}

# The file to unpack for FILE: itself, or the current revision that replaced it.
resolved() { if [ -f "$cache/$1" ]; then echo "$cache/$1"; else echo "$cache/$1.current"; fi; }

unpack() {
  local name=$1; shift
  local dir=$root/subprojects/$name
  local stamp
  stamp=$( (cat "$root/subprojects/packagefiles/$name/meson.build"; for f in "$@"; do sha "$(resolved "$f")"; done) | sha256sum | cut -d' ' -f1)
  [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  case $name in
    sqlite3)
      tar -xzf "$(resolved "$1")" -C "$dir" --strip-components=3 \
        package/deps/sqlite3/sqlite3.c package/deps/sqlite3/sqlite3.h package/deps/sqlite3/sqlite3ext.h ;;
    *)
      tar -xf "$(resolved "$1")" -C "$dir" --strip-components=1
      tar -xf "$(resolved "$2")" -C "$dir"
      if [ -f "$dir/debian/patches/series" ]; then
        grep -v '^\s*\(#\|$\)' "$dir/debian/patches/series" | while read -r p _; do
          patch -s -p1 -d "$dir" < "$dir/debian/patches/$p"
        done
      fi ;;
  esac
  if [ "$name" = libcjson ]; then mkdir -p "$dir/include/cjson" && cp "$dir/cJSON.h" "$dir/include/cjson/"; fi
  cp "$root/subprojects/packagefiles/$name/meson.build" "$dir/meson.build"
  echo "$stamp" > "$dir/.stamp"
}

declare -A files=()
while read -r name client pkg ver file want; do
  case $name in ''|'#'*) continue ;; esac
  fetch "$client" "$pkg" "$ver" "$file" "$want"
  files[$name]="${files[$name]:-} $file"
done < subprojects/sources.lock
for name in "${!files[@]}"; do
  # shellcheck disable=SC2086
  unpack "$name" ${files[$name]}
done
echo "vendor-sources: ${!files[*]} ready in subprojects/"
