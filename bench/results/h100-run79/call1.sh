#!/usr/bin/env bash
# Device call of run 79 (carry .device/run78): the gradient and forward checks of
# flamia-run across softmax scales, this build (X, the FMA exponent of run 78)
# and the build before it (X-old), to find where the comparison with the CPU
# reference stops holding and whether the FMA exponent moved that point.
# Sets from bench/compile-ab-artifacts.sh run78 (t-d128, f-d128 and their -old).
set -u
OUT=$OUT/run79; DIR=.device/run78
source bench/device-common.sh > /dev/null
SMALL=docs:300,1000,77,129,0,1,2048,640
for sc in default 20 200 2000 2e4 2e5 2e6; do
  flag=(); [ $sc = default ] || flag=(--softmax-scale $sc)
  for v in t-d128 t-d128-old; do
    step scale$sc-$v $RUN --artifacts $DIR/$v --backward --workload $SMALL --heads 4 --kv-heads 2 "${flag[@]}" --check
  done
  for v in f-d128 f-d128-old; do
    step scale$sc-$v $RUN --artifacts $DIR/$v --workload $SMALL --heads 4 --kv-heads 2 "${flag[@]}" --check
  done
done > $OUT/console.txt 2>&1
log "failed steps: $fails" >> $OUT/console.txt
echo "scale set O dQ dK dV (rel L2; dQ/dK/dV also vs bf16-rounded reference)"
for f in $OUT/scale*.log; do
  n=$(basename $f .log)
  o=$(grep -m1 "^O vs" $f | sed -E 's/.*rel L2 ([^ ]+).*/\1/')
  g=$(grep -E "^d[QKV] vs" $f | sed -E 's/^(d[QKV]).*rel L2 ([^ ]+) .*bf16: ([^ ;]+).*/\1 \2 (\3)/' | tr '\n' ' ')
  echo "$n O $o $g"
done
tail -1 $OUT/console.txt
