# Sourced by the bench/device-*.sh scripts on the GPU machine: the GPU's
# name and clocks, the runtime-only build of flamia-run (no compiler: the
# artifacts were compiled on the compiler machine), and step(), which runs
# one command into $OUT/NAME.log and prints its verdict lines.
# Set OUT before sourcing; sets RUN (flamia-run) and counts failed steps in
# $fails. STEP_GREP overrides the lines step() prints.
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
fails=0
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia-run > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
RUN=$B/bin/flamia-run
STEP_GREP=${STEP_GREP:-"FAIL|^PASS|checks failed|ERROR SUMMARY|RACECHECK SUMMARY|O vs|d[QKV] vs|L3 |S recomputed"}
step() { # name, command...: a failed command counts in $fails
  local name=$1; shift
  log "$name: $*"
  local t0=$(date +%s%N)
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -E "$STEP_GREP" "$OUT/$name.log" | head -24 | tee -a "$OUT/summary.txt"
  log "$name: rc=$rc (${ms} ms)"
  [ $rc = 0 ] || fails=$((fails + 1))
  return $rc
}
# Nsight Compute: the sections and metrics runs 50 and 52 compare FLAMIA's
# kernels and FA4's with (bench/ncu-summary.py reads them), and the lines
# step() prints of such a log.
NCU_SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
# (Sections and metrics in one pass: one replay series per kernel.)
NCU_METRICS="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_tensor_op.*_cycles_active\.avg\.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__inst_executed.sum,smsp__inst_executed_pipe_xu.sum"
NCU_GREP="stalled|pipe_tensor|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Executed Ipc|Dynamic Shared|Block Size|Grid Size|inst_executed|==PROF==|Context [0-9]+, Stream|rc="
# Byte for byte against the old build: each SET and SET-old (in $DIR) on
# WORKLOAD with 4 query and 2 key-value heads, normal and outlier inputs,
# --check --dump (t-* sets with --backward); one "bytes SET INPUT FILE:
# identical|DIFFER" line per dumped array, then the dumps are removed.
compare_dumps() { # workload set...
  local workload=$1 set inp flag bw v f
  shift
  for set in "$@"; do
    bw=; case $set in t-*) bw=--backward;; esac
    for inp in normal outliers; do
      flag=; [ $inp = outliers ] && flag=--outliers
      for v in $set $set-old; do
        step dump-$v-$inp $RUN --artifacts $DIR/$v $bw --workload $workload --heads 4 --kv-heads 2 $flag --check --dump $OUT/dump-$v-$inp
      done
      for f in $(cd $OUT/dump-$set-$inp && ls *.npy); do
        if cmp -s $OUT/dump-$set-$inp/$f $OUT/dump-$set-old-$inp/$f; then log "bytes $set $inp $f: identical"; else log "bytes $set $inp $f: DIFFER"; fi
      done
    done
  done
  rm -rf "$OUT"/dump-*/
}
