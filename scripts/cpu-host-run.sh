#!/usr/bin/env bash
# On the GPU host: unpack cpu-stage/ (scripts/cpu-host-stage.sh) and run blasbench there against
# OpenBLAS 0.3.34 and MKL on all cores. Results (CSV, markdown, SVG, log) go to $OUT (or
# bench/results). Arguments are passed to blasbench (default: the issue-44 16-core cases).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
export HYBLAS_DEVICE=${HYBLAS_DEVICE:-cpu}
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
chmod +x cpu-stage/blasbench
lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|L2|L3|Flags" | sed 's/Flags:.*avx512f.*/Flags: ... avx512f .../' > "$out/cpu-host-lscpu.txt" || true
cores=$(nproc)
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--routines dgemm,zgemm,dsyrk,dtrsm --sizes 4096 --threads "$cores" --rounds 5 --twin mkl)
./cpu-stage/blasbench --lib cpu-stage/libhyblas.so --peers-dir cpu-stage/peers --peers openblas-scipy,mkl \
    --mkl-threading GNU --out "$out" --tag h200-host "${args[@]}" 2>&1 | tee "$out/cpu-host-blasbench.log"
