#!/usr/bin/env bash
# device call of run 77 (carry .device/run77): the exponent's argument as one FMA (X, an
# uncommitted build) against the shipped sets (X-old): the reference, L1/L2, L3 and
# S-consistency checks of X (no byte comparison: X's numerics differ by design; no sanitizers:
# memory accesses unchanged), then the A/B of the forward and training sets.
set -u
R=$OUT
mkdir -p $R/run77/checks $R/run77/ab
(OUT=$R/run77/checks; DIR=.device/run77; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 step check-f-d128 $RUN --artifacts $DIR/f-d128 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-t-d128-dbg $RUN --artifacts $DIR/t-d128-dbg --backward --workload $SMALL --heads 4 --kv-heads 2 --check
 step check-st-d64 $RUN --artifacts $DIR/st-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step check-nv-d128 $RUN --artifacts $DIR/nv-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step outliers-t-d128 $RUN --artifacts $DIR/t-d128 --backward --workload $SMALL --heads 4 --kv-heads 2 --outliers --check
 log "failed steps: $fails") > $R/run77/console-checks.txt 2>&1
echo "== run 77 checks"; grep -E "FAIL|failed steps" $R/run77/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
grep -hE "O vs|d[QKV] vs" $R/run77/checks/check-t-d128.log $R/run77/checks/check-f-d64.log | head -12
tar czf $R/run77/checks-logs.tgz -C $R/run77 checks && rm -rf $R/run77/checks
OUT=$R/run77/ab AB_SETS="f-d128-old f-d128 f-d64-old f-d64 t-d128-old t-d128 t-d64-old t-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run77 ab > $R/run77/console-ab.txt 2>&1
rm -f $R/run77/ab/summary.txt
python3 bench/ab-summary.py $R/run77/ab/ab.txt > $R/run77/summary-means.txt 2>&1
grep -E "vs " $R/run77/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
