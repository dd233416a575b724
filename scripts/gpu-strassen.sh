#!/usr/bin/env bash
# Strassen-Winograd on the GPU host (issue 47), from the stage (scripts/gpu-stage.sh):
#   1. `hyblas tune strassen`: cuBLAS's SGEMM/DGEMM rates at the sub-product sizes and the
#      addition bandwidth, into the recipe file of $HYBLAS_CACHE_DIR (kept: $OUT/strassen-tune.txt);
#   2. the GPU tests of tests/gpu_strassen.rs;
#   3. `gpubench strassen` (hyblas's Strassen auto and levels 1, 2 against cuBLAS, with errors
#      against the exact oracle), CSV and SVG under $OUT.
# Usage: bash scripts/gpu-strassen.sh [--quick | --no-tests | -- GPUBENCH-STRASSEN-ARGS...]
#        (e.g. `-- --prec d`: the DGEMM sweep only; `gpubench strassen --help` lists them)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
STAGE=gpu-stage
OUT=${OUT:-$PWD/build/strassen}
mkdir -p "$OUT"
stage_exec "$STAGE"
export HYBLAS_CACHE_DIR=${HYBLAS_CACHE_DIR:-$OUT/cache}
tests=1
bench=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) bench+=(--quick) ;;
        --no-tests) tests=0 ;;
        --) shift; bench+=("$@"); break ;;
        *) echo "unknown option $1"; exit 2 ;;
    esac
    shift
done
rc=0
echo "== hyblas tune strassen"
"$STAGE"/hyblas tune strassen | tee "$OUT/strassen-tune.txt" || rc=1
if [ $tests = 1 ]; then
    echo "== tests/gpu_strassen"
    "$STAGE"/tests/gpu_strassen --test-threads=1 2>&1 | tail -30 | tee "$OUT/strassen-tests.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
echo "== gpubench strassen ${bench[*]}"
"$STAGE"/gpubench strassen --out "$OUT" "${bench[@]}" 2>&1 | tee "$OUT/strassen-bench.txt"
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
exit $rc
