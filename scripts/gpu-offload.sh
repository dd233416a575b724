#!/usr/bin/env bash
# Runs ON THE GPU HOST (CUDA 13, python3; no Rust), from the repository root, with gpu-stage/
# made by scripts/gpu-stage.sh: the host GEMM offload of issue 5 alone (gpu-run.sh runs the
# same stages among all the others).
#
#   bash scripts/gpu-offload.sh [--quick] [--tests-only | --bench-only]
#
# Stages, each logged to $OUT/logs/<stage>.log ($OUT set) or build/gpu-run/:
#   test-gpu_offload  gpu-stage/tests/gpu_offload --test-threads=1 --nocapture   [not --bench-only]
#   tune-offload      gpu-stage/hyblas tune offload: the cost model's rates measured here, written
#                     to the recipe file in the cache dir and copied to $OUT/recipes
#   trace             one auto DGEMM at n = 1024 and 4096 with HYBLAS_TRACE=stderr (the
#                     decision, both predicted times, the measured time)
#   offload           gpu-stage/offloadbench [--quick] --out $OUT (else bench/results): d/s/z
#                     GEMM, hyblas auto/cpu/gpu against NVBLAS on the staged Debian OpenBLAS
#                                                                                [not --tests-only]
# Exits non-zero if a stage failed. GPU_RUN_TIMEOUT: seconds per stage (default 540).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
quick=0
mode=all
for a in "$@"; do
    case "$a" in
        --quick) quick=1 ;;
        --tests-only) mode=tests ;;
        --bench-only) mode=bench ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "gpu-offload: unknown argument $a" >&2; exit 2 ;;
    esac
done
RESULTS="${OUT:-$ROOT/bench/results}"
LOGS="${OUT:+$OUT/logs}"
LOGS="${LOGS:-$ROOT/build/gpu-run}"
mkdir -p "$LOGS" "$RESULTS"
TIMEOUT="${GPU_RUN_TIMEOUT:-540}"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    if [ -d "$d" ] && [[ ":${LD_LIBRARY_PATH:-}:" != *":$d:"* ]]; then
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
    fi
done
chmod +x "$STAGE"/hyblas "$STAGE"/offloadbench "$STAGE"/tests/* 2>/dev/null || true

failed=0
summary=()
# run NAME CMD...: timed, logged; the log's tail is shown on failure.
run() {
    local name="$1"
    shift
    local t0=$SECONDS
    echo "== $name: $*" | tee "$LOGS/$name.log"
    timeout --kill-after=10 "$TIMEOUT" "$@" >>"$LOGS/$name.log" 2>&1
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

if [ "$mode" != bench ]; then
    run test-gpu_offload "$STAGE/tests/gpu_offload" --test-threads=1 --nocapture
    grep -h '^test result:\|^SKIPPED\|panicked at' "$LOGS/test-gpu_offload.log" | head -20
    run test-gpu_offload_l3 "$STAGE/tests/gpu_offload_l3" --test-threads=1 --nocapture
fi

run tune-offload "$STAGE/hyblas" tune offload
sed -n '/^offload model:/,$p' "$LOGS/tune-offload.log"
# hyblas's cache directory, as src/gpu/nvrtc.rs finds it.
cache="${HYBLAS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-}/.cache}/hyblas}"
[ -z "${HYBLAS_CACHE_DIR:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ] && [ -z "${HOME:-}" ] && cache=/tmp/hyblas-cache
if compgen -G "$cache/recipes/*" >/dev/null; then
    mkdir -p "$RESULTS/recipes" && cp "$cache"/recipes/* "$RESULTS/recipes/"
fi

if [ "$mode" != tests ]; then
    run trace env HYBLAS_TRACE=stderr "$STAGE/offloadbench" --n 1024,4096 --routines dgemm --modes auto \
        --nvblas off --budget-s 0 --out "$LOGS/trace-bench"
    grep -h 'offload:' "$LOGS/trace.log" | sort -u | head -6

    # NVBLAS's CPU library: the staged Debian OpenBLAS (python3's lzma unpacks it).
    CPUBLAS="$ROOT/build/cpublas"
    mkdir -p "$CPUBLAS"
    for f in "$STAGE"/cpublas/*.xz; do
        [ -e "$f" ] || continue
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
            "$f" "$CPUBLAS/$(basename "$f" .xz)"
    done
    args=(--out "$RESULTS")
    [ "$quick" -eq 1 ] && args=(--quick "${args[@]}")
    [ -e "$CPUBLAS/libopenblas.so.0" ] && args+=(--cpu-blas "$CPUBLAS/libopenblas.so.0")
    run offload env LD_LIBRARY_PATH="$CPUBLAS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$STAGE/offloadbench" "${args[@]}"
    sed -n '/^NVBLAS:/p;/^offloadbench:/p;/^[sdcz]gemm (ms/,$p' "$LOGS/offload.log"
fi

echo
printf '%s\n' "${summary[@]}"
echo "$failed failed; logs in $LOGS, results in $RESULTS"
[ "$failed" -eq 0 ]
