#!/usr/bin/env bash
# On the GPU machine: FLAMIA's quantization + forward on the standard
# workloads (docs/design.md section 6) and, in the same run, PyTorch's baselines
# (anchors_h200.py: cuDNN and flash SDPA, varlen_attn, FlexAttention, the
# matmul and copy ceilings). Documents of the lognormal workloads are the
# ones anchors_h200.py draws (random.Random(0)), so both see the same batch.
# Usage: bench/bench.sh ARTIFACTS_D128 ARTIFACTS_D64 [ANCHORS.py]
# Training steps (artifacts compiled with --backward): FLAMIA_RUN_ARGS=--backward
# times forward, backward and both (with their quantization kernels) and
# each kernel; ANCHORS_BWD=1 adds FA4's backward alone to the baselines.
set -uo pipefail
A128=$1; A64=$2; ANCHORS=${3:-}
OUT=${OUT:-/tmp/out}
RUN=${FLAMIA_RUN:-/tmp/flamia-build/bin/flamia-run}
ITERS=${ITERS:-20}
docs=$(python3 - <<'PY'
import math, random
rng = random.Random(0)
def lognormal(total):
    out = []
    while sum(out) < total:
        out.append(max(64, min(total, int(rng.lognormvariate(math.log(1024), 1.0)))))
    out[-1] -= sum(out) - total
    return [l for l in out if l > 0]
print(",".join(map(str, lognormal(32768))), ",".join(map(str, lognormal(32768))))
PY
)
LN128=${docs% *}; LN64=${docs#* }
bench() { # tag artifacts workload args...
  local tag=$1 art=$2; shift 2
  echo "== flamia $tag"
  $RUN --artifacts "$art" "$@" ${FLAMIA_RUN_ARGS:-} --bench "$ITERS" > "$OUT/bench-$tag.log" 2>&1
  echo "rc=$?"; grep -iE "TFLOP|GB/s|TB/s|median|quantiz|forward|kernel " "$OUT/bench-$tag.log" | head -16
}
bench single16k-d128 "$A128" --workload single --tokens 16384
bench fixed2k-d128 "$A128" --workload fixed2k --tokens 32768
bench lognormal1k-d128 "$A128" --workload "docs:$LN128"
bench lognormal1k-d64 "$A64" --workload "docs:$LN64"
bench single32k-d128 "$A128" --workload single --tokens 32768
if [ -n "$ANCHORS" ]; then
  echo "== anchors"
  python3 "$ANCHORS" > "$OUT/anchors.log" 2>&1
  echo "rc=$?"; tail -40 "$OUT/anchors.log"
fi
