#!/usr/bin/env bash
# On the GPU host (after scripts/gpu-stage.sh here): the CPU batched GEMM on that host's 16 cores,
# with and without step 4's "many at once" for groups of several products per thread
# (HYBLAS_BATCH_AT_ONCE=4, the default, against 0), and how many host batches step 2 sent to the
# GPU (the trace). Results and traces under $OUT (else build/dev-batch-cpu).
#   bash scripts/dev-batch-cpu.sh
set -u
. scripts/gpu-env.sh
stage_exec gpu-stage
OUT=${OUT:-build/dev-batch-cpu}
mkdir -p "$OUT"
for a in 4 0; do
    echo "== HYBLAS_BATCH_AT_ONCE=$a"
    HYBLAS_TRACE=$OUT/tr$a.txt HYBLAS_BATCH_AT_ONCE=$a timeout 200 gpu-stage/blasbench --routines dgemm_batch:STRIDED \
        --sizes 64,128,256,512 --threads 4,16 --peers none --peer hyblasB=gpu-stage/libhyblas.so --rounds 3 \
        --out "$OUT/at$a" 2>&1 | grep "^| dgemm"
    echo "batches on the GPU: $(grep -c 'offloaded' "$OUT/tr$a.txt"), declined: $(grep -c 'offload declined' "$OUT/tr$a.txt")"
    gzip -f "$OUT/tr$a.txt"
done
echo "== small, 1 thread"
HYBLAS_TRACE=$OUT/trs.txt timeout 100 gpu-stage/blasbench --routines dgemm_batch:STRIDED,dgemm_batch:LOOP --sizes 4,16,32 \
    --threads 1 --peers none --peer hyblasB=gpu-stage/libhyblas.so --rounds 3 --out "$OUT/small" 2>&1 | grep "^| dgemm"
echo "batches on the GPU: $(grep -c 'offloaded' "$OUT/trs.txt")"
rm -f "$OUT/trs.txt"
