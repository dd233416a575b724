#!/usr/bin/env bash
# Split-k GEMM (issue 4) on the GPU host, from the repository root, with gpu-stage/ made by
# scripts/gpu-stage.sh here. Runs the named steps in order, each timed, logs under $OUT/logs
# ($OUT set: the device tool's result folder) or build/gpu-splitk/:
#
#   bash scripts/gpu-splitk.sh STEP...
#
#   test     gpu_splitk and gpu_gemm_entry test executables (every precision, op combination,
#            fragment configuration, bitwise repeatability)
#   quick    gpubench --only gemm_smallout --quick (about 10 s after the kernels compile)
#   tune     hyblas tune (recipes, then the split-k/cuBLAS table); the recipe file is copied
#            to recipes/ so it can be shipped as kernels/recipes/sm90.txt
#   full     gpubench --only gemm_smallout (the whole grid, about 1-2 minutes)
#   probe    gpubench --gemm-points "$POINTS" --gemm-twin (a few points, with a second cuBLAS
#            handle as the noise floor of the entry column); POINTS like s:nn:64:64:8192,...
#   chunks   DGEMM 16x16 k=2^20 (N,N) at several HYBLAS_SPLITK_MMA_CHUNKS values
#
# The first GEMM call of a fresh machine compiles the Gemm kernel family (about a minute); the
# disk cache keeps it while the machine stays warm.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
S="$ROOT/gpu-stage"
# Results and logs go to build/gpu-splitk/; with $OUT set (the device tool's result folder, which
# brings back only a few files) they are packed into $OUT/gpu-splitk.tgz at the end.
RES="$ROOT/build/gpu-splitk"
LOGS="$RES/logs"
mkdir -p "$RES" "$LOGS"
. "$ROOT/scripts/gpu-env.sh"
# One cache for every step: compiled kernels and the tuned recipes.
export HYBLAS_CACHE_DIR="${HYBLAS_CACHE_DIR:-$ROOT/build/hyblas-cache}"
stage_exec "$S"
fail=0
step() {
    local name="$1"
    shift
    local t0=$SECONDS
    echo "== $name: $*"
    if "$@" >"$LOGS/$name.log" 2>&1; then
        echo "   $name: ok in $((SECONDS - t0)) s"
    else
        echo "   $name: FAILED (exit $?) in $((SECONDS - t0)) s"
        fail=1
    fi
    grep -E "test result|passed|FAILED|panicked|geomean|geometric|worst|crossover|wrote|SKIPPED" "$LOGS/$name.log" | tail -n 40
}
for s in "$@"; do
    case "$s" in
        test)
            for t in gpu_splitk gpu_gemm_entry; do
                exe="$S/tests/$t"
                step "test-$t" "$exe" --test-threads=1 --nocapture
            done
            ;;
        quick) step quick "$S/gpubench" --only gemm_smallout --quick --out "$RES" ;;
        full) step full "$S/gpubench" --only gemm_smallout --out "$RES" ;;
        tune)
            step tune "$S/hyblas" tune
            mkdir -p "$RES/recipes"
            cp "$HYBLAS_CACHE_DIR"/recipes/*.txt "$RES/recipes/" && ls -l "$RES/recipes/"
            ;;
        probe)
            step probe "$S/gpubench" --only gemm_smallout --gemm-points "${POINTS:?set POINTS}" --gemm-twin \
                --out "$RES/probe"
            cut -d, -f1-10,21 "$RES"/probe/*.csv
            ;;
        chunks)
            for c in ${CHUNKS:-128 192 256 264 320 384}; do
                HYBLAS_SPLITK_MMA_CHUNKS=$c step "chunks-$c" "$S/gpubench" --only gemm_smallout --prec d \
                    --gemm-points d:nn:16:16:2^20,d:tn:16:16:2^20 --no-entry --out "$RES/chunks-$c"
                cut -d, -f1-9 "$RES/chunks-$c/"*.csv
            done
            ;;
        *) echo "gpu-splitk: unknown step $s" >&2; exit 2 ;;
    esac
done
if [ -n "${OUT:-}" ]; then
    tar -czf "$OUT/gpu-splitk.tgz" -C "$RES" . && echo "packed $(du -h "$OUT/gpu-splitk.tgz" | cut -f1) into \$OUT/gpu-splitk.tgz"
fi
exit $fail
