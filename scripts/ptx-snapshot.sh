#!/usr/bin/env bash
# Writes the PTX (and manifest) of every shipped kernel configuration into
# OUT_DIR, one folder per configuration, and OUT_DIR/SHA256SUMS over them.
# A refactoring of the lowering must leave the PTX byte-identical: take a
# snapshot before, one after, and compare them with
#   scripts/ptx-snapshot.sh --compare BEFORE_DIR AFTER_DIR
# (exit 0 only if every PTX file is byte-identical; files that differ only in
# the order of the same instructions are reported as such).
# Usage: scripts/ptx-snapshot.sh OUT_DIR [BUILD_DIR]
set -euo pipefail

# Instructions of a PTX file with register numbers erased, sorted: equal for
# two files whose instructions are the same and only in another order.
instructions() { sed -E 's/%(r|rd|f|p|rs|h)[0-9]+/%\1N/g' "$1" | sort; }

if [ "${1:-}" = "--compare" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --compare BEFORE_DIR AFTER_DIR" >&2; exit 2; }
  before=$2 after=$3
  total=0 same=0 reordered=0
  while read -r sum file; do
    total=$((total + 1))
    if [ -f "$after/$file" ] && cmp -s "$before/$file" "$after/$file"; then
      same=$((same + 1))
    elif [ -f "$after/$file" ] &&
         cmp -s <(instructions "$before/$file") <(instructions "$after/$file"); then
      reordered=$((reordered + 1))
      echo "REORDERED (same instructions, another order): $file"
    else
      echo "DIFFERS: $file"
    fi
  done < <(grep '\.ptx$' "$before/SHA256SUMS")
  extra=$(comm -13 <(grep -o '[^ ]*\.ptx$' "$before/SHA256SUMS" | sort) \
                   <(grep -o '[^ ]*\.ptx$' "$after/SHA256SUMS" | sort) || true)
  [ -z "$extra" ] || { echo "only in $after:"; echo "$extra"; }
  echo "$same of $total PTX files byte-identical, $reordered the same instructions in another order, $((total - same - reordered)) different"
  [ "$same" -eq "$total" ] && [ -z "$extra" ]
  exit
fi

OUT=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
BUILD=${2:-build}
COMPILE="$BUILD/bin/flamia-compile"
[ -x "$COMPILE" ] || { echo "missing $COMPILE: build it first" >&2; exit 1; }
mkdir -p "$OUT"

configs=()
for target in sm_90a sm_100a; do
  for d in 64 128; do
    for mask in causal full; do
      for layout in single varlen; do
        for heads in mha gqa; do
          configs+=("$target $d $mask $layout $heads")
        done
      done
    done
  done
done
# Variants past the grid: the serial sm_90a consumer, sm_100a's scale tiles
# written by the sm_90a quantizer, a larger safe block, many heads.
configs+=("sm_90a 128 causal varlen mha --overlap-softmax=false"
          "sm_90a 128 full single mha --overlap-softmax=false"
          "sm_90a 128 causal varlen mha --scale-tiles"
          "sm_90a 64 causal varlen gqa --scale-tiles"
          "sm_90a 128 causal varlen mha --safe-block=512"
          "sm_90a 128 causal varlen h16"
          "sm_100a 128 causal varlen h16")
# Training steps (the forward and backward kernels): both head dims, causal
# and not, GQA, the recipes with second copies.
for d in 64 128; do
  configs+=("sm_90a $d causal varlen gqa --backward"
            "sm_90a $d full varlen mha --backward")
done
configs+=("sm_90a 128 causal varlen gqa --backward --recipe=mxfp8-strict"
          "sm_90a 64 causal varlen gqa --backward --recipe=nvfp4-mixed")
# sm_100a: training steps of mxfp8 and nvfp4-mixed, and nvfp4-mixed's
# forward.
configs+=("sm_100a 128 causal varlen gqa --backward"
          "sm_100a 64 full varlen mha --backward"
          "sm_100a 128 causal varlen gqa --recipe=nvfp4-mixed"
          "sm_100a 64 full varlen mha --recipe=nvfp4-mixed"
          "sm_100a 128 causal varlen gqa --backward --recipe=nvfp4-mixed"
          "sm_100a 64 causal varlen mha --backward --recipe=nvfp4-mixed")

for c in "${configs[@]}"; do
  read -r target d mask layout heads extra <<<"$c"
  args=(--target "$target" --head-dim "$d" --ptx-only)
  [ "$mask" = causal ] && args+=(--causal)
  [ "$layout" = varlen ] && args+=(--varlen)
  case $heads in
    mha) args+=(--heads 4) ;;
    gqa) args+=(--heads 4 --kv-heads 1) ;;
    h16) args+=(--heads 16 --kv-heads 4) ;;
  esac
  # shellcheck disable=SC2206 # the extra flags split on spaces
  [ -n "${extra:-}" ] && args+=($extra)
  name="$target-d$d-$mask-$layout-$heads${extra:+-${extra//[^a-z0-9]/}}"
  "$COMPILE" "${args[@]}" -o "$OUT/$name" >/dev/null 2>"$OUT/$name.log" ||
    { echo "flamia-compile ${args[*]} failed:" >&2; cat "$OUT/$name.log" >&2; exit 1; }
  rm -f "$OUT/$name.log"
done
(cd "$OUT" && find . -name '*.ptx' -o -name manifest.json | sort | xargs sha256sum > SHA256SUMS)
echo "$(grep -c '\.ptx$' "$OUT/SHA256SUMS") PTX files from ${#configs[@]} configurations in $OUT"
