#!/usr/bin/env bash
# device call 2 of run 80 (same warm machine, carry .fa4/b and .device/run80): FA4 installed,
# the table of the new shipping sets (.device/run80: X = this build at both head dims) against
# the baselines (ten calls per pair of events, bench/anchors_h200.py's default since run 74).
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; tail -3 $R/install.txt
mkdir -p $R/run80/table
echo "== run 80 table"
OUT=$R/run80/table bash bench/device-ab.sh run80 table > $R/run80/console-table.txt 2>&1
grep -E "TFLOP|GB/s" $R/run80/console-table.txt | head -70
tar czf $R/run80/table-logs.tgz -C $R/run80 table/fwd table/train 2>/dev/null && rm -rf $R/run80/table/fwd $R/run80/table/train
