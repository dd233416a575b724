#!/usr/bin/env bash
# Runs ON THE GPU HOST (CUDA 13, cmake, gcc, python3; no Rust), from the repository root, with
# gpu-stage/ made by scripts/gpu-stage.sh:
#
#   bash scripts/gpu-run.sh [--quick] [--tests-only | --bench-only]
#
# Stages, each timed, each logged to $OUT/logs/<stage>.log ($OUT set) or build/gpu-run/:
#   gpu            nvidia-smi -L
#   info           gpu-stage/hyblas info
#   test-<name>    every gpu-stage/tests/* executable, --test-threads=1 --nocapture
#                  (passed / failed / SKIPPED counts per binary)           [not with --bench-only]
#   ctest-cublas   ctest/cublas built with cmake, run with LD_PRELOAD=gpu-stage/libhyblas.so,
#                  when that directory exists                               [not with --bench-only]
#   cupy-preload   ctest/cupy/preload_cupy.py (an unchanged CuPy program) with hyblas preloaded,
#                  results checked against NumPy                           [not with --bench-only]
#   tune           gpu-stage/hyblas tune, when the command has it; its recipes are copied to
#                  $OUT/recipes (else bench/results/recipes)              [not with --tests-only]
#   gpubench       gpu-stage/gpubench --only level12 [--quick] --out $OUT (else bench/results)
#                                                                          [not with --tests-only]
#   gpubench-gemm  gpu-stage/gpubench --only gemm_smallout [--quick] --out ... (split-k GEMM
#                  against cuBLAS, its own stage and timeout)              [not with --tests-only]
#   gpubench-batch gpu-stage/gpubench batch, then batch --host (batched GEMM against cuBLAS
#                  batched; host batches CPU against GPU offload)          [not with --tests-only]
#   offload        gpu-stage/offloadbench [--quick] --out ...: host-memory d/s/z GEMM, hyblas
#                  auto/cpu/gpu against NVBLAS (CPU side: the staged Debian OpenBLAS, unpacked
#                  to build/cpublas)                                       [not with --tests-only]
# A failed stage does not stop the others. Ends with a table (stage, result, seconds); the exit
# status is non-zero if any stage failed.
# Environment: OUT (results + logs), GPU_RUN_TIMEOUT (seconds per stage, default 540).
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
        *) echo "gpu-run: unknown argument $a" >&2; exit 2 ;;
    esac
done
if [ -n "${OUT:-}" ]; then
    RESULTS="$OUT"
    LOGS="$OUT/logs"
else
    RESULTS="$ROOT/bench/results"
    LOGS="$ROOT/build/gpu-run"
fi
mkdir -p "$LOGS" "$RESULTS"
TIMEOUT="${GPU_RUN_TIMEOUT:-540}"

. "$ROOT/scripts/gpu-env.sh"
stage_exec "$STAGE"

names=()
results=()
times=()
failed=0

# record NAME RESULT SECONDS STATUS(0 ok, else failed)
record() {
    names+=("$1")
    results+=("$2")
    times+=("$3")
    if [ "$4" -ne 0 ]; then failed=$((failed + 1)); fi
    printf '%-28s %-44s %6ss\n' "$1" "$2" "$3"
}

# run NAME CMD...: run with a timeout, log stdout+stderr, leave the exit status in $rc and
# the seconds in $secs.
run() {
    local name="$1"
    shift
    local t0=$SECONDS
    echo "== $name: $*" >"$LOGS/$name.log"
    timeout --kill-after=10 "$TIMEOUT" "$@" >>"$LOGS/$name.log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    [ "$rc" -eq 124 ] && echo "== timed out after ${TIMEOUT}s" >>"$LOGS/$name.log"
    return 0
}

# On failure, show the end of the log so the cause is visible in the console.
tail_on_fail() {
    if [ "$rc" -ne 0 ]; then
        echo "---- last lines of $LOGS/$1.log"
        tail -n "${2:-15}" "$LOGS/$1.log"
        echo "----"
    fi
}

# Build ctest/cublas and run it with hyblas preloaded in front of libcublas. HYBLAS_LIBRARY
# names the library for a project that sets LD_PRELOAD in its own test properties; LD_PRELOAD
# is set for ctest (and so for every test it starts) as well.
ctest_cublas() {
    rm -rf "$CTEST_BUILD"
    cmake -S "$CTEST_SRC" -B "$CTEST_BUILD" -DHYBLAS_LIBRARY="$HYBLAS_SO" || return 1
    cmake --build "$CTEST_BUILD" -j || return 1
    if [ -e "$CTEST_BUILD/CTestTestfile.cmake" ]; then
        LD_PRELOAD="$HYBLAS_SO" ctest --test-dir "$CTEST_BUILD" --output-on-failure
    else
        local st=0 e
        for e in $(find "$CTEST_BUILD" -maxdepth 1 -type f -executable | sort); do
            echo "== $e"
            LD_PRELOAD="$HYBLAS_SO" "$e" || st=1
        done
        return $st
    fi
}
export -f ctest_cublas

echo "gpu-run: $(date -u +%Y-%m-%dT%H:%M:%SZ) mode=$mode quick=$quick logs=$LOGS results=$RESULTS"
[ -e "$STAGE/MANIFEST" ] && head -2 "$STAGE/MANIFEST"

run gpu nvidia-smi -L
sed 1d "$LOGS/gpu.log"
record gpu "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"

if [ ! -x "$STAGE/hyblas" ]; then
    echo "gpu-run: $STAGE/hyblas missing: run scripts/gpu-stage.sh and carry gpu-stage" >&2
    record stage "FAIL (gpu-stage missing)" 0 1
else
    run info "$STAGE/hyblas" info
    sed 1d "$LOGS/info.log"
    record info "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
fi

if [ "$mode" != bench ]; then
    for t in "$STAGE"/tests/*; do
        [ -x "$t" ] || continue
        name="test-$(basename "$t")"
        run "$name" "$t" --test-threads=1 --nocapture
        # libtest's last line: "test result: ok. 7 passed; 0 failed; 0 ignored; ..."
        p=$(grep -h '^test result:' "$LOGS/$name.log" | grep -o '[0-9]* passed' | awk '{s+=$1} END{print s+0}')
        f=$(grep -h '^test result:' "$LOGS/$name.log" | grep -o '[0-9]* failed' | awk '{s+=$1} END{print s+0}')
        s=$(grep -o 'SKIPPED [^: ]*' "$LOGS/$name.log" | sort -u | wc -l)
        res="$p passed ($s SKIPPED), $f failed"
        [ "$rc" -ne 0 ] && res="FAIL: $res, rc $rc"
        record "$name" "$res" "$secs" "$rc"
        grep -h '^test .* FAILED$\|^    [a-z_0-9:]*$\|panicked at' "$LOGS/$name.log" | head -20
        tail_on_fail "$name" 25
    done

    csrc=""
    [ -d "$STAGE/ctest/cublas" ] && csrc="$STAGE/ctest/cublas"
    [ -z "$csrc" ] && [ -d "$ROOT/ctest/cublas" ] && csrc="$ROOT/ctest/cublas"
    if [ -n "$csrc" ]; then
        export CTEST_SRC="$csrc" CTEST_BUILD="$ROOT/build/ctest-cublas" HYBLAS_SO="$STAGE/libhyblas.so"
        run ctest-cublas bash -c ctest_cublas
        summary=$(grep -h 'tests passed\|tests failed' "$LOGS/ctest-cublas.log" | tail -1)
        record ctest-cublas "$([ $rc -eq 0 ] && echo "ok ${summary}" || echo "FAIL (rc $rc) ${summary}")" "$secs" "$rc"
        tail_on_fail ctest-cublas 25
    else
        record ctest-cublas "not present (ctest/cublas)" 0 0
    fi

    # An unchanged CuPy program (cupy.cublas -> cublas*_v2) with hyblas preloaded, where CuPy is.
    if python3 -c 'import cupy' >/dev/null 2>&1 && [ -e "$ROOT/ctest/cupy/preload_cupy.py" ]; then
        export HYBLAS_SO="$STAGE/libhyblas.so" LOGS ROOT
        run cupy-preload bash -c 'HYBLAS_TRACE="$LOGS/cupy-trace.txt" LD_PRELOAD="$HYBLAS_SO" python3 "$ROOT/ctest/cupy/preload_cupy.py"'
        routes=$(grep -c 'route=hyblas' "$LOGS/cupy-trace.txt" 2>/dev/null)
        record cupy-preload "$([ $rc -eq 0 ] && echo "ok, ${routes:-0} calls on hyblas" || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail cupy-preload 20
    else
        record cupy-preload "skipped (no cupy)" 0 0
    fi
fi

if [ "$mode" != tests ]; then
    if [ -x "$STAGE/hyblas" ] && "$STAGE/hyblas" --help 2>&1 | grep -qE '^ +tune\b'; then
        run tune "$STAGE/hyblas" tune
        record tune "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail tune
        # Keep the recipes it wrote (hyblas's cache directory, as src/gpu/nvrtc.rs finds it).
        cache="${HYBLAS_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-}/.cache}/hyblas}"
        [ -z "${HYBLAS_CACHE_DIR:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ] && [ -z "${HOME:-}" ] && cache=/tmp/hyblas-cache
        if compgen -G "$cache/recipes/*" >/dev/null; then
            mkdir -p "$RESULTS/recipes" && cp "$cache"/recipes/* "$RESULTS/recipes/" && echo "recipes copied to $RESULTS/recipes"
        fi
    else
        record tune "not available (hyblas has no tune)" 0 0
    fi

    if [ -x "$STAGE/gpubench" ]; then
        args=(--out "$RESULTS")
        [ "$quick" -eq 1 ] && args=(--quick "${args[@]}")
        run gpubench "$STAGE/gpubench" --only level12 --twin "${args[@]}"
        # The one-line-per-routine overview and the files written.
        sed -n '/^routine /,$p' "$LOGS/gpubench.log" | grep -v '^\[' || true
        grep -h '^no GPU' "$LOGS/gpubench.log" || true
        record gpubench "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail gpubench 25

        run gpubench-gemm "$STAGE/gpubench" --only gemm_smallout "${args[@]}"
        sed -n '/^== gemm_smallout summary/,$p' "$LOGS/gpubench-gemm.log" | grep -v '^\[' || true
        record gpubench-gemm "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail gpubench-gemm 25

        # Batched GEMM: hyblas's small-product kernel against cuBLAS batched (device memory),
        # then host-memory batches on the CPU engine against the GPU offload.
        run gpubench-batch bash -c "'$STAGE/gpubench' batch --out '$RESULTS' && '$STAGE/gpubench' batch --host --out '$RESULTS'"
        grep -v '^\[' "$LOGS/gpubench-batch.log" | tail -n 40 || true
        record gpubench-batch "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail gpubench-batch 25
    else
        record gpubench "FAIL (gpu-stage/gpubench missing)" 0 1
    fi

    if [ -x "$STAGE/offloadbench" ]; then
        # NVBLAS forwards to a CPU BLAS: the staged Debian OpenBLAS (python3's lzma unpacks it).
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
        sed -n '/^NVBLAS:/p;/^offloadbench:/p;/^[sdcz]gemm (ms/,$p' "$LOGS/offload.log" || true
        record offload "$([ $rc -eq 0 ] && echo ok || echo "FAIL (rc $rc)")" "$secs" "$rc"
        tail_on_fail offload 25
    else
        record offload "FAIL (gpu-stage/offloadbench missing)" 0 1
    fi
fi

echo
printf '%-28s %-44s %7s\n' stage result seconds
for i in "${!names[@]}"; do
    printf '%-28s %-44s %7s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
done
echo "${#names[@]} stages, $failed failed; logs in $LOGS"
[ "$failed" -eq 0 ]
