#!/usr/bin/env bash
# Runs ON THE GPU HOST (CUDA 13, python3; no Rust), from the repository root, with gpu-stage/
# made by scripts/gpu-stage.sh: the host GEMM offload and co-execution of issue 5 in one call
# (gpu-run.sh runs the same stages among all the others).
#
#   bash scripts/gpu-offload.sh [--quick] [--tests-only | --bench-only] [--no-tune]
#                               [--main-only | --zgemm-only]
#
# In all, a full run takes ~560 s on an H200 host (session 24). Where one call is limited to
# 600 s (the device tool), run it as two calls on one machine:
#   bash scripts/gpu-offload.sh --bench-only --main-only              (~430 s)
#   bash scripts/gpu-offload.sh --zgemm-only --no-tune                (~140 s, the tests too)
#
# Stages, each logged to $OUT/logs/<stage>.log ($OUT set) or build/gpu-run/:
#   test-gpu_offload  gpu-stage/tests/gpu_offload --test-threads=1: offload and co-execution
#                     against the CPU engine (forced shares, dynamic split, injected GPU
#                     failures, many host threads)                               [not --bench-only]
#   tune-offload      gpu-stage/hyblas tune offload: the cost model's rates measured and fitted
#                     here (~80-100 s), written to the recipe file in the cache dir and copied to
#                     $RESULTS/recipes; the model-against-measurement lines are shown
#                     (--no-tune: skipped, the recipe already in the cache dir is used, e.g. by
#                     a second call that runs the ZGEMM stage alone, --zgemm-only)
#   trace             HYBLAS_TRACE=stderr: auto DGEMM at n = 1024, 2048, 4096 (decision,
#                     predicted and measured time), co-execution forced at n = 2048
#                     (HYBLAS_DEVICE=split), and the same with the GPU failing after 3 tiles
#                     (HYBLAS_OFFLOAD_FAULT=3: the CPU finishes, the result is checked)
#   offload           gpu-stage/offloadbench [--quick] --out $RESULTS: d/s GEMM, DSYRK, DTRSM,
#                     n = 512..16384
#                     (--quick: ..4096), hyblas auto/cpu/gpu and split at GPU shares 0..1 in
#                     steps of 0.1 (--quick 0.2) against NVBLAS on the staged Debian OpenBLAS;
#                     CSV, two SVGs, tables                                       [not --tests-only]
#                     [not --zgemm-only]
#   offload-zgemm     the same for ZGEMM (a stage of its own), in $RESULTS/zgemm
#                     [not --main-only, nor with OFFLOAD_ROUTINES set]
# The whole call keeps to a budget (GPU_OFFLOAD_BUDGET seconds: 560 by default, 175 with
# --quick): each stage's timeout is what is left, and the benchmark gets a deadline so that it
# still writes its tables and plots. Typical times on an H200 host (session 24): tests ~10 s,
# tune ~85-95 s, trace ~5 s, benchmark ~330 s, ZGEMM ~125 s (in all ~560 s). Exits non-zero if
# a stage failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
quick=0
mode=all
tune=1
stages=all
for a in "$@"; do
    case "$a" in
        --quick) quick=1 ;;
        --tests-only) mode=tests ;;
        --bench-only) mode=bench ;;
        --no-tune) tune=0 ;;
        --main-only) stages=main ;;
        --zgemm-only) stages=zgemm ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu-offload: unknown argument $a" >&2; exit 2 ;;
    esac
done
RESULTS="${OUT:-$ROOT/bench/results}"
LOGS="${OUT:+$OUT/logs}"
LOGS="${LOGS:-$ROOT/build/gpu-run}"
mkdir -p "$LOGS" "$RESULTS"
if [ "$quick" -eq 1 ]; then BUDGET="${GPU_OFFLOAD_BUDGET:-175}"; else BUDGET="${GPU_OFFLOAD_BUDGET:-560}"; fi
CAP="${GPU_RUN_TIMEOUT:-540}"
. "$ROOT/scripts/gpu-env.sh"
stage_exec "$STAGE"

# Seconds left of the budget (at least 10).
left() {
    local l=$((BUDGET - SECONDS))
    [ "$l" -lt 10 ] && l=10
    echo "$l"
}

failed=0
summary=()
# run NAME CMD...: timed (the smaller of GPU_RUN_TIMEOUT and what is left), logged; the log's
# tail is shown on failure.
run() {
    local name="$1"
    shift
    local t0=$SECONDS
    local limit
    limit=$(left)
    [ "$limit" -gt "$CAP" ] && limit=$CAP
    echo "== [$((SECONDS))s] $name (timeout ${limit}s): $*" | tee "$LOGS/$name.log"
    timeout --kill-after=10 "$limit" "$@" >>"$LOGS/$name.log" 2>&1
    local rc=$?
    local secs=$((SECONDS - t0))
    if [ "$rc" -ne 0 ]; then
        failed=$((failed + 1))
        echo "---- $name FAILED (rc $rc), last lines of $LOGS/$name.log"
        tail -n 30 "$LOGS/$name.log"
        summary+=("$(printf '%-18s FAIL (rc %s) %6ss' "$name" "$rc" "$secs")")
    else
        summary+=("$(printf '%-18s ok %14ss' "$name" "$secs")")
    fi
}

[ -e "$STAGE/MANIFEST" ] && head -2 "$STAGE/MANIFEST"
nvidia-smi -L || true
echo "budget ${BUDGET}s ($([ "$quick" -eq 1 ] && echo quick || echo full))"

if [ "$mode" != bench ]; then
    run test-gpu_offload "$STAGE/tests/gpu_offload" --test-threads=1 --nocapture
    grep -h '^test \|^test result:\|^SKIPPED\|panicked at' "$LOGS/test-gpu_offload.log" | head -40
    run test-gpu_offload_l3 "$STAGE/tests/gpu_offload_l3" --test-threads=1 --nocapture
    grep -h '^test result:\|^SKIPPED\|panicked at' "$LOGS/test-gpu_offload_l3.log" | head -20
fi

# hyblas's cache directory, as src/gpu/nvrtc.rs finds it.
cache="${HYBLAS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-}/.cache}/hyblas}"
[ -z "${HYBLAS_CACHE_DIR:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ] && [ -z "${HOME:-}" ] && cache=/tmp/hyblas-cache
if [ "$tune" -eq 1 ]; then
    run tune-offload "$STAGE/hyblas" tune offload
    sed -n '/^offload model:/,$p' "$LOGS/tune-offload.log"
elif compgen -G "$cache/recipes/*" >/dev/null; then
    echo "tune-offload skipped (--no-tune): the recipe in $cache/recipes"
else
    echo "---- --no-tune, but no recipe in $cache/recipes"
    failed=$((failed + 1))
fi
if compgen -G "$cache/recipes/*" >/dev/null; then
    mkdir -p "$RESULTS/recipes" && cp "$cache"/recipes/* "$RESULTS/recipes/"
fi

if [ "$mode" != tests ]; then
    tb=(--routines dgemm --modes cpu,auto --nvblas off --budget-s 0 --max-call-s 5)
    run trace bash -c "
        HYBLAS_TRACE=stderr '$STAGE/offloadbench' --n 1024,2048,4096 ${tb[*]} --out '$LOGS/trace-auto' &&
        HYBLAS_TRACE=stderr HYBLAS_DEVICE=split '$STAGE/offloadbench' --n 2048 ${tb[*]} --out '$LOGS/trace-split' &&
        HYBLAS_TRACE=stderr HYBLAS_DEVICE=split HYBLAS_OFFLOAD_FAULT=3 '$STAGE/offloadbench' --n 2048 ${tb[*]} --out '$LOGS/trace-fault'"
    grep -h 'offload:\|co-execution:\|max rel diff' "$LOGS/trace.log" | sort -u | head -24

    # NVBLAS's CPU library: the staged Debian OpenBLAS (python3's lzma unpacks it).
    CPUBLAS="$ROOT/build/cpublas"
    mkdir -p "$CPUBLAS"
    for f in "$STAGE"/cpublas/*.xz; do
        [ -e "$f" ] || continue
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
            "$f" "$CPUBLAS/$(basename "$f" .xz)"
    done
    # The benchmark stops starting points 25 s before the budget ends, to write its outputs.
    deadline=$(($(left) - 25))
    [ "$deadline" -lt 30 ] && deadline=30
    # GEMM in two precisions and the two Level-3 routines the issue names (DSYRK, DTRSM)
    # against NVBLAS, then ZGEMM in a stage of its own (its own CSV and plots; a ZGEMM that
    # fails loses only its stage).
    args=(--out "$RESULTS" --deadline-s "$deadline" --routines "${OFFLOAD_ROUTINES:-dgemm,sgemm,dsyrk,dtrsm}")
    [ "$quick" -eq 1 ] && args=(--quick "${args[@]}")
    [ -e "$CPUBLAS/libopenblas.so.0" ] && args+=(--cpu-blas "$CPUBLAS/libopenblas.so.0")
    if [ "$stages" != zgemm ]; then
        run offload env LD_LIBRARY_PATH="$CPUBLAS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$STAGE/offloadbench" "${args[@]}"
        sed -n '/^NVBLAS:/p;/^offloadbench: .*CPU threads/p;/^[sdcz]gemm (ms/,$p' "$LOGS/offload.log" | head -n 120
        grep -E '^(dsyrk|dtrsm)' "$LOGS/offload.log" | head -n 40
    fi
    if [ -z "${OFFLOAD_ROUTINES:-}" ] && [ "$stages" != main ]; then
        deadline=$(($(left) - 15))
        [ "$deadline" -lt 20 ] && deadline=20
        zargs=(--out "$RESULTS/zgemm" --deadline-s "$deadline" --routines zgemm)
        [ "$quick" -eq 1 ] && zargs=(--quick "${zargs[@]}")
        [ -e "$CPUBLAS/libopenblas.so.0" ] && zargs+=(--cpu-blas "$CPUBLAS/libopenblas.so.0")
        run offload-zgemm env LD_LIBRARY_PATH="$CPUBLAS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$STAGE/offloadbench" "${zargs[@]}"
        sed -n '/^zgemm (ms/,$p' "$LOGS/offload-zgemm.log" | head -n 60
    fi
fi

echo
printf '%s\n' "${summary[@]}"
echo "$failed failed in ${SECONDS}s; logs in $LOGS, results in $RESULTS"
[ "$failed" -eq 0 ]
