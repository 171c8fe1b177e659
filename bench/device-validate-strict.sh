#!/usr/bin/env bash
# On the GPU machine: the sm_90a backward of the recipes with second copies
# (issue 19's strict mode, issue 14's nvfp4-mixed backward). mxfp8-strict
# quantizes K, V and dO per token (1x32) where the head dim is contracted
# (S = Q K^T, dP = dO V^T) and in 32x32 token blocks where tokens are
# (dQ = dS K, dV = P^T dO); nvfp4-mixed the same with NVFP4 1x16 per-token
# copies. Checked with flamia-run --backward: every workspace copy bit for
# bit against the CPU quantizer, O, LSE, dQ, dK, dV against the CPU
# reference of the recipe, L2 with gradients and L3 (dQ_i vs later tokens,
# dK_j, dV_j vs earlier ones, bit for bit), the S-consistency check of the
# debug builds, compute-sanitizer; mxfp8 (not strict) as the control that
# L3 must fail; the 32k-token single document (full size); an A/B timing
# of the three recipes' training step (no baselines in this run).
# Compile first (on the compiler machine): bench/compile-strict-artifacts.sh
# Logs go to $OUT. Usage: bench/device-validate-strict.sh [quick|rest]
# (quick: the checks only; rest: the sanitizers, full size and timing
# only; SECTIONS="sanitizers fullsize bench" chooses among the latter).
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-strict}
source bench/device-common.sh
A=.device
EDGES=docs:300,1000,77,129,0,1
TINY=docs:1,1,15,17,31,33,0,127,129,1,0,255
if [ "${1:-}" != rest ]; then
for r in st nv; do
  # Documents that end inside a tile, an empty one and a single token;
  # GQA with outliers; D = 64; tiny documents. nvfp4-mixed is strict by
  # construction: --l3 asks for the L3 rows of its non-strict manifest.
  step $r-edges $RUN --artifacts $A/$r-d128 --heads 2 --workload $EDGES --backward --check --leakcheck --l3
  step $r-gqa-outliers $RUN --artifacts $A/$r-d128 --heads 6 --kv-heads 2 --workload docs:512,700,33 --outliers --backward --check --leakcheck --l3
  step $r-d64 $RUN --artifacts $A/$r-d64 --heads 4 --kv-heads 1 --workload docs:1000,256,7,1,0 --backward --check --leakcheck --l3
  step $r-tiny $RUN --artifacts $A/$r-d128 --heads 2 --workload $TINY --backward --check --leakcheck --l3
  step $r-noncausal $RUN --artifacts $A/$r-d128-nc --heads 4 --kv-heads 2 --workload docs:600,129,64,1 --backward --check --leakcheck
  step $r-consistency $RUN --artifacts $A/$r-d128-dbg --heads 4 --kv-heads 2 --workload $EDGES --backward --check
  for wl in fixed2k lognormal1k single; do
    step $r-std-$wl $RUN --artifacts $A/$r-d128 --heads 16 --kv-heads 16 --workload $wl --tokens 8192 --backward --check
  done
  step $r-std-d64-lognormal1k $RUN --artifacts $A/$r-d64 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 8192 --backward --check
done
# The control: mxfp8 is not strict, so its L3 rows must fail (dO's 32x32
# blocks mix a token with later ones in dP = dO V^T); the step's non-zero
# exit is the expected outcome and not counted.
step mx-l3-control $RUN --artifacts $A/mx-d128 --heads 2 --workload docs:300,1000 --backward --leakcheck --l3
fails=$((fails - ($? != 0)))
fi
[ "${1:-}" = quick ] && { log "failed steps: $fails"; exit 0; }
SECTIONS=${SECTIONS:-"sanitizers fullsize bench"}
has() { [[ " $SECTIONS " == *" $1 "* ]]; }
# Sanitizers on a small varlen step (documents ending inside a tile).
CS=compute-sanitizer
if has sanitizers; then
for r in st nv; do
  step $r-memcheck $CS --tool memcheck --error-exitcode 1 $RUN --artifacts $A/$r-d128 --heads 4 --kv-heads 2 --workload docs:300,77,129,1 --backward --sanitize-friendly
  step $r-racecheck $CS --tool racecheck --error-exitcode 1 $RUN --artifacts $A/$r-d128 --heads 2 --workload docs:200,77 --backward --sanitize-friendly
done
step st-d64-memcheck $CS --tool memcheck --error-exitcode 1 $RUN --artifacts $A/st-d64 --heads 2 --workload docs:300,77,1 --backward --sanitize-friendly
fi
# Full size: one 32k-token document, H = 16 (the reference on sampled heads).
if has fullsize; then
step mx-single32k $RUN --artifacts $A/mx-d128 --heads 16 --kv-heads 16 --workload single --tokens 32768 --backward --check
step st-single32k $RUN --artifacts $A/st-d128 --heads 16 --kv-heads 16 --workload single --tokens 32768 --backward --check
fi
# A/B timing of the training step (quantization, forward, backward), T = 32k, H = 16.
if has bench; then
for wl in fixed2k single; do
  for r in mx st nv; do
    step bench-$r-$wl $RUN --artifacts $A/$r-d128 --heads 16 --kv-heads 16 --workload $wl --tokens 32768 --backward --bench 20
  done
done
step bench-st-d64-lognormal1k $RUN --artifacts $A/st-d64 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 32768 --backward --bench 20
step bench-mx-d64-lognormal1k $RUN --artifacts $A/mx-d64 --heads 16 --kv-heads 4 --workload lognormal1k --tokens 32768 --backward --bench 20
fi
log "failed steps: $fails"
