#!/usr/bin/env bash
# device call 1b of run 76 (same warm machine, carry .device/run76; the command as it was
# passed to the device, one line there): the D = 64 forward's A/B repeated (f-d64 and -old,
# two pairs a round) and Nsight Compute's source counters of both on fixed2k. The per-
# instruction CSVs did not come back (too many files under $OUT); the totals are in
# ab-d64-repeat/console-source.txt.
R=$OUT; mkdir -p $R/run76b/ab $R/run76b/source; OUT=$R/run76b/ab AB_SETS="f-d64-old f-d64 f-d64-old f-d64" AB_WORKLOADS="fixed2k lognormal1k" bash bench/device-ab.sh run76 ab > $R/run76b/console-ab.txt 2>&1; python3 bench/ab-summary.py $R/run76b/ab/ab.txt > $R/run76b/summary-means.txt 2>&1; grep -E "vs " $R/run76b/summary-means.txt | awk '{print $1,$2,$3,$4,$5,$NF}'; OUT=$R/run76b/source PROFILE_SETS="f-d64-old f-d64" bash bench/device-ab.sh run76 source > $R/run76b/console-source.txt 2>&1; tail -n 20 $R/run76b/console-source.txt
