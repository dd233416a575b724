#!/usr/bin/env bash
# Issue 43's GPU run in one call (ON THE GPU HOST, from the repository root, with gpu-stage/ made
# by scripts/gpu-stage.sh): no call waits for a kernel compile, and how fast kernels get ready.
#
#   bash scripts/gpu-kernels-ready.sh
#
#   1. `hyblas info` on a fresh, empty kernel cache, timed (it compiles nothing);
#   2. `hyblas compile --all` for this GPU into a fresh cache, timed (a line per unit: compile
#      time and size of every unit on this host's CPU);
#   3. the gpu_loader test (first calls on cuBLAS while their units compile, then hyblas);
#   4. scripts/gpu-first-call.sh: first calls against plain cuBLAS, C and PyTorch (ROUNDS, 3).
# Results in $OUT (else bench/results/): kernels-ready.txt (1-3), first-call.csv/.svg (4), and
# every log in one archive, kernels-ready-logs.tgz. Exit status: non-zero if a step failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
S="$ROOT/gpu-stage"
RES="${OUT:-$ROOT/bench/results}"
mkdir -p "$RES"
export OUT="$RES"
. "$ROOT/scripts/gpu-env.sh"
stage_exec "$S"
TXT="$RES/kernels-ready.txt"
TMPD="$(mktemp -d)"
trap 'rm -rf "$TMPD"' EXIT
fail=0
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nvidia-smi -L 2>/dev/null | head -1); $(nproc) CPUs; stage $(head -1 "$S/MANIFEST")"
    echo
    echo "## 1. hyblas info, fresh empty HYBLAS_CACHE_DIR"
    t0=$EPOCHREALTIME
    HYBLAS_CACHE_DIR="$TMPD/info" "$S/hyblas" info || fail=1
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "hyblas info wall: %.2f s\n", b - a }'
    echo
    echo "## 2. hyblas compile --all, fresh cache"
    HYBLAS_CACHE_DIR="$TMPD/all" "$S/hyblas" compile --all || fail=1
    echo
    echo "## 2b. the reachable units only, one at a time (what a cold process's background thread does)"
    HYBLAS_CACHE_DIR="$TMPD/one" taskset -c 0 "$S/hyblas" compile || fail=1
    echo
    echo "## 3. gpu_loader"
    timeout 300 "$S/tests/gpu_loader" --test-threads=1 --nocapture || fail=1
} >"$TXT" 2>&1
cat "$TXT"
echo
echo "## 4. first calls"
ROUNDS="${ROUNDS:-3}" bash "$ROOT/scripts/gpu-first-call.sh" || fail=1
if [ -d "$RES/logs" ]; then
    tar czf "$RES/kernels-ready-logs.tgz" -C "$RES" logs && rm -rf "$RES/logs"
fi
exit $fail
