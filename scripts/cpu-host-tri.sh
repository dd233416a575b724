#!/usr/bin/env bash
# On the GPU host (after scripts/cpu-host-stage.sh here, carry cpu-stage): the issue-44 16-core
# cases, then TRSM/TRMM (both sides) once as built and once with the right-hand sides split at
# the top (HYBLAS_TRI_SPLIT past n: the engine before session 52), each run against the peers.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
cores=$(nproc)
OUT=$out bash scripts/cpu-host-run.sh --routines dgemm,zgemm,dsyrk,dtrsm,sgemm,cgemm --sizes 4096 --threads "$cores" --rounds 5 --twin mkl
tri=(--routines dtrsm:LLNN,dtrsm:RUNN,dtrmm:LLNN,dtrmm:RUNN --sizes 4096 --threads "$cores" --rounds 5)
for split in 512 100000000; do
    mkdir -p "$out/split-$split"
    HYBLAS_TRI_SPLIT=$split HYBLAS_DEVICE=cpu ./cpu-stage/blasbench --lib cpu-stage/libhyblas.so --peers-dir cpu-stage/peers \
        --peers mkl --mkl-threading GNU --out "$out/split-$split" --tag "h200-host-split-$split" "${tri[@]}" 2>&1 |
        tee "$out/split-$split/blasbench.log" | grep -E "^\| d"
done
