#!/usr/bin/env bash
# On the GPU machine: run 62's checks and A/B of the overlapped consumer at
# D = 64 (docs/performance.md, "Run 62"). Artifacts in .device/run62/:
# f-d64-ov and fst-d64-ov (mxfp8 and mxfp8-strict forward sets) from a
# flamia-compile whose flamia-tile overlap condition in
# lib/Transforms/TileAttention.cpp reads `d == 128 || d == 64` (a one-line
# change, built separately), and f-d64-ov-old, fst-d64-ov-old from this
# build's flamia-compile (the serial consumer), all with
#   --target sm_90a --varlen --runtime-heads --causal --head-dim 64
#   --recipe mxfp8 (f-*) or mxfp8-strict (fst-*).
# Checks: --check --leakcheck, O/LSE byte for byte against the serial
# consumer (normal and outlier inputs), memcheck, racecheck; then the A/B.
# Usage: OUT=DIR bench/device-overlap-d64.sh
set -uo pipefail
D=${OUT:-$PWD/out/run62}; mkdir -p "$D"
(
DIR=.device/run62; OUT=$D/checks; source bench/device-common.sh
S=docs:300,1000,77,129,0,1,2048,640
step check-f-d64-ov $RUN --artifacts $DIR/f-d64-ov --workload $S --heads 4 --kv-heads 4 --check --leakcheck
step check-fst-d64-ov $RUN --artifacts $DIR/fst-d64-ov --workload $S --heads 4 --kv-heads 2 --check --leakcheck
compare_dumps $S f-d64-ov fst-d64-ov
step memcheck-f-d64-ov compute-sanitizer --tool memcheck $RUN --artifacts $DIR/f-d64-ov --workload docs:300,200,77 --heads 2 --check --sanitize-friendly
step racecheck-f-d64-ov compute-sanitizer --tool racecheck $RUN --artifacts $DIR/f-d64-ov --workload docs:200,77 --heads 2 --check --sanitize-friendly
log "failed steps: $fails"
) > $D/console-checks.txt 2>&1
grep -E "failed steps|DIFFER|ERROR SUMMARY|RACECHECK SUMMARY|FAIL" $D/console-checks.txt; grep -c identical $D/console-checks.txt
AB_SETS="f-d64-ov-old f-d64-ov" OUT=$D/ab bash bench/device-ab.sh run62 ab > $D/console-ab.txt 2>&1
grep -E "==|kernel flamia_attention_fwd" $D/console-ab.txt | tail -16
(cd $D && tar czf r62.tgz checks ab && rm -rf checks ab)
