#!/usr/bin/env bash
# device call 1 of run 68: stage FA4 part 1, build flamia-run, and the
# source counters of the D = 64 dQ kernel of run 65 (t-d64-r65) and run 66 (t-d64)
set -u
R=$OUT
bash .fa4/a/install-fa4.sh stage | tee $R/stage.txt
OUT=$R/src; DIR=.device/p68; source bench/device-common.sh
for v in t-d64-r65 t-d64; do
  step source-$v-dq timeout 150 ncu --section SourceCounters --section WarpStateStats -k "regex:attention_dq" -c 1 -f -o $OUT/$v-dq $RUN --artifacts $DIR/$v --backward --workload fixed2k --tokens 32768 --heads 16 --bench 1 --warmup 0
  ncu --import $OUT/$v-dq.ncu-rep --page source --csv --print-source sass | gzip -9 > $OUT/$v-dq-sass.csv.gz
  python3 bench/ncu-source-stalls.py $OUT/$v-dq-sass.csv.gz > $OUT/$v-dq-stalls.txt 2>&1
  head -30 $OUT/$v-dq-stalls.txt
  ncu --import $OUT/$v-dq.ncu-rep --page details 2>&1 | grep -E "Duration|Warp Cycles Per Issued|Issued Warp|No Eligible" | head -8
  rm -f $OUT/$v-dq.ncu-rep
done
log "failed steps: $fails"
