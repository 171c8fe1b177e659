#!/usr/bin/env bash
# Prints the path of the ptxas FLAMIA uses: $FLAMIA_PTXAS if set, else
# /usr/local/cuda/bin/ptxas, else the first ptxas on $PATH. Exit 1 if none.
if [ -n "${FLAMIA_PTXAS:-}" ]; then
  [ -x "$FLAMIA_PTXAS" ] && { echo "$FLAMIA_PTXAS"; exit 0; }
  echo "find-ptxas: FLAMIA_PTXAS=$FLAMIA_PTXAS is not an executable file" >&2
  exit 1
fi
for p in /usr/local/cuda/bin/ptxas "$(command -v ptxas 2>/dev/null)"; do
  [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; exit 0; }
done
exit 1
