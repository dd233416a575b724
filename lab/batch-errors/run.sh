#!/usr/bin/env bash
# How oneMKL 2026.2 and OpenBLAS 0.3.34 report bad arguments of cblas_dgemm_batch and
# cblas_dgemm_batch_strided (issue 48: hyblas reports them as MKL does). Needs the peer wheels:
#   scripts/cpu-peers.sh && bash lab/batch-errors/run.sh
# Each case breaks one argument (see the switch in batch_errors.c), prints the library's message
# and C's first element of both groups (7 = untouched). ROW=1 runs the row-major layout.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=../..
MKL=$ROOT/.peers/mkl/lib
OB=$ROOT/.peers/scipy-openblas32/scipy_openblas32/lib
out=$(mktemp -d)
gcc -O1 batch_errors.c -o "$out/mkl" "$MKL/libmkl_rt.so.3" -Wl,-rpath,"$MKL"
# OpenBLAS's symbols carry the scipy_ prefix and 32-bit integers.
sed -e 's/long long/int/g' -e 's/cblas_dgemm_batch/scipy_cblas_dgemm_batch/g' -e 's/void dgemm_batch_/void scipy_dgemm_batch_/' \
    batch_errors.c >"$out/ob.c"
gcc -O1 "$out/ob.c" -o "$out/ob" "$OB/libscipy_openblas.so" -Wl,-rpath,"$OB"
for lib in mkl ob; do
    echo "== $lib"
    for c in $(seq 1 20) 101 102 103 104 105 106; do
        MKL_INTERFACE_LAYER=ILP64 "$out/$lib" $c 2>&1 | tr '\n' ' ' || true
        echo
    done
done
rm -rf "$out"
