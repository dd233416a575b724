#!/usr/bin/env bash
# GPU-only host GEMM/SYRK/TRSM by C tile: the default (tile_for; at n = 2048 and 3072, 1024 since
# session 33, 512 and 768 before) against HYBLAS_OFFLOAD_TILE=T for each T in TILES, three turns of all, so a
# drift of the host falls on each alike. Prints "turn routine n tile=T ms".
#   OFFLOADBENCH  the offloadbench binary (default target/release/offloadbench; on the GPU host
#                 the staged copy, e.g. gpu-stage/offloadbench)
#   RECIPE        a recipe file to price with (optional; copied into HYBLAS_CACHE_DIR/recipes)
#   N             sizes (default 2048,3072)
#   TILES         tiles against the default (default "1024 1536")
#   ROUTINES      (default "dgemm sgemm zgemm dsyrk dtrsm")
# Result of session 32 (H200): bench/results/nvidia-h200-sm90-offload-tile-diag.txt
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${OFFLOADBENCH:-target/release/offloadbench}
if [ -n "${RECIPE:-}" ]; then
  export HYBLAS_CACHE_DIR=${HYBLAS_CACHE_DIR:-/tmp/hyblas-tile-diag}
  mkdir -p "$HYBLAS_CACHE_DIR/recipes"
  cp "$RECIPE" "$HYBLAS_CACHE_DIR/recipes/$(basename "$RECIPE")"
fi
N=${N:-2048,3072}
NRE="^ +($(echo "$N" | tr , '|')) "
for turn in 1 2 3; do
  for t in default ${TILES:-1024 1536}; do
    if [ $t = default ]; then unset HYBLAS_OFFLOAD_TILE; else export HYBLAS_OFFLOAD_TILE=$t; fi
    for r in ${ROUTINES:-dgemm sgemm zgemm dsyrk dtrsm}; do
      "$BIN" --n "$N" --routines $r --modes gpu --nvblas off --budget-s 0.2 --out /tmp/tile-diag 2>&1 |
        grep -E "$NRE" | awk -v t=$t -v r=$r -v turn=$turn '{print turn, r, $1, "tile="t, $5}'
    done
  done
done
