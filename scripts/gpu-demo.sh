#!/usr/bin/env bash
# `hyblas demo` on the GPU host, twice: against the host's own libblas.so.3 (what the loader
# gives a program there) and against Debian's OpenBLAS 0.3.21 carried in the stage
# (scripts/gpu-stage.sh). Writes demo-system.txt and demo-openblas.txt under $OUT (or ./build).
#
# Usage (on the GPU host, through the device tool): bash scripts/gpu-demo.sh
set -uo pipefail
OUT=${OUT:-$PWD/build}
C=$PWD/build/cpublas
mkdir -p "$C" "$OUT"
for f in gpu-stage/cpublas/*.xz; do
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
        "$f" "$C/$(basename "$f" .xz)"
done
export HYBLAS_CACHE_DIR=$OUT/cache
echo "== hyblas demo (the host's libblas.so.3)"
LD_LIBRARY_PATH=$C ./gpu-stage/hyblas demo 2>&1 | tee "$OUT/demo-system.txt"
echo "== hyblas demo (HYBLAS_DEMO_PEER=Debian's OpenBLAS 0.3.21, staged)"
HYBLAS_DEMO_PEER=$C/libopenblas.so.0 LD_LIBRARY_PATH=$C ./gpu-stage/hyblas demo 2>&1 | tee "$OUT/demo-openblas.txt"
