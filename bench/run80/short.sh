#!/usr/bin/env bash
# Run 80 in one short device call (carry .device/run80), for when little device
# time is left: the reference checks of every set whose forward kernel changed
# (bench/device-ab.sh's steps, without the sanitizers: no memory access
# changed, and without the byte comparison), the adversarial softmax scales
# 2000 and 2e6 on the D = 128 forward, then the A/B of the forward sets only.
set -u
R=$OUT; mkdir -p $R/run80/checks $R/run80/ab
(OUT=$R/run80/checks; DIR=.device/run80; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 step check-f-d128 $RUN --artifacts $DIR/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-f-d128-nc $RUN --artifacts $DIR/f-d128-nc --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-fst-d64 $RUN --artifacts $DIR/fst-d64 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-t-d128-dbg $RUN --artifacts $DIR/t-d128-dbg --backward --workload $SMALL --heads 4 --kv-heads 2 --check
 step check-nv-d128 $RUN --artifacts $DIR/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step outliers-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
 for sc in 2000 2e6; do
   for v in f-d128 f-d128-old; do
     step scale$sc-$v $RUN --artifacts $DIR/$v --workload $SMALL --heads 4 --kv-heads 2 --softmax-scale $sc --check
   done
 done
 log "failed steps: $fails") > $R/run80/console-checks.txt 2>&1
grep -E "^== .*rc=|FAIL|failed steps" $R/run80/console-checks.txt | grep -v "rc=0" | head -20
grep -E "^== check|^== outl|^== scale|O vs|rel L2|bit-identical|L3 " $R/run80/console-checks.txt | grep -E "O vs|d[QKV] vs|S recomputed" | awk '{$1=$1};1' | cut -c1-150 | head -40
tar czf $R/run80/checks-logs.tgz -C $R/run80 checks && rm -rf $R/run80/checks
OUT=$R/run80/ab AB_SETS="f-d128-old f-d128 f-d64-old f-d64" AB_WORKLOADS="fixed2k lognormal1k single" bash bench/device-ab.sh run80 ab > $R/run80/console-ab.txt 2>&1
rm -f $R/run80/ab/summary.txt
python3 bench/ab-summary.py $R/run80/ab/ab.txt > $R/run80/summary-means.txt 2>&1
grep -E "vs " $R/run80/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
