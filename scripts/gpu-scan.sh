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
#   nrm2u     HYBLAS_KERNEL_DEFINES NRM2_U(_SINGLE) 4 / 8    nrm2 (all) at L1_MID, two rounds
#   cbounds   CNRM2_BOUNDS          launch bounds (256,4) / none  nrm2 (c) at L1_MID, two rounds
#   cold      gpubench --warm / cold 0 1                     dot nrm2 asum iamax (all) at L1_MID
#             (whether a dip is the L2's capacity: cold reads DRAM at every size)
#   pdl       HYBLAS_PDL            0 1                      gemv, trmv, dot, nrm2 (s, d, z) n 2048
#                                                            5120 8192 8448 10240, 2^20 2^23 2^26
#   pad       gpubench --pad        0 4 8 16 32 64 128        gemv_n, gemv_t (s, d, z) at PAD_N
#             (lda = n + pad: whether a dip is the column stride's)
#   shapes    HYBLAS_SHAPE: every candidate block shape of gemv_n, trmv_n and trmv_t (value i
#             forces the i-th of each list at once; the kernels are independent)
#                                                            gemv_n (s, d, z), trmv lnn/utn (s, z)
#                                                            at SHAPE_N (default the sizes the
#                                                            issue-3 targets miss and neighbours)
# Output: $OUT/scan.csv (else build/gpu-scan/scan.csv): knob,value, then gpubench's columns.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
DEST="${OUT:-$ROOT/build/gpu-scan}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$DEST"
. "$ROOT/scripts/gpu-env.sh"
stage_exec "$STAGE"
CSV="$DEST/scan.csv"
: >"$CSV"

# point KNOB VALUE GPUBENCH-ARGS...: one gpubench run with KNOB=VALUE, rows appended to the CSV.
point() {
    local knob="$1" value="$2" label="${LABEL:-$2}"
    shift 2
    local dir="$WORK/$knob-$RANDOM"
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
    tail -n +2 "$f" | sed "s/^/$knob,$label,/" >>"$CSV"
    printf '%-22s %6s  %3ss  %s\n' "$knob" "$label" "$((SECONDS - t0))" "$*"
}

# Level 1 lengths across the L2's capacity (8-512 MB of double).
L1_MID="${L1_MID:-1048576,1572864,2097152,3145728,4194304,6291456,8388608,12582912,16777216,25165824,33554432,67108864}"
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
        nrm2u)
            for r in 1 2; do
                LABEL=4 point HYBLAS_KERNEL_DEFINES "-DNRM2_U=4 -DNRM2_U_SINGLE=4" --only nrm2 --len "$L1_MID"
                LABEL=8 point HYBLAS_KERNEL_DEFINES "-DNRM2_U=8 -DNRM2_U_SINGLE=8" --only nrm2 --len "$L1_MID"
            done ;;
        cbounds)
            for r in 1 2; do
                LABEL=bounds point HYBLAS_KERNEL_DEFINES "" --only nrm2 --prec c --len "$L1_MID"
                LABEL=none point HYBLAS_KERNEL_DEFINES "-DCNRM2_BOUNDS=" --only nrm2 --prec c --len "$L1_MID"
            done ;;
        cold)
            point COLD 0 --only dot,nrm2,asum,iamax --len "$L1_MID" --warm
            point COLD 1 --only dot,nrm2,asum,iamax --len "$L1_MID" ;;
        pad) for v in 0 4 8 16 32 64 128; do point PAD $v --only gemv_n,gemv_t --prec s,d,z --n "${PAD_N:-2048,2560,3328,4352,5120,5376,6656,8448}" --pad $v; done ;;
        pdl) for v in 0 1; do point HYBLAS_PDL $v --only gemv,trmv,dot,nrm2 --prec s,d,z --n 2048,5120,8192,8448,10240 --len 2^20,2^23,2^26; done ;;
        shapes)
            # KernelSpec lists of src/gpu/gemv.rs (GEMV_N) and src/gpu/trmv.rs (TRMV_N, TRMV_T),
            # at most 1024 threads.
            gn=() tn=() tt=()
            for tx in 32 64 128 256 512; do for ty in 1 2 4 8 16; do [ $((tx * ty)) -le 1024 ] && gn+=("${tx}x$ty"); done; done
            for tx in 32 64 128 256; do for ty in 1 2 4 8; do tn+=("${tx}x$ty"); done; done
            for ty in 1 2 4 8 16 32; do tt+=("32x$ty"); done
            LABEL=default point HYBLAS_SHAPE "" --only gemv_n,trmv --trmv lnn,utn --prec s,d,z \
                --n "${SHAPE_N:-2048,2304,5120,5376,8192,8448,10240,11264}"
            for i in "${!gn[@]}"; do
                v=""
                for p in s d c z; do
                    v+="${p}gemv_n:${gn[$i]},"
                    [ "$i" -lt ${#tn[@]} ] && v+="${p}trmv_n:${tn[$i]},"
                    [ "$i" -lt ${#tt[@]} ] && v+="${p}trmv_t:${tt[$i]},"
                done
                lab="gemv_n=${gn[$i]}"
                [ "$i" -lt ${#tn[@]} ] && lab+=";trmv_n=${tn[$i]}"
                [ "$i" -lt ${#tt[@]} ] && lab+=";trmv_t=${tt[$i]}"
                LABEL="$lab" point HYBLAS_SHAPE "$v" --only gemv_n,trmv --trmv lnn,utn --prec s,d,z \
                    --n "${SHAPE_N:-2048,2304,5120,5376,8192,8448,10240,11264}"
            done ;;
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
# HYBLAS_SHAPE rows: the shape of the routine's own kernel (label parts kernel=TXxTY).
own = {"gemv_n": "gemv_n", "trmv_lnn": "trmv_n", "trmv_utn": "trmv_t"}
for r in rows:
    if r["hyblas_us"]:
        v = r["value"]
        if r["knob"] == "HYBLAS_SHAPE" and v != "default":
            parts = dict(p.split("=") for p in v.split(";"))
            if own.get(r["routine"]) not in parts:
                continue
            v = parts[own[r["routine"]]]
        g[(r["knob"], r["routine"], r["precision"], int(r["n"]))][v] = (float(r["hyblas_us"]), r["cublas_us"])
for (knob, rt, p, n), vals in sorted(g.items()):
    if knob == "HYBLAS_SHAPE":
        top = sorted(vals, key=lambda v: vals[v][0])
        d = vals.get("default", (float("nan"), ""))[0]
        cells = "  ".join(f"{v}:{vals[v][0]:.1f}" for v in top[:6])
        print(f"shape {p}{rt:<9} n={n:<6} default {d:.1f}  best {cells}   cuBLAS {vals[top[0]][1]}")
        continue
    best = min(vals, key=lambda v: vals[v][0])
    cells = "  ".join(f"{v}:{t:.1f}{'*' if v == best else ''}" for v, (t, _) in vals.items())
    cub = next(iter(vals.values()))[1]
    print(f"{knob:<22} {p}{rt:<9} n={n:<10} {cells}   cuBLAS {cub}")
EOF
