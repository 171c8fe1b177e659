#!/usr/bin/env bash
# device call 1 of runs 74/75 (carry .fa4/a and .device/run75): FA4's first part staged for
# run 74's next call, then run 75: the D = 64 forward with the consumer warpgroups taking turns
# (flamia-tile ping-pong=true; sets .device/run75, X = turns, X-old = this build's default),
# checked and A/B-timed.
set -u
R=$OUT
bash .fa4/a/install-fa4.sh stage
mkdir -p $R/run75/checks $R/run75/ab
(OUT=$R/run75/checks; DIR=.device/run75; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 step check-f-d64 $RUN --artifacts $DIR/f-d64 --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 step check-fst-d64 $RUN --artifacts $DIR/fst-d64 --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck
 step check-t-d64 $RUN --artifacts $DIR/t-d64 --backward --workload $SMALL --heads 4 --kv-heads 4 --check --leakcheck
 compare_dumps $SMALL f-d64 fst-d64 t-d64
 step racecheck-f-d64 compute-sanitizer --tool racecheck $RUN --artifacts $DIR/f-d64 --workload docs:200,77 --heads 2 --check --sanitize-friendly
 log "failed steps: $fails") > $R/run75/console-checks.txt 2>&1
echo "== run 75 checks"; grep -E "FAIL|DIFFER|failed steps|RACECHECK SUMMARY" $R/run75/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/run75/console-checks.txt)"
tar czf $R/run75/checks-logs.tgz -C $R/run75 checks && rm -rf $R/run75/checks
OUT=$R/run75/ab AB_SETS="f-d64-old f-d64 t-d64-old t-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run75 ab > $R/run75/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/run75/ab/ab.txt > $R/run75/summary-means.txt 2>&1
grep -E "vs " $R/run75/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'
