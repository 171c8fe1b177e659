#!/usr/bin/env bash
# On the GPU machine: the checks of a change to the D = 64 kernels (run 58:
# the quantizers' whole-sector stores; run 59: the dK/dV kernel's 128-query
# tiles; docs/performance.md), on bench/compile-ab-artifacts.sh's artifacts
# in .device/NAME/: f-d64, t-d64 (this build), f-d64-old, t-d64-old (the
# build before), st-d64 (mxfp8-strict), nv-d64 (nvfp4-mixed). Every copy
# and scale and O, LSE, dQ, dK, dV against the CPU reference (--check),
# L1/L2, L3 on st-d64 and nv-d64, outlier inputs, O/LSE/dQ/dK/dV byte for
# byte against the old build, memcheck and racecheck on t-d64. The timing
# is bench/device-ab.sh NAME ab with AB_SETS naming the D = 64 sets.
# Usage: OUT=DIR bench/device-d64-checks.sh NAME
set -uo pipefail
NAME=${1:?usage: $0 NAME}
DIR=.device/$NAME
OUT=${OUT:-$PWD/out/$NAME}
source bench/device-common.sh
SMALL=docs:300,1000,77,129,0,1,2048,640
step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
step check-nv-d64 $RUN --artifacts $DIR/nv-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
step outliers-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
compare_dumps $SMALL f-d64 t-d64
step memcheck-t-d64 compute-sanitizer --tool memcheck $RUN --artifacts $DIR/t-d64 --backward --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-t-d64 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/t-d64 --backward --workload docs:200,77 --heads 2 --check --sanitize-friendly
log "failed steps: $fails"
