#!/usr/bin/env bash
# Runs ON THE GPU HOST with gpu-stage/ (scripts/gpu-stage.sh): per-kernel durations of hyblas's
# Level 1/2 kernels at chosen points, from Nsight Compute (`ncu --clock-control none`, which
# leaves the clocks alone), beside the benchmark's own event timing of the whole call. The
# difference between the call and the sum of its kernels is launch gaps and host cost.
#
#   bash scripts/gpu-prof.sh [POINT ...]
#
# POINT: routine:precision:size[:trmv-variant], e.g. trmv:s:8192:lnn, gemv_n:d:5120, dot:s:2^23
# (default: the points the issue-3 targets miss). Output: $OUT/prof.csv (else build/gpu-prof/),
# one line per kernel launch: point, kernel, grid, block, registers, duration in us.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
DEST="${OUT:-$ROOT/build/gpu-prof}"
mkdir -p "$DEST"
. "$ROOT/scripts/gpu-env.sh"
export HYBLAS_CACHE_DIR="${HYBLAS_CACHE_DIR:-$ROOT/build/hyblas-cache}"
stage_exec "$STAGE"
NCU="$(find_ncu)"
[ -n "$NCU" ] || { echo "gpu-prof: no ncu"; exit 1; }

points=("$@")
[ ${#points[@]} -eq 0 ] && points=(trmv:s:8192:lnn trmv:s:8192:utn trmv:d:8192:lnn trmv:z:10240:lnn trmv:z:11264:lnn
    gemv_n:s:8448 gemv_n:s:8192 gemv_n:d:5120 gemv_n:d:5376 gemv_n:z:2048 gemv_n:z:2304)
CSV="$DEST/prof.csv"
echo "point,kernel,grid,block,regs,us" >"$CSV"
SUM="$DEST/summary.txt"
: >"$SUM"
# Compile (and cache) the kernels once, outside the profiler.
"$STAGE/gpubench" --quick --no-entry --only trmv,gemv_n --n 1024 --out "$DEST/warm" >/dev/null 2>&1
for pt in "${points[@]}"; do
    IFS=: read -r routine prec size variant <<<"$pt"
    args=(--no-entry --min-reps 5 --max-reps 5 --only "$routine" --prec "$prec" --out "$DEST/b-$routine-$prec-$size")
    case "$routine" in
        trmv | gemv* | ger*) args+=(--n "$size") ;;
        *) args+=(--len "$size") ;;
    esac
    [ -n "${variant:-}" ] && args+=(--trmv "$variant")
    # The benchmark's own timing (events, median), then the kernels one by one under ncu.
    "$STAGE/gpubench" "${args[@]}" >"$DEST/bench-$routine-$prec-$size.log" 2>&1
    bench=$(ls "$DEST/b-$routine-$prec-$size"/*.csv 2>/dev/null | head -1)
    "$NCU" --clock-control none --csv --kernel-name "regex:^[sdcz](trmv|gemv|ger|axpy|dot|nrm2|asum|iamax|l1)" \
        --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
        "$STAGE/gpubench" "${args[@]}" --out "$DEST/ncu-tmp" >"$DEST/ncu-$routine-$prec-$size.csv" 2>/dev/null
    python3 - "$pt" "$DEST/ncu-$routine-$prec-$size.csv" "$bench" "$CSV" "$SUM" <<'EOF'
import csv, sys, io, collections
pt, ncu, bench, out, summ = sys.argv[1:6]
text = open(ncu).read()
start = text.find('"ID"')
rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
k = collections.defaultdict(dict)
for r in rows:
    k[(r["ID"], r["Kernel Name"])][r["Metric Name"]] = r["Metric Value"].replace(",", "")
lines, per = [], collections.defaultdict(list)
for (i, name), m in sorted(k.items(), key=lambda x: int(x[0][0])):
    us = float(m.get("gpu__time_duration.sum", "nan")) / 1000.0
    lines.append(f'{pt},{name},{m.get("launch__grid_size","")},{m.get("launch__block_size","")},{m.get("launch__registers_per_thread","")},{us:.2f}')
    per[name].append(us)
open(out, "a").write("".join(l + "\n" for l in lines))
call = ""
if bench:
    b = list(csv.DictReader(open(bench)))
    if b:
        call = f'call {float(b[0]["hyblas_us"]):.1f} us ({b[0]["hyblas_gbs"]} GB/s), cuBLAS {b[0]["cublas_us"]}'
med = lambda v: sorted(v)[len(v) // 2]
parts = "  ".join(f"{n} {med(v):.1f}" for n, v in per.items())
s = f"{pt:<18} {call}\n    kernels (median us): {parts}  sum {sum(med(v) for v in per.values()):.1f}\n"
print(s, end="")
open(summ, "a").write(s)
EOF
done
rm -rf "$DEST/ncu-tmp" "$DEST/warm"
