#!/usr/bin/env bash
# Static resources of the sm_100a kernel sets (no GPU needed): for each
# configuration, every kernel's registers and spill bytes (ptxas -v, as
# flamia-compile reports them) and its shared memory and tensor-memory
# columns (manifest.json). The numbers of docs/performance.md's "sm_100a
# forward of recipe nvfp4-mixed" and "sm_100a backward: resources" sections
# (nvfp4-train-*: the nvfp4-mixed training step).
# Usage: bench/sm100-resources.sh > bench/results/sm100-resources-DATE.txt
#        (B=path/to/flamia-compile, PTXAS=path/to/ptxas)
set -euo pipefail
B=${B:-build/bin/flamia-compile}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "# config kernel registers spill_bytes smem_bytes tmem_columns"
run() { # name, flags...
  local name=$1; shift
  "$B" --target sm_100a --varlen "$@" --ptxas "$PTXAS" -o "$W/$name" > /dev/null 2>&1
  python3 - "$W/$name/manifest.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for k in m["kernels"]:
    print(sys.argv[2], k["name"], k.get("registers"), k.get("spill_bytes"),
          k.get("smem_bytes"), k.get("tmem_columns"))
PY
}
for d in 128 64; do
  for mask in causal noncausal; do
    cf=(); [ $mask = causal ] && cf=(--causal)
    for h in "16 16" "8 2"; do
      set -- $h
      run "train-d$d-$mask-h$1kv$2" --head-dim $d "${cf[@]}" --heads $1 --kv-heads $2 --backward
      run "nvfp4-d$d-$mask-h$1kv$2" --recipe nvfp4-mixed --head-dim $d "${cf[@]}" --heads $1 --kv-heads $2
      run "nvfp4-train-d$d-$mask-h$1kv$2" --recipe nvfp4-mixed --head-dim $d "${cf[@]}" --heads $1 --kv-heads $2 --backward
    done
  done
  run "train-d$d-runtime-heads" --head-dim $d --causal --runtime-heads --backward
  run "nvfp4-d$d-runtime-heads" --recipe nvfp4-mixed --head-dim $d --causal --runtime-heads
  run "nvfp4-train-d$d-runtime-heads" --recipe nvfp4-mixed --head-dim $d --causal --runtime-heads --backward
  run "nvfp4-d$d-p-in-smem" --recipe nvfp4-mixed --head-dim $d --heads 16 --causal --p-in-smem
  run "fwd-d$d-p-in-smem" --head-dim $d --heads 16 --causal --p-in-smem
done
