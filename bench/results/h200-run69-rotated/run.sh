#!/usr/bin/env bash
# device call of run 69: the rotated D = 64 backward loops (run69 sets)
# checked against 79a29c8 (t-d64-old), the A/B, and the source counters
set -u
R=$OUT
mkdir -p $R/checks $R/ab $R/src
OUT=$R/checks bash bench/device-ab.sh run69 checks > $R/console-checks.txt 2>&1
(OUT=$R/checks; DIR=.device/run69; source bench/device-common.sh > /dev/null
 SMALL=docs:300,1000,77,129,0,1,2048,640
 step check-nv-d64 $RUN --artifacts $DIR/nv-d64 --backward --workload $SMALL --heads 4 --kv-heads 2 --check --leakcheck --l3
 step check-t-d64-16h $RUN --artifacts $DIR/t-d64 --backward --workload lognormal1k --tokens 8192 --heads 16 --check
 log "failed steps: $fails") >> $R/console-checks.txt 2>&1
echo "== checks"; grep -E "FAIL|DIFFER|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" $R/console-checks.txt | sed 's/=== *//' | sort | uniq -c | head -20
echo "identical: $(grep -c ': identical' $R/console-checks.txt)"
tar czf $R/checks-logs.tgz -C $R checks && rm -rf $R/checks
OUT=$R/ab AB_SETS="t-d64-old t-d64 t-d128-old t-d128" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run69 ab > $R/console-ab.txt 2>&1
python3 bench/ab-summary.py $R/ab/ab.txt > $R/ab/summary-means.txt 2>&1
grep -E "flamia_attention_d|backward" $R/ab/summary-means.txt | awk '{print $1,$2,$3,$4,$NF}'
OUT=$R/src PROFILE_SETS="t-d64-old t-d64" bash bench/device-ab.sh run69 source > $R/console-source.txt 2>&1
cat $R/src/summary.txt | grep -v "^==" | head -20
tar czf $R/src.tgz -C $R src && rm -rf $R/src
