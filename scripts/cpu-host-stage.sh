#!/usr/bin/env bash
# Stage a CPU-only comparison for the GPU host's CPU (16 cores there) into cpu-stage/
# (git-ignored): blasbench, libhyblas.so and the two peers of scripts/cpu-peers.sh, xz-compressed
# (OpenBLAS 0.3.34 whole; of MKL what its BLAS needs on an AVX-512 Xeon with the GNU OpenMP layer:
# libmkl_rt, libmkl_intel_lp64, libmkl_core, libmkl_gnu_thread, libmkl_avx512). That host has no Rust and its numpy
# OpenBLAS is ILP64 with suffixed symbols, so the peers travel with the stage (carried path, 64 MiB).
#
#   scripts/cpu-peers.sh && scripts/cpu-host-stage.sh
#   then on the GPU host (device tool, carry cpu-stage): bash scripts/cpu-host-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ -e .peers/mkl/lib/libmkl_rt.so.3 ] || { echo "cpu-host-stage: run scripts/cpu-peers.sh first" >&2; exit 1; }
cargo build --release --bin blasbench
cargo build --release --lib
rm -rf cpu-stage
mkdir -p cpu-stage/peers/mkl/lib cpu-stage/peers/scipy-openblas32/scipy_openblas32/lib
cp target/release/blasbench target/release/libhyblas.so cpu-stage/
strip cpu-stage/blasbench cpu-stage/libhyblas.so
pack() { xz -T2 -6 -c "$1" > "$2.xz"; }
pack .peers/scipy-openblas32/scipy_openblas32/lib/libscipy_openblas.so cpu-stage/peers/scipy-openblas32/scipy_openblas32/lib/libscipy_openblas.so
for f in libmkl_rt.so.3 libmkl_intel_lp64.so.3 libmkl_core.so.3 libmkl_gnu_thread.so.3 libmkl_avx512.so.3; do
    pack "$(readlink -f .peers/mkl/lib/$f)" cpu-stage/peers/mkl/lib/$f
done
git rev-parse HEAD > cpu-stage/COMMIT
du -ab cpu-stage | sort -n | tail -12
total=$(du -sb cpu-stage | cut -f1)
[ "$total" -lt $((62 * 1024 * 1024)) ] || { echo "cpu-host-stage: $total bytes, over the carry limit" >&2; exit 1; }
echo "cpu-host-stage: $total bytes in cpu-stage/"
