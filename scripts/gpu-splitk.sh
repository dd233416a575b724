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
#   full     gpubench --only gemm_smallout --gemm-twin (the whole grid, about 2-3 minutes), with
#            the GPU's clocks and power logged beside it every 250 ms (smi.csv; a summary line
#            says how much of the sweep ran under the power cap)
#   confirm  after full: the points where the sweep found entry/cuBLAS over 1.03 or
#            deterministic/atomic over 1.05 (paired), timed again with 13x the work per side
#            (--target-ms 200) and the second cuBLAS handle; prints both passes side by side
#   probe    gpubench --gemm-points "$POINTS" --gemm-twin (a few points, with a second cuBLAS
#            handle as the noise floor of the entry column); POINTS like s:nn:64:64:8192,...
#   chunks   DGEMM 16x16 k=2^20 (N,N) at several HYBLAS_SPLITK_MMA_CHUNKS values
#
# The split-k units compile on first use (a few seconds each; gpubench and the tests wait for
# them, HYBLAS_COMPILE=wait); the disk cache keeps them while the machine stays warm.
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
        full)
            # An H200 at 700 W drops its SM clock (SW power cap) during the heavy stretches of the
            # grid (large k, 64x64 and 128x128); the log shows where (session 14).
            smi=""
            if command -v nvidia-smi >/dev/null; then
                nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
                    --format=csv,noheader -lms 250 >"$RES/smi.csv" 2>/dev/null &
                smi=$!
            fi
            step full "$S/gpubench" --only gemm_smallout --gemm-twin --out "$RES"
            if [ -n "$smi" ]; then
                kill "$smi" 2>/dev/null
                python3 - "$RES/smi.csv" <<'PY'
import sys
rows = []  # (SM MHz, W, event reasons) per sample; fields a GPU does not report ([N/A]) are skipped
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((int(f[1].split()[0]), float(f[3].split()[0]), int(f[5], 16)))
    except (IndexError, ValueError):
        pass
busy = [r for r in rows if r[1] > 150]  # samples with the GPU at work
if busy:
    capped = sum(1 for r in busy if r[2] & 0x4)  # SW power cap
    clk = sorted(r[0] for r in busy)
    print(f"   GPU while busy ({len(busy)} samples of 250 ms): SW power cap in {100 * capped // len(busy)}%, "
          f"SM clock min {clk[0]} / median {clk[len(clk) // 2]} MHz, power max {max(r[1] for r in busy):.0f} W")
PY
            fi
            ;;
        confirm)
            csv=$(ls "$RES"/*-gemm-smallout.csv 2>/dev/null | head -1)
            [ -n "$csv" ] || { echo "confirm: no sweep CSV in $RES (run full first)"; fail=1; continue; }
            pts=$(python3 - "$csv" <<'PY'
import csv, sys
out = []
for r in csv.DictReader(open(sys.argv[1])):
    f = lambda c: float(r[c]) if r.get(c) else 0.0
    if f("entry_over_cublas_paired") > 1.03 or f("hyblas_over_atomic_paired") > 1.05:
        out.append(f"{r['precision']}:{(r['transa'] + r['transb']).lower()}:{r['m']}:{r['n']}:{r['k']}")
print(",".join(out))
PY
            )
            if [ -z "$pts" ]; then
                echo "== confirm: no point over the limits in $csv"
                continue
            fi
            step confirm "$S/gpubench" --only gemm_smallout --gemm-points "$pts" --gemm-twin --target-ms 200 \
                --max-reps 2000 --out "$RES/confirm"
            python3 - "$csv" "$RES"/confirm/*-gemm-smallout.csv <<'PY'
import csv, sys
key = lambda r: (r["precision"], r["transa"] + r["transb"], int(r["m"]), int(r["n"]), int(r["k"]))
first = {key(r): r for r in csv.DictReader(open(sys.argv[1]))}
cols = ["hyblas_over_atomic_paired", "entry_over_cublas_paired", "cublas2_over_cublas_paired"]
print(f"   {'point':<24} {'det/atomic':>17} {'entry/cuBLAS':>17} {'twin/cuBLAS':>17}   (sweep -> again)")
for r in csv.DictReader(open(sys.argv[2])):
    a = first[key(r)]
    name = f"{r['precision']} {r['transa']}{r['transb']} {r['m']}x{r['n']} {r['k']}"
    print(f"   {name:<24} " + " ".join(f"{a[c]:>7} -> {r[c]:>7}" for c in cols))
PY
            ;;
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
