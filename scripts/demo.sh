#!/usr/bin/env bash
# `make demo`: runs FLAMIA's main job end to end on examples/.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
OPT="$BUILD/bin/flamia-opt"
OUT=demo-out
mkdir -p "$OUT"
for f in examples/*.mlir; do
  [ -e "$f" ] || continue
  echo "== $f: parse, verify, print"
  "$OPT" "$f" -o "$OUT/$(basename "$f" .mlir).roundtrip.mlir"
done
echo "demo: outputs in $OUT/"
