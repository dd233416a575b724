#!/usr/bin/env bash
# On the GPU host (after scripts/cpu-host-stage.sh here, carry cpu-stage): DGEMM/ZGEMM n = 4096
# on all cores against MKL under several block settings, one blasbench run each (ROUNDS rounds,
# default 5; the ratio to MKL within each run is what compares; the same setting moved by 10%
# between runs in session 59, so compare over two runs at least).
# Usage: [ROUNDS=n] bash scripts/cpu-host-gemm-settings.sh ['VAR=v ...' ...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results}
find cpu-stage -name '*.xz' -exec xz -d -f {} \;
chmod +x cpu-stage/blasbench
cores=$(nproc)
settings=("$@")
[ ${#settings[@]} -gt 0 ] || settings=("" "HYBLAS_GEMM_PACK_B_ROWS=0" "HYBLAS_GEMM_TASKS=1" "HYBLAS_GEMM_TASKS=1 HYBLAS_GEMM_PACK_B_ROWS=0")
for s in "${settings[@]}"; do
    echo "== settings: ${s:-(defaults)}"
    env $s HYBLAS_DEVICE=cpu ./cpu-stage/blasbench --lib cpu-stage/libhyblas.so --peers-dir cpu-stage/peers --peers mkl \
        --mkl-threading GNU --out "$out/settings" --tag settings --routines dgemm,zgemm:NN --sizes 4096 \
        --threads "$cores" --rounds "${ROUNDS:-5}" --twin mkl 2>&1 | grep -E "^\| [dz]"
done
