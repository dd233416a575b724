#!/usr/bin/env bash
# Runs ON THE GPU HOST, from the repository root: host-memory offload (offloadbench) of two
# builds side by side in one run, for issue 45's old-against-new table. gpu-stage/ from
# scripts/gpu-stage.sh holds the new build; gpu-stage/old/ the old build's offloadbench and
# hyblas (built from the old commit with the same scripts). Each build runs with a cache
# directory of its own ($OUT/cache-<build>), so "out of the box" means no recipe.
#
#   OUT=dir bash scripts/offload-compare.sh [--tuned] [--order new,old] [--splits] [--splits-only]
#
#   --tuned        each build first runs its own `hyblas tune offload` (log: <build>-tune.log)
#   --splits       then the new build's split sweep (d/s/z GEMM, shares 0..1 by 0.2, n = 1024..8192)
#   --splits-only  the split sweep without the builds' auto/cpu/gpu/NVBLAS tables (--tuned still
#                  tunes the new build first)
# SPLIT_RUNS: how many times the split sweep runs back to back (default 1; run k > 1 writes
# split-k.*): two runs measure the noise the model's split prices are held against
# (scripts/split-noise.py).
# REPS, BUDGET: offloadbench --reps, --budget-s (default 8, 0.2). Writes $OUT/<build>.csv, <build>.log (the tables), and everything in $OUT/all.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/offload-compare}
tuned=0; splits=0; order="new,old"
while [ $# -gt 0 ]; do
    case "$1" in
        --tuned) tuned=1 ;;
        --splits) splits=1 ;;
        --splits-only) splits=2 ;;
        --order) order=$2; shift ;;
        *) echo "offload-compare: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT"
C=$PWD/build/cpublas
mkdir -p "$C"
for f in gpu-stage/cpublas/*.xz; do
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "$C/$(basename "$f" .xz)"
done
for f in gpu-stage/old/*.xz; do
    [ -e "$f" ] && python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "${f%.xz}" && chmod +x "${f%.xz}"
done
common=(--routines dgemm,sgemm,zgemm,dsyrk,dtrsm --n 1024,2048,4096,8192,16384 --modes auto,cpu,gpu,nvblas
    --reps "${REPS:-8}" --budget-s "${BUDGET:-0.2}" --max-call-s 1.5 --cpu-blas "$C/libopenblas.so.0")
[ $splits = 2 ] && order=new
for build in ${order//,/ }; do
    dir=gpu-stage; [ "$build" = old ] && dir=gpu-stage/old
    export HYBLAS_CACHE_DIR="$OUT/cache-$build"
    rm -rf "$HYBLAS_CACHE_DIR"
    if [ $tuned = 1 ]; then
        s=$SECONDS
        LD_LIBRARY_PATH=$C timeout 300 "$dir/hyblas" tune offload > "$OUT/$build-tune.log" 2>&1
        echo "$build: tune offload rc=$? in $((SECONDS - s)) s"
    fi
    [ $splits = 2 ] && continue
    s=$SECONDS
    LD_LIBRARY_PATH=$C timeout 280 "$dir/offloadbench" "${common[@]}" --out "$OUT/$build" > "$OUT/$build.log" 2>&1
    echo "$build: offloadbench rc=$? in $((SECONDS - s)) s"
    cp "$OUT/$build"/*-offload.csv "$OUT/$build.csv" 2>/dev/null
done
if [ $splits != 0 ]; then
    export HYBLAS_CACHE_DIR="$OUT/cache-new"
    for k in $(seq 1 "${SPLIT_RUNS:-1}"); do
        name=split; [ "$k" -gt 1 ] && name=split-$k
        s=$SECONDS
        LD_LIBRARY_PATH=$C timeout 200 gpu-stage/offloadbench --routines dgemm,sgemm,zgemm --n 1024,2048,4096,8192 \
            --modes auto,cpu,gpu,split --shares 0,0.2,0.4,0.6,0.8,1 --reps 8 --budget-s 0.2 --max-call-s 1.5 \
            --out "$OUT/$name" > "$OUT/$name.log" 2>&1
        echo "split sweep $k: rc=$? in $((SECONDS - s)) s"
        cp "$OUT/$name"/*-offload.csv "$OUT/$name.csv" 2>/dev/null
    done
fi
tar czf "$OUT/all.tar.gz" -C "$OUT" --exclude='cache-*' --exclude=all.tar.gz .
