#!/usr/bin/env bash
# On the GPU machine: train the study's variants (docs/training.md) one after
# the other with the same seed, batches and steps, logs to $OUT.
#   bench/train/device-train.sh "flamia bf16" [extra train.py arguments]
# Needs, from the compiler machine (docs/training.md, "Repeat it"):
#   .device/train-data   bench/train/prepare_data.py's output ($TRAIN_DATA)
#   .device/py-kernels ($FLAMIA_KERNEL_DIR)  python -m flamia.precompile --head-dim 128 --both
#                        (one set serves the model's 6 query / 2 key-value heads)
# FlashAttention-4 is used for `bf16` when flash_attn.cute imports
# (PYTHONPATH=/tmp/fa4-site after ../shared/baselines' install-fa4.sh);
# otherwise PyTorch's varlen_attn. The implementation is in each log.
set -uo pipefail
OUT=${OUT:-$PWD/out/train}
mkdir -p "$OUT"
B=${FLAMIA_GPU_BUILD:-$PWD/build-gpu}
VARIANTS=${1:?usage: device-train.sh "VARIANT ..." [train.py arguments]}
shift
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt"
python -c "import torch; print('torch', torch.__version__)" >> "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLAMIA_ENABLE_COMPILER=OFF > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
fi
ninja -C $B flamia_reference flamia_runtime > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
DATA=${TRAIN_DATA:-$PWD/.device/train-data}
export FLAMIA_LIBRARY_DIR=$B/lib FLAMIA_KERNEL_DIR=${FLAMIA_KERNEL_DIR:-$PWD/.device/py-kernels}
export FLAMIA_CACHE_DIR=$OUT/cache PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
status=0
for v in $VARIANTS; do
  t0=$(date +%s)
  python bench/train/train.py --data "$DATA" --attention "$v" \
    --log "$OUT/$v.jsonl" "$@" > "$OUT/$v.out" 2>&1
  rc=$?
  echo "$v rc=$rc $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
  [ $rc = 0 ] || { tail -20 "$OUT/$v.out"; status=1; }
  grep '"summary"' "$OUT/$v.jsonl" | cut -c1-900
done
exit $status
