#!/usr/bin/env bash
# The first thing to run on a Blackwell GPU (B200/B300, sm_100a): the
# validation matrix that settles what FLAMIA's static checks (ptxas, FileCheck,
# descriptor unit tests) cannot. No Blackwell GPU was ever lent to this
# project: every sm_100a kernel here has been assembled, never run.
#
# Usage, from the repository root on the Blackwell machine (LLVM/MLIR 22 and
# CUDA 13 installed, `make build` done):
#   bench/blackwell-bringup.sh [quick|full]
# Logs go to $OUT (default out/blackwell-bringup); summary.txt lists every
# step with its expected and actual result. Exit status: the number of steps
# whose result differs from the expectation (0 = all as expected).
#
# Each step names the question it settles (docs/lowering.md, "sm_100a: what
# only a Blackwell run can settle"):
#   selftest        the driver, the runtime's parameter packing, dynamic smem
#   fwd-*, bwd-*    gradients and O/LSE against the CPU reference; every
#                   quantized copy and every scale-factor tile (both
#                   orientations) bit for bit where the MMA reads it
#   *-outliers      non-uniform scales per 32-block (a wrong scale-factor ID,
#                   tensor-memory scale column or b_k_block shows up here,
#                   not with near-uniform random inputs)
#   *-ragged        documents that end inside a tile, an empty document, a
#                   single token, T not a multiple of 128: TMA out-of-bounds
#                   fills and the mbarrier byte counts (a wrong expect_tx
#                   count hangs: every step runs under `timeout`)
#   *-leak          L1/L2 bit for bit, NaN documents included: the zeroed V /
#                   K / dO / Q_tb rows past a document end, k_valid, the
#                   scale-factor slots past a document end
#   *-d64           D = 64: scale columns 2-3 of the tcgen05.cp copies
#   nvfp4-*         recipe nvfp4-mixed's forward: S = Q K^T by kind::mxf4nvf4
#                   on packed E2M1 payloads with UE4M3 scale chunks
#   nvfp4-bwd-*     its backward: S, dP, S^T and dP^T by kind::mxf4nvf4 (the
#                   N = 64 B scale chunk shifted by 2 columns for odd query
#                   tiles, as for E4M3), dQ, dV, dK on the E4M3 token blocks;
#                   strict by construction, so L3 is expected to pass
#   p-smem          the forward's P V with P staged in shared memory
#                   (--p-in-smem) against P read from tensor memory: the
#                   same O bit for bit (the least-used block-scaled MMA form,
#                   A in tensor memory, against the one CUTLASS wraps)
#   sanitize-*      compute-sanitizer memcheck and racecheck (full mode)
set -uo pipefail
MODE=${1:-quick}
OUT=${OUT:-$PWD/out/blackwell-bringup}
ART=$OUT/artifacts
mkdir -p "$OUT" "$ART"
: > "$OUT/summary.txt"
log() { echo "$*" | tee -a "$OUT/summary.txt"; }
COMPILE=${FLAMIA_COMPILE:-$PWD/build/bin/flamia-compile}
RUN=${FLAMIA_RUN:-$PWD/build/bin/flamia-run}
STEP_TIMEOUT=${STEP_TIMEOUT:-600}
for tool in "$COMPILE" "$RUN"; do
  [ -x "$tool" ] || { echo "missing $tool: run 'make build' first (or set FLAMIA_COMPILE/FLAMIA_RUN)"; exit 2; }
done
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv | tee "$OUT/gpu.txt"
if ! grep -qE ', 10\.[0-9]+,' "$OUT/gpu.txt"; then
  echo "this is not a compute-capability 10.x (sm_100) GPU: the sm_100a cubins will not load"
  exit 2
fi

unexpected=0
# step NAME EXPECT(pass|fail) command...: runs under timeout, compares the
# exit status with the expectation (flamia-run exits 0 only if every check
# passes; 124 = timed out, i.e. a hang).
step() {
  local name=$1 expect=$2; shift 2
  local t0=$(date +%s)
  timeout "$STEP_TIMEOUT" "$@" > "$OUT/$name.log" 2>&1
  local rc=$? got
  if [ $rc -eq 0 ]; then got=pass; elif [ $rc -eq 124 ]; then got=hang; else got=fail; fi
  local verdict=ok
  if [ "$got" != "$expect" ]; then verdict=UNEXPECTED; unexpected=$((unexpected + 1)); fi
  log "$(printf '%-22s expected %-4s got %-4s rc=%-3s %4ss  %s' "$name" "$expect" "$got" "$rc" "$(( $(date +%s) - t0 ))" "$verdict")"
  [ "$verdict" = ok ] || tail -25 "$OUT/$name.log"
}
compile() { # NAME flags...
  local name=$1; shift
  step "compile-$name" pass "$COMPILE" --target sm_100a --varlen "$@" -o "$ART/$name"
}

log "== FLAMIA sm_100a bring-up ($MODE), $(date -u +%Y-%m-%dT%H:%MZ)"
step selftest pass "$RUN" --selftest

# The kernel sets: forward-only and training steps, both head dims, causal
# and not, MHA and GQA, runtime head counts.
compile fwd-d128 --head-dim 128 --heads 4 --kv-heads 2 --causal
compile fwd-d128-psmem --head-dim 128 --heads 4 --kv-heads 2 --causal --p-in-smem
compile fwd-d64 --head-dim 64 --heads 2
compile bwd-d128 --head-dim 128 --heads 4 --kv-heads 2 --causal --backward
compile bwd-d128-full --head-dim 128 --heads 2 --backward --grad-dtype f32
compile bwd-d64 --head-dim 64 --heads 2 --causal --backward
compile bwd-rh-d128 --head-dim 128 --runtime-heads --causal --backward
compile nvfp4-d128 --recipe nvfp4-mixed --head-dim 128 --heads 4 --kv-heads 2 --causal
compile nvfp4-d64 --recipe nvfp4-mixed --head-dim 64 --heads 2
compile nvfp4-bwd-d128 --recipe nvfp4-mixed --head-dim 128 --heads 4 --kv-heads 2 --causal --backward
compile nvfp4-bwd-d64 --recipe nvfp4-mixed --head-dim 64 --heads 2 --causal --backward

RAGGED=docs:300,1000,77,129,0,1     # T = 1507: ends inside tiles, empty, single
# Forward: reference, copies and scale tiles bit for bit, L1/L2.
step fwd-check        pass "$RUN" --artifacts "$ART/fwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --check
step fwd-outliers     pass "$RUN" --artifacts "$ART/fwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers
step fwd-ragged       pass "$RUN" --artifacts "$ART/fwd-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --check
step fwd-leak         pass "$RUN" --artifacts "$ART/fwd-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --leakcheck
step fwd-d64          pass "$RUN" --artifacts "$ART/fwd-d64" --heads 2 --workload "$RAGGED" --check --leakcheck
# P from tensor memory vs P staged in shared memory: both pass the same
# checks; --dump writes O of each for a bit-for-bit comparison below.
step p-tmem           pass "$RUN" --artifacts "$ART/fwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers --dump "$OUT/dump-p-tmem"
step p-smem           pass "$RUN" --artifacts "$ART/fwd-d128-psmem" --heads 4 --kv-heads 2 --workload docs:512,700,33 --check --outliers --dump "$OUT/dump-p-smem"
if [ -f "$OUT/dump-p-tmem/o.npy" ] && [ -f "$OUT/dump-p-smem/o.npy" ]; then
  step p-same-o pass cmp "$OUT/dump-p-tmem/o.npy" "$OUT/dump-p-smem/o.npy"
fi
# nvfp4-mixed's forward: kind::mxf4nvf4 with scale_vec::4X on the packed E2M1
# payloads (the nibble order, the UE4M3 scale chunk per K = 64 step, the
# packed-FP4 descriptors), the copies and tiles bit for bit, L1/L2.
step nvfp4-check      pass "$RUN" --artifacts "$ART/nvfp4-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --check --outliers
step nvfp4-leak       pass "$RUN" --artifacts "$ART/nvfp4-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --leakcheck
step nvfp4-d64        pass "$RUN" --artifacts "$ART/nvfp4-d64" --heads 2 --workload "$RAGGED" --check --leakcheck
# nvfp4-mixed's backward: every copy and tile, the gradients, L2 and L3.
step nvfp4-bwd-check  pass "$RUN" --artifacts "$ART/nvfp4-bwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step nvfp4-bwd-ragged pass "$RUN" --artifacts "$ART/nvfp4-bwd-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --backward --check --leakcheck --l3
step nvfp4-bwd-d64    pass "$RUN" --artifacts "$ART/nvfp4-bwd-d64" --heads 2 --workload "$RAGGED" --backward --check --leakcheck --l3
# Backward: gradients vs the reference, dO's copies and D bit for bit, L2 on
# every gradient with NaN documents.
step bwd-check        pass "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --backward --check
step bwd-outliers     pass "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700,33 --backward --check --outliers
step bwd-ragged       pass "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --backward --check
step bwd-leak         pass "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload "$RAGGED" --backward --leakcheck
step bwd-full-f32     pass "$RUN" --artifacts "$ART/bwd-d128-full" --heads 2 --workload docs:600,129,64 --backward --check --leakcheck
step bwd-d64          pass "$RUN" --artifacts "$ART/bwd-d64" --heads 2 --workload "$RAGGED" --backward --check --leakcheck
step bwd-runtime-heads pass "$RUN" --artifacts "$ART/bwd-rh-d128" --heads 8 --kv-heads 2 --workload docs:700,300 --backward --check
# mxfp8 is not strictly causal within a 32-token block: L3 is expected to
# fail (the checks must be able to fail on this GPU too).
step bwd-l3-mxfp8     fail "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload docs:512,700 --backward --leakcheck --l3

if [ "$MODE" = full ]; then
  for wl in fixed2k lognormal1k single; do
    step "bwd-h16-$wl" pass "$RUN" --artifacts "$ART/bwd-rh-d128" --heads 16 --workload $wl --tokens 8192 --backward --check --leakcheck
  done
  step sanitize-mem  pass compute-sanitizer --error-exitcode 1 --tool memcheck "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  step sanitize-race pass compute-sanitizer --error-exitcode 1 --tool racecheck "$RUN" --artifacts "$ART/bwd-d128" --heads 4 --kv-heads 2 --workload docs:300,200,77 --backward --sanitize-friendly
  # First timings (not a benchmark: bench/bench.sh with baselines is).
  step time-fwd-bwd pass "$RUN" --artifacts "$ART/bwd-rh-d128" --heads 16 --workload lognormal1k --tokens 32768 --backward --bench 20
fi

log "== $unexpected step(s) not as expected; logs in $OUT"
exit "$unexpected"
