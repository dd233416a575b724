#!/usr/bin/env bash
# Runs ON THE GPU HOST with gpu-stage/ (scripts/gpu-stage.sh): scans the decomposition knobs
# that fix the kernels' summation orders (each a named threshold with an environment key) and
# collects every point into one CSV, so a single device call shows which value is fastest.
#
#   bash scripts/gpu-scan.sh [SCAN ...]      (default: every scan below)
#
# Scans (knob: values; routines; sizes):
#   trmv_n    HYBLAS_TRMV_N_ITEMS   1024 2048 4096 8192      trmv_lnn     n 8192 12288 16384
#   trmv_t    HYBLAS_TRMV_T_WARPS   64 128 256 512           trmv_utn     n 8192 12288 16384
#   l1        HYBLAS_L1_MAX_CHUNKS  4096 8192 16384 32768    dot nrm2 asum iamax (s, d) 2^24 2^26 2^28
#   gemv_t    HYBLAS_GEMV_T_WARPS   32 64 128                gemv_t (d, c, z) n 8192 8448 16384
#   gemv_n    HYBLAS_GEMV_N_ITEMS   256 512 1024 2048        gemv_n (s, d, z) n 8192 8448 16384
#   stagger   HYBLAS_GEMV_T_STAGGER 0 1                      gemv_t (all) n 4096 8192 8448 12288 16384
# Output: $OUT/scan.csv (else build/gpu-scan/scan.csv): knob,value, then gpubench's columns.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
DEST="${OUT:-$ROOT/build/gpu-scan}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
chmod +x "$STAGE/gpubench" 2>/dev/null || true
CSV="$DEST/scan.csv"
: >"$CSV"

# point KNOB VALUE GPUBENCH-ARGS...: one gpubench run with KNOB=VALUE, rows appended to the CSV.
point() {
    local knob="$1" value="$2"
    shift 2
    local dir="$WORK/$knob-$value-$RANDOM"
    mkdir -p "$dir"
    local t0=$SECONDS
    env "$knob=$value" "$STAGE/gpubench" --quick --no-entry --out "$dir" "$@" >"$dir/log" 2>&1 || {
        echo "gpu-scan: $knob=$value $* failed:"
        tail -5 "$dir/log"
    }
    local f
    f=$(ls "$dir"/*.csv 2>/dev/null | head -1)
    [ -n "$f" ] || return 0
    [ -s "$CSV" ] || echo "knob,value,$(head -1 "$f")" >"$CSV"
    tail -n +2 "$f" | sed "s/^/$knob,$value,/" >>"$CSV"
    printf '%-22s %6s  %3ss  %s\n' "$knob" "$value" "$((SECONDS - t0))" "$*"
}

scans=("$@")
[ ${#scans[@]} -eq 0 ] && scans=(trmv_n trmv_t l1 gemv_t gemv_n)
for s in "${scans[@]}"; do
    case "$s" in
        trmv_n) for v in 1024 2048 4096 8192; do point HYBLAS_TRMV_N_ITEMS $v --only trmv --trmv lnn --n 8192,12288,16384; done ;;
        trmv_t) for v in 64 128 256 512; do point HYBLAS_TRMV_T_WARPS $v --only trmv --trmv utn --n 8192,12288,16384; done ;;
        l1) for v in 4096 8192 16384 32768; do point HYBLAS_L1_MAX_CHUNKS $v --only dot,nrm2,asum,iamax --prec s,d --len 2^24,2^26,2^28; done ;;
        gemv_t) for v in 32 64 128; do point HYBLAS_GEMV_T_WARPS $v --only gemv_t --prec d,c,z --n 8192,8448,16384; done ;;
        gemv_n) for v in 256 512 1024 2048; do point HYBLAS_GEMV_N_ITEMS $v --only gemv_n --prec s,d,z --n 8192,8448,16384; done ;;
        stagger) for v in 0 1; do point HYBLAS_GEMV_T_STAGGER $v --only gemv_t --n 4096,8192,8448,12288,16384; done ;;
        *) echo "gpu-scan: unknown scan $s" >&2 ;;
    esac
done
echo "gpu-scan: $(($(wc -l <"$CSV") - 1)) rows in $CSV"
# Per (routine, precision, n): hyblas us for each knob value, the best marked.
python3 - "$CSV" <<'EOF'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
g = defaultdict(dict)
for r in rows:
    if r["hyblas_us"]:
        g[(r["knob"], r["routine"], r["precision"], int(r["n"]))][r["value"]] = (float(r["hyblas_us"]), r["cublas_us"])
for (knob, rt, p, n), vals in sorted(g.items()):
    best = min(vals, key=lambda v: vals[v][0])
    cells = "  ".join(f"{v}:{t:.1f}{'*' if v == best else ''}" for v, (t, _) in vals.items())
    cub = next(iter(vals.values()))[1]
    print(f"{knob:<22} {p}{rt:<9} n={n:<10} {cells}   cuBLAS {cub}")
EOF
