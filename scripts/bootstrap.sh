#!/usr/bin/env bash
# The main job on a fresh machine: install, build, generate the example
# profile, and print the root-cause report for it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ ! -f examples/example.sqlite ]; then
  python3 tools/gen_profile.py --preset example -o examples/example.sqlite
fi
./build/nsys-ai report examples/example.sqlite
