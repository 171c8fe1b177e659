#!/usr/bin/env bash
# On the GPU machine: the scale-factor tiles of sm_100a's training step,
# written by the sm_90a quantizers (artifacts .device/bt-*, compiled by
# bench/compile-backward-tiles-artifacts.sh) and checked by flamia-run
# --backward --check against tiles built from the CPU quantizer's scales:
# every byte a tcgen05 MMA of the forward or the backward reads, next to
# every other copy, O, LSE and the gradients. Documents that end inside a
# tile, single tokens, empty documents, outliers, GQA, D = 64, and one
# memcheck. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out/h200-backward-tiles}
STEP_GREP="_sf|FAIL|checks failed|ERROR SUMMARY|d[QKV] vs"
source bench/device-common.sh
EDGES=docs:1,1,15,17,31,33,0,127,129,1,0,255
step nv-small $RUN --artifacts .device/bt-nv-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step nv-edges $RUN --artifacts .device/bt-nv-h2d128 --heads 2 --workload $EDGES --backward --check
step nv-gqa-outliers $RUN --artifacts .device/bt-nv-h4kv2d128 --heads 4 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step nv-d64 $RUN --artifacts .device/bt-nv-h2d64 --heads 2 --workload docs:1000,256,7,1,0,40 --backward --check
step nv-d64-edges $RUN --artifacts .device/bt-nv-h2d64 --heads 2 --workload $EDGES --backward --check
step mx-small $RUN --artifacts .device/bt-mx-h2d128 --heads 2 --workload docs:300,1000,77,129,0,1 --backward --check
step mx-edges $RUN --artifacts .device/bt-mx-h2d128 --heads 2 --workload $EDGES --backward --check --outliers
step mx-gqa-d64 $RUN --artifacts .device/bt-mx-h4kv2d64 --heads 4 --kv-heads 2 --workload docs:512,700,33,1 --backward --check
step nv-memcheck compute-sanitizer --tool memcheck $RUN --artifacts .device/bt-nv-h2d128 --heads 2 --workload docs:300,200,77,1 --backward --sanitize-friendly
log "failed steps: $fails"
cat "$OUT/summary.txt" > /dev/null
