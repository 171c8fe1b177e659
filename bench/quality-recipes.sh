#!/usr/bin/env bash
# The quality table of docs/numerics.md ("Measured quality"): the CPU
# reference of each recipe against the float64 reference (recipe none) on
# synthetic inputs, T = 4096 tokens in one causal document, Hq = Hkv = 2,
# D = 128, seed 1. Runs on the CPU (no device); writes the table and the
# command line to OUTDIR/quality.md.
#
#   bench/quality-recipes.sh [BUILD_DIR] [OUTDIR]
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-bench/results/cpu-quality-nvfp4}
mkdir -p "$OUT"
RECIPES=mxfp8:128,mxfp8:0,nvfp4-mixed:128,nvfp4-mixed:32,nvfp4-mixed:0
INPUTS=random,outlier,massive,small-grad
{
  echo "# flamia-ref quality, $(date -u +%Y-%m-%d), $(nproc) cores"
  echo
  echo "\$ flamia-ref quality --tokens 4096 --heads 2 --head-dim 128 --inputs $INPUTS --recipes $RECIPES --seed 1"
  echo
  "$BUILD/bin/flamia-ref" quality --tokens 4096 --heads 2 --head-dim 128 \
    --inputs "$INPUTS" --recipes "$RECIPES" --seed 1
} > "$OUT/quality.md"
cat "$OUT/quality.md"
