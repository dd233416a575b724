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
#   KNOB          the setting TILES gives values of (default HYBLAS_OFFLOAD_TILE; e.g.
#                 HYBLAS_OFFLOAD_PIECES, pieces per call: session 34's piece diagnostic).
#                 An entry of TILES with '=' is a set of settings instead, joined by '+', e.g.
#                 TILES="HYBLAS_OFFLOAD_PIECES=8 HYBLAS_OFFLOAD_CREW=1
#                        HYBLAS_OFFLOAD_PIECES=8+HYBLAS_OFFLOAD_CREW=1" (the candidates session 34
#                 left for the next GPU run); every setting named anywhere is unset for the others.
#   TURNS         turns of every entry (default 3)
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
KNOB=${KNOB:-HYBLAS_OFFLOAD_TILE}
NAME=$(echo "${KNOB#HYBLAS_OFFLOAD_}" | tr A-Z a-z)
. scripts/settings-sets.sh
ALL=$(settings_named "$KNOB" ${TILES:-})
for turn in $(seq "${TURNS:-3}"); do
  for t in default ${TILES:-1024 1536}; do
    apply_entry "$KNOB" "$t" "$ALL"
    for r in ${ROUTINES:-dgemm sgemm zgemm dsyrk dtrsm}; do
      "$BIN" --n "$N" --routines $r --modes gpu --nvblas off --budget-s 0.2 --out /tmp/tile-diag 2>&1 |
        grep -E "$NRE" | awk -v t=$t -v r=$r -v turn=$turn -v k=$NAME '{print turn, r, $1, (t ~ /=/ ? t : k"="t), $5}'
    done
  done
done
