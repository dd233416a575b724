#!/usr/bin/env bash
# The first cuBLAS call of a fresh process with an EMPTY hyblas kernel cache, against plain
# cuBLAS's first call, and how long until hyblas's own kernel answers (bench/firstcall/README.md).
# Runs ON THE GPU HOST (CUDA 13, cmake, gcc, python3 with torch and numpy), from the repository
# root, with gpu-stage/ made by scripts/gpu-stage.sh here:
#
#   bash scripts/gpu-first-call.sh
#
# Builds bench/firstcall into build/firstcall, runs one untimed plain warm-up of each program
# (so round 1 does not pay for reading libcublas / libtorch from disk), then ROUNDS rounds of:
#   first_call        plain  (no LD_PRELOAD)                   first_call dgemm sgemv strmv
#   first_call        hyblas, cold (fresh empty HYBLAS_CACHE_DIR) first_call --ready dgemm sgemv strmv
#   first_call        hyblas, warm (the same dir, now filled)  first_call --ready dgemm sgemv strmv
#   first_call_torch  the same three
#   hyblas info       wall time with a fresh empty HYBLAS_CACHE_DIR
# Every run has its own `timeout 300`, a fresh HYBLAS_TRACE file and a fresh CUDA_CACHE_PATH (a
# warm run shares its cold run's), and its stdout+stderr (and trace) in the log folder. A failed
# run does not stop the others; the exit status is 1 if any run failed (or the summary could not
# be made), 2 on a setup error (no stage, build failed).
#
# Results: first-call.csv and first-call.svg (the plot, when matplotlib is importable) in $OUT
# (the device tool's result folder) when set, else bench/results/; logs in $OUT/logs/first-call/,
# else build/gpu-run/first-call/. The table comes from bench/firstcall/summarize.py, which can be
# re-run anywhere on a copied CSV.
# Environment: ROUNDS (default 3), READY_TIMEOUT (--timeout of the --ready runs, s, default 120),
# OUT. A round takes about a minute when hyblas's kernels come ready; each --ready run that never
# sees route=hyblas adds READY_TIMEOUT (the device tool allows 10 minutes a command).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
S="$ROOT/gpu-stage"
LIB="$S/libhyblas.so"
ROUNDS="${ROUNDS:-3}"
if [ -n "${OUT:-}" ]; then
    RES="$OUT"
    LOGS="$OUT/logs/first-call"
else
    RES="$ROOT/bench/results"
    LOGS="$ROOT/build/gpu-run/first-call"
fi
CSV="$RES/first-call.csv"
SVG="$RES/first-call.svg"
KINDS="dgemm sgemv strmv"
RUN_TIMEOUT=300
READY_TIMEOUT="${READY_TIMEOUT:-120}"

if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || ! [[ "$READY_TIMEOUT" =~ ^[1-9][0-9]*$ ]]; then
    echo "gpu-first-call: ROUNDS=$ROUNDS and READY_TIMEOUT=$READY_TIMEOUT must be positive integers" >&2
    exit 2
fi
if [ ! -f "$LIB" ] || [ ! -f "$S/hyblas" ]; then
    echo "gpu-first-call: no $LIB or $S/hyblas: run scripts/gpu-stage.sh first" >&2
    exit 2
fi
mkdir -p "$RES" "$LOGS"
. "$ROOT/scripts/gpu-env.sh"
stage_exec "$S"

# Every cache dir and the CUDA JIT caches live under one temporary folder, removed at the end.
TMPD="$(mktemp -d)"
trap 'rm -rf "$TMPD"' EXIT

echo "== build bench/firstcall -> build/firstcall"
if ! { cmake -S bench/firstcall -B build/firstcall -DCMAKE_BUILD_TYPE=Release &&
    cmake --build build/firstcall -j; } >"$LOGS/build.log" 2>&1; then
    tail -n 30 "$LOGS/build.log"
    echo "gpu-first-call: build failed (log: $LOGS/build.log)" >&2
    exit 2
fi
FC="$ROOT/build/firstcall/first_call"
PYPROG="$ROOT/bench/firstcall/first_call_torch.py"

fail=0
have_torch=1
if ! python3 -c 'import torch, numpy' >"$LOGS/torch-import.log" 2>&1; then
    echo "gpu-first-call: python3 cannot import torch and numpy (log: $LOGS/torch-import.log): no torch runs" >&2
    have_torch=0
    fail=1
fi

{
    echo "date $(date -u +%FT%TZ), host $(hostname), rounds $ROUNDS"
    if command -v nvidia-smi >/dev/null; then nvidia-smi -L 2>&1 || true; fi
    head -3 "$S/MANIFEST" 2>/dev/null || true
    echo "HYBLAS_* in the environment: $(env | grep '^HYBLAS_' | tr '\n' ' ')"
} | tee "$LOGS/env.log"

echo "round,program,side,cache,kind,first_ms,ready_s,ready_calls,ok" >"$CSV"

# rows ROUND PROGRAM SIDE CACHE RC KINDS < LOG: one CSV row per kind from a run's `first` and
# `ready` lines. ok is "ok" only when the first call's check passed, a hyblas run's ready line
# says ok, and the run exited 0; otherwise what failed: FAIL / timeout / notrace (from the
# program), missing (no first line: the run died), noready (hyblas run without its ready line),
# exit<N> on every row when the run failed but no kind's lines say why (e.g. a wrong answer
# from a vendor-routed call of the ready loop: see the log).
rows() {
    awk -v round="$1" -v program="$2" -v side="$3" -v cache="$4" -v rc="$5" -v kinds="$6" '
        $1 == "first" && NF >= 4 { first[$2] = $3; fok[$2] = $4 }
        $1 == "ready" && NF >= 4 {
            seen[$2] = 1
            if ($3 ~ /^[0-9.]+$/) { rs[$2] = $3; rcalls[$2] = $4; rok[$2] = $5 }
            else { rs[$2] = ""; rcalls[$2] = $4; rok[$2] = $3 }
        }
        END {
            n = split(kinds, k, " ")
            explained = 0
            for (i = 1; i <= n; i++) {
                kk = k[i]
                if (!(kk in first)) ok[i] = "missing"
                else {
                    ok[i] = fok[kk]
                    if (ok[i] == "ok" && side == "hyblas") ok[i] = (kk in seen && rok[kk] != "") ? rok[kk] : "noready"
                }
                if (ok[i] != "ok") explained = 1
            }
            for (i = 1; i <= n; i++) {
                kk = k[i]
                if (rc != 0 && !explained) ok[i] = "exit" rc
                printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", round, program, side, cache, kk, first[kk], rs[kk], rcalls[kk], ok[i]
            }
        }'
}

# measure ROUND PROGRAM SIDE CACHE KINDS CMD...: one run under its own timeout, stdout+stderr in
# its log, its rows appended to the CSV (ROUND "warmup": logged only).
measure() {
    local round="$1" program="$2" side="$3" cache="$4" kinds="$5"
    shift 5
    local log="$LOGS/r$round-$program-$side-$cache.log" rc=0
    if [ "$round" = warmup ]; then
        log="$LOGS/warmup-$program.log"
    fi
    echo "== $*" >"$log"
    timeout --kill-after=10 "$RUN_TIMEOUT" "$@" >>"$log" 2>&1 || rc=$?
    echo "== exit $rc" >>"$log"
    if [ "$rc" -ne 0 ]; then
        fail=1
    fi
    if [ "$round" != warmup ]; then
        rows "$round" "$program" "$side" "$cache" "$rc" "$kinds" <"$log" >>"$CSV"
    fi
    printf '   %-6s %-16s %-6s %-5s exit %-3s %s\n' "$round" "$program" "$side" "$cache" "$rc" \
        "$(grep -E '^(first|ready) ' "$log" | tr '\n' ' ' || true)"
}

# trio ROUND PROGRAM KINDS CMD...: plain, hyblas cold (fresh empty cache), hyblas warm (same cache).
trio() {
    local round="$1" program="$2" kinds="$3"
    shift 3
    local cache cc_plain cc_hy trace temp
    cache="$(mktemp -d "$TMPD/hyblas-cache.XXXXXX")"
    cc_plain="$(mktemp -d "$TMPD/cuda-cache.XXXXXX")"
    cc_hy="$(mktemp -d "$TMPD/cuda-cache.XXXXXX")"
    measure "$round" "$program" cublas none "$kinds" \
        env -u LD_PRELOAD -u HYBLAS_TRACE CUDA_CACHE_PATH="$cc_plain" "$@"
    for temp in cold warm; do
        trace="$LOGS/r$round-$program-hyblas-$temp.trace"
        rm -f "$trace"
        measure "$round" "$program" hyblas "$temp" "$kinds" \
            env LD_PRELOAD="$LIB" HYBLAS_CACHE_DIR="$cache" HYBLAS_TRACE="$trace" CUDA_CACHE_PATH="$cc_hy" \
            "$@" --ready --timeout "$READY_TIMEOUT"
    done
    echo "   hyblas cache after these runs: $(find "$cache" -type f | wc -l) file(s), $(du -sh "$cache" | cut -f1)"
}

# info_run ROUND: wall time of `hyblas info` with a fresh empty cache (its output and `time` in the log).
info_run() {
    local round="$1" log="$LOGS/r$1-info.log" cache rc=0 t0 t1 ms ok
    cache="$(mktemp -d "$TMPD/hyblas-cache.XXXXXX")"
    t0=$(date +%s%N)
    { time timeout --kill-after=10 "$RUN_TIMEOUT" env -u LD_PRELOAD -u HYBLAS_TRACE HYBLAS_CACHE_DIR="$cache" \
        "$S/hyblas" info; } >"$log" 2>&1 || rc=$?
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    echo "== exit $rc, wall $ms ms" >>"$log"
    ok=ok
    if [ "$rc" -ne 0 ]; then
        ok="exit$rc"
        fail=1
    fi
    echo "$round,info,hyblas,cold,info,$ms,,,$ok" >>"$CSV"
    printf '   %-6s %-16s %-6s %-5s exit %-3s %s ms\n' "$round" "hyblas info" hyblas cold "$rc" "$ms"
}

echo "== warm-up (plain, not counted)"
measure warmup first_call cublas none "$KINDS" env -u LD_PRELOAD -u HYBLAS_TRACE "$FC" $KINDS
if [ "$have_torch" = 1 ]; then
    measure warmup first_call_torch cublas none dgemm_torch env -u LD_PRELOAD -u HYBLAS_TRACE python3 "$PYPROG"
fi

for round in $(seq 1 "$ROUNDS"); do
    echo "== round $round of $ROUNDS"
    # $KINDS unquoted: one argument per kind. --ready is appended for the hyblas runs.
    trio "$round" first_call "$KINDS" "$FC" $KINDS
    if [ "$have_torch" = 1 ]; then
        trio "$round" first_call_torch dgemm_torch python3 "$PYPROG"
    fi
    info_run "$round"
done

echo "== summary ($CSV)"
if ! python3 bench/firstcall/summarize.py "$CSV" "$SVG" | tee "$LOGS/summary.txt"; then
    echo "gpu-first-call: summarize.py failed" >&2
    fail=1
fi
exit $fail
