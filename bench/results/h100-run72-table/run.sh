#!/usr/bin/env bash
# device call 2 of runs 71/72: run 72, the table again (run 68 repeated): FA4 installed (part 2), then the table of the
# shipped sets (run 67's build, PTX identical to 79a29c8) against the baselines
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; cat $R/install.txt
OUT=$R/table bash bench/device-ab.sh tbl68 table > $R/console-table.txt 2>&1
grep -E "^== |TFLOP|ms " $R/console-table.txt | grep -v "^== flamia" | tail -80
tar czf $R/table-logs.tgz -C $R table && rm -rf $R/table/fwd $R/table/train
