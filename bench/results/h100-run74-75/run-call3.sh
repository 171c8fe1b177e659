#!/usr/bin/env bash
# device call 3 of run 74 (same warm machine, carry .fa4/b): the anchors again with ten calls
# per pair of events (ANCHORS_BATCH=10); compared with call 2's one-call anchors locally.
set -u
R=$OUT
source .fa4/b/install-fa4.sh install > $R/install.txt 2>&1; cat $R/install.txt
mkdir -p $R/batch10
OUT=$R/batch10 ANCHORS_BATCH=10 ANCHORS_BWD=1 python3 bench/anchors_h200.py > $R/batch10/anchors.log 2>&1
echo "== batch 10 rc=$?"
grep -vi warn $R/batch10/anchors.log | grep -E "fwd|bwd|ceiling" | head -60
