#!/usr/bin/env bash
# Checks that BINARY runs on any x86-64 Linux with glibc >= MAX_GLIBC (default
# 2.28): an x86-64 ELF whose needed libraries are glibc's own (libc, libm,
# libpthread, libdl, librt, the loader) and whose versioned glibc symbols are
# none newer than MAX_GLIBC (objdump -T), with no RPATH/RUNPATH.
#   scripts/check-binary.sh BINARY [MAX_GLIBC]
# Prints what it found; exits 1 on any violation.
set -euo pipefail
bin=$1
max=${2:-2.28}
fail=0
[ -f "$bin" ] || { echo "check-binary: $bin: no such file" >&2; exit 1; }
hdr=$(readelf -h "$bin")
grep -q 'Class:.*ELF64' <<<"$hdr" && grep -q 'Machine:.*X86-64' <<<"$hdr" \
  || { echo "check-binary: $bin is not an x86-64 ELF64 file"; fail=1; }
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
  case $lib in
    libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|librt.so.1|ld-linux-x86-64.so.2) ;;
    *) echo "check-binary: needs $lib, which is not part of glibc"; fail=1 ;;
  esac
done
if readelf -d "$bin" | grep -q -E '\((RPATH|RUNPATH)\)'; then
  echo "check-binary: has an RPATH/RUNPATH"; fail=1
fi
# "GLIBC_2.34 dlopen" per versioned symbol; those newer than $max are violations.
syms=$(objdump -T "$bin" | sed -n 's/.*(GLIBC_\([0-9][0-9.]*\)) *\([^ ]*\)$/\1 \2/p')
newest=$(cut -d' ' -f1 <<<"$syms" | sort -u -V | tail -1)
[ -n "$newest" ] || { echo "check-binary: no versioned glibc symbols (not dynamically linked against glibc?)"; fail=1; }
newer=$(while read -r v sym; do
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -1)" != "$max" ] && echo "  GLIBC_$v $sym"
done <<<"$syms" || true)
if [ -n "$newer" ]; then
  echo "check-binary: uses glibc symbols newer than $max:"; head -20 <<<"$newer"; fail=1
fi
echo "check-binary: $bin: needs ${needed//$'\n'/ }; newest glibc symbol version $newest (limit $max)"
exit $fail
