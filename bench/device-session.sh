#!/usr/bin/env bash
# On the GPU machine: the calls of one same-session A/B (runs 78 and 80),
# for the sets bench/compile-ab-artifacts.sh NAME put in .device/NAME (X and
# X-old), with a short summary on stdout and the logs under $OUT/NAME.
#   call1 (carry .fa4/a and .device/NAME): FA4's first part staged for call2
#     (FA4_STAGE=0 skips it; then carry .device/NAME only), every check of
#     bench/device-ab.sh checks, the adversarial softmax scales (its part
#     scales), then the A/B of the forward and training sets on fixed2k and
#     lognormal1k (CALL1_SETS names other sets: with SET-old-old sets next
#     to SET-old, two steps are timed in one A/B, run 81);
#   call2 (right after call1, on the same warm machine; carry .fa4/b and
#     .device/NAME): FA4 installed, the table of X against the baselines;
#   short (carry .device/NAME), for a call with little device time: the
#     checks without the 16-head check, the byte comparison and the
#     sanitizers (CHECKS_QUICK=1), the scales, then the A/B of the forward
#     sets on fixed2k, lognormal1k and the single document (SHORT_SETS
#     names other sets).
# Usage: bench/device-session.sh NAME call1|call2|short
set -u
NAME=${1:?usage: $0 NAME call1|call2|short}
CALL=${2:?call1, call2 or short}
R=$OUT/$NAME
mkdir -p "$R"
ab() { # sets workloads
  mkdir -p "$R/ab"
  OUT=$R/ab AB_SETS="$1" AB_WORKLOADS="$2" bash bench/device-ab.sh "$NAME" ab > "$R/console-ab.txt" 2>&1
  rm -f "$R/ab/summary.txt"
  python3 bench/ab-summary.py "$R/ab/ab.txt" > "$R/summary-means.txt" 2>&1
  grep -E "vs " "$R/summary-means.txt" | awk '{print $1,$2,$3,$4,$5,$NF}'
}
case $CALL in
call1|short)
  if [ "$CALL" = call1 ] && [ "${FA4_STAGE:-1}" != 0 ]; then
    bash .fa4/a/install-fa4.sh stage > "$R/stage.txt" 2>&1; tail -2 "$R/stage.txt"
  fi
  [ "$CALL" = short ] && export CHECKS_QUICK=1
  OUT=$R/checks bash bench/device-ab.sh "$NAME" checks > "$R/console-checks.txt" 2>&1
  OUT=$R/checks bash bench/device-ab.sh "$NAME" scales > "$R/console-adversarial.txt" 2>&1
  echo "== checks"
  grep -E "FAIL|failed steps|ERROR SUMMARY|RACECHECK SUMMARY" "$R/console-checks.txt" | sed 's/=== *//' | sort | uniq -c | head -20
  echo "identical: $(grep -c ': identical' "$R/console-checks.txt") differ: $(grep -c 'DIFFER' "$R/console-checks.txt")"
  grep -hE "O vs" "$R/console-checks.txt" | head -4
  echo "== adversarial"
  grep -E "scale|O vs|LSE vs|FAIL|PASS|rc=" "$R/console-adversarial.txt" | head -60
  tar czf "$R/checks-logs.tgz" -C "$R" checks && rm -rf "$R/checks"
  if [ "$CALL" = call1 ]; then
    ab "${CALL1_SETS:-f-d128-old f-d128 f-d64-old f-d64 t-d128-old t-d128 t-d64-old t-d64}" "fixed2k lognormal1k"
  else
    ab "${SHORT_SETS:-f-d128-old f-d128 f-d64-old f-d64}" "fixed2k lognormal1k single"
  fi
  ;;
call2)
  source .fa4/b/install-fa4.sh install > "$R/install.txt" 2>&1; tail -3 "$R/install.txt"
  mkdir -p "$R/table"
  echo "== table"
  OUT=$R/table bash bench/device-ab.sh "$NAME" table > "$R/console-table.txt" 2>&1
  grep -E "TFLOP|GB/s" "$R/console-table.txt" | head -70
  tar czf "$R/table-logs.tgz" -C "$R" table/fwd table/train 2>/dev/null && rm -rf "$R/table/fwd" "$R/table/train"
  ;;
*)
  echo "device-session: unknown call '$CALL' (call1, call2 or short)" >&2
  exit 2
  ;;
esac
