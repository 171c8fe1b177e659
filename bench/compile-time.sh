#!/usr/bin/env bash
# Compile time of flamia-compile, spec to cubin, pinned to one core (taskset -c 0;
# ptxas inherits the pin). The 16 configurations: target sm_100a / sm_90a x head
# dim 64 / 128 x causal / non-causal x heads 16 (kv 16) / heads 8 (kv 2), each
# REPS times, round robin. One line per sample:
#   target D mask heads kv_heads rep spec_to_ptx_s wall_s user_s sys_s load1
# spec_to_ptx_s is the tool's own timer ("compile time (spec to PTX)": graph IR
# to PTX, no ptxas, no process start); wall_s is the whole command (ptxas on
# both kernels and the manifest included); user_s + sys_s include ptxas.
# Usage: bench/compile-time.sh > samples.txt   (B=path/to/flamia-compile, REPS=5)
# TARGETS (default "sm_100a sm_90a") and EXTRA (more flamia-compile flags,
# e.g. EXTRA=--backward for the training step's five kernels) narrow or
# extend the set.
B=${B:-build/bin/flamia-compile}
REPS=${REPS:-5}
TARGETS=${TARGETS:-sm_100a sm_90a}
EXTRA=${EXTRA:-}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
W=${TMPDIR:-/tmp}/flamia-compile-time
mkdir -p "$W"
for rep in $(seq "$REPS"); do
for t in $TARGETS; do for d in 64 128; do for c in causal noncausal; do for h in "16 16" "8 2"; do
  set -- $h; H=$1; KV=$2
  cf=""; [ $c = causal ] && cf=--causal
  dir=$W/$t-d$d-$c-h$H; rm -rf "$dir"
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s%N)
  o=$( { /usr/bin/time -f "TIME %e %U %S" taskset -c 0 "$B" --target $t --head-dim $d $cf --varlen \
         --heads $H --kv-heads $KV $EXTRA --ptxas "$PTXAS" -o "$dir"; } 2>&1 )
  t1=$(date +%s%N)
  spec=$(echo "$o" | sed -n 's/.*spec to PTX): \([0-9.]*\) s.*/\1/p')
  tm=$(echo "$o" | grep '^TIME' | cut -d' ' -f3-)
  echo "$t $d $c $H $KV $rep $spec $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.3f", (b-a)/1e9}') $tm $load"
done; done; done; done; done
