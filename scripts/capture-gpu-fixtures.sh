#!/bin/bash
# Remakes tests/fixtures/gpu/*.sqlite.gz on a machine with an NVIDIA GPU, nvcc,
# PyTorch, CuPy, Triton and Nsight Systems (NSYS=path/to/nsys; QDSTRM_IMPORTER
# when nsys leaves a .qdstrm, as the copy bundled with Nsight Compute does).
#   scripts/capture-gpu-fixtures.sh [OUTDIR]   (default: tests/fixtures/gpu)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath "${1:-$REPO/tests/fixtures/gpu}")
NSYS=${NSYS:-$(command -v nsys || true)}
[ -x "$NSYS" ] || { echo "capture-gpu-fixtures: set NSYS to an nsys binary" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cp "$REPO"/tests/fixtures/gpu/src/* "$WORK"/
cd "$WORK"

capture() {  # name, nsys options..., --, command...
  local name=$1; shift
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  "$NSYS" profile -t cuda,nvtx --sample=none --cpuctxsw=none "${opts[@]}" -o "$WORK/$name" --force-overwrite true "$@"
  if [ ! -f "$WORK/$name.nsys-rep" ]; then
    [ -n "${QDSTRM_IMPORTER:-}" ] || { echo "capture-gpu-fixtures: nsys left $name.qdstrm: set QDSTRM_IMPORTER" >&2; exit 2; }
    "$QDSTRM_IMPORTER" -i "$WORK/$name.qdstrm"
  fi
  "$NSYS" export --type sqlite -o "$WORK/$name.sqlite" --force-overwrite true "$WORK/$name.nsys-rep"
  gzip -9 -c "$WORK/$name.sqlite" > "$OUT/$name.sqlite.gz"
  echo "capture-gpu-fixtures: $OUT/$name.sqlite.gz"
}

ARCH=${CUDA_ARCH:-native}
nvcc -O2 -std=c++17 -arch="$ARCH" -lineinfo --extended-lambda work.cu workmain.cu -o cudawork -lcurand -lcufft
nvcc -O2 -arch="$ARCH" -lineinfo ex1.cu -o vecadd_ex1
nvcc -O2 -arch="$ARCH" -lineinfo ex2.cu -o vecadd_ex2
GPU=${GPU_TAG:-h200}
capture "${GPU}_vecadd_two_exes" -- bash -c "./vecadd_ex1; ./vecadd_ex2"
capture "${GPU}_cudawork" --cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true --cudabacktrace=all -- ./cudawork
capture "${GPU}_pykernels" -- python3 pykernels.py
capture "${GPU}_gpt_train" --cuda-memory-usage=true -- python3 train.py
