#!/usr/bin/env bash
# Stage what the GPU host needs into gpu-stage/ (git-ignored). That host has CUDA 13, cmake,
# gcc and python3 but no Rust, so everything is built here:
#
#   (the library and the executables travel xz-compressed: stage_exec in gpu-env.sh unpacks them)
#   gpu-stage/libhyblas.so            the library (cuBLAS entry points for LD_PRELOAD; gpubench's
#                                     entry column loads it from beside gpubench)
#   gpu-stage/hyblas, gpubench        the command and the GPU benchmark
#   gpu-stage/offloadbench            host-memory GEMM offload against NVBLAS (bench/offload.rs)
#   gpu-stage/blasbench               the CPU benchmark (bench/blasbench.rs), for the GPU host's CPU
#   gpu-stage/ozakibench              the accurate DGEMM against native (bench/ozaki.rs), on that CPU
#   gpu-stage/ozakigpubench           the accurate DGEMM on device memory against cuBLAS DGEMM and
#                                     cuBLAS FP64 emulation (bench/ozaki_gpu.rs), on the GPU
#   gpu-stage/cpublas/*.xz            Debian's OpenBLAS 0.3.21 (pthreads) and its Fortran
#                                     runtime, xz-compressed: NVBLAS's CPU library on the GPU
#                                     host, which has only the reference BLAS (gpu-run.sh unpacks)
#   gpu-stage/tests/gpu_*.xz          the GPU test executables (tests/gpu_*.rs), built, not run,
#                                     xz-compressed (stage_exec in gpu-env.sh unpacks them)
#   gpu-stage/ctest/cublas/           the cuBLAS C test sources (when ctest/cublas exists)
#   gpu-stage/MANIFEST                commit, date, files and sizes
#
# Binaries are stripped. The stage travels to the GPU host as a carried path (64 MiB limit), so
# this fails when it grows past 60 MiB. Then, on the GPU host: bash scripts/gpu-run.sh
#
# Usage: scripts/gpu-stage.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAGE="$ROOT/gpu-stage"
LIMIT=$((60 * 1024 * 1024))

echo "== cargo build --release"
cargo build --release

# Only the GPU test targets: the CPU tests are not needed on the GPU host.
tests=()
for f in tests/gpu_*.rs; do
    [ -e "$f" ] && tests+=(--test "$(basename "$f" .rs)")
done
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
if [ ${#tests[@]} -gt 0 ]; then
    echo "== cargo test --release --no-run ${tests[*]}"
    cargo test --release --no-run --message-format=json "${tests[@]}" >"$json"
fi

rm -rf "$STAGE"
mkdir -p "$STAGE/tests"
cp target/release/libhyblas.so target/release/hyblas target/release/gpubench target/release/offloadbench target/release/blasbench target/release/ozakibench target/release/ozakigpubench "$STAGE/"
strip --strip-unneeded "$STAGE/libhyblas.so"
strip --strip-all "$STAGE/hyblas" "$STAGE/gpubench" "$STAGE/offloadbench" "$STAGE/blasbench" "$STAGE/ozakibench" "$STAGE/ozakigpubench"

# NVBLAS's CPU library for offloadbench: Debian's OpenBLAS and the libraries it needs beyond
# libc (36 MB, 4 MB compressed).
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
if [ -e "$OPENBLAS" ]; then
    mkdir -p "$STAGE/cpublas"
    xz -9 -c "$(readlink -f "$OPENBLAS")" >"$STAGE/cpublas/libopenblas.so.0.xz"
    for dep in libgfortran.so.5 libquadmath.so.0; do
        path=$(ldd "$OPENBLAS" | awk -v d="$dep" '$1 == d {print $3}')
        [ -n "$path" ] && xz -9 -c "$(readlink -f "$path")" >"$STAGE/cpublas/$dep.xz"
    done
    echo "staged Debian's OpenBLAS for NVBLAS: $(ls "$STAGE/cpublas" | tr '\n' ' ')"
else
    echo "no $OPENBLAS here: offloadbench's NVBLAS column will use the GPU host's own CPU BLAS"
fi

# The executables of tests/gpu_*.rs, named after their target (without cargo's hash).
python3 - "$json" "$STAGE/tests" <<'EOF'
import json, os, re, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for line in open(src):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    t = m["target"]
    if "test" in t["kind"] and re.search(r"/tests/gpu_[^/]*\.rs$", t["src_path"]):
        shutil.copy2(m["executable"], os.path.join(dst, t["name"]))
        print("staged test", t["name"])
EOF
# Test executables travel xz-compressed (the stage must stay under 60 MiB; 16 of them are 45 MB
# stripped); stage_exec (scripts/gpu-env.sh) unpacks them on the GPU host.
for t in "$STAGE"/tests/*; do
    [ -e "$t" ] && strip --strip-all "$t" && xz -T0 -6 "$t"
done
# So do the other executables and the library (60 MiB raw with the tracked tree passed the
# carry's 64 MiB): stage_exec unpacks every gpu-stage/*.xz as well.
for t in libhyblas.so hyblas gpubench offloadbench blasbench ozakibench ozakigpubench; do
    xz -T0 -6 "$STAGE/$t"
done

if [ -d ctest/cublas ]; then
    mkdir -p "$STAGE/ctest"
    cp -r ctest/cublas "$STAGE/ctest/"
    [ -e ctest/common.h ] && cp ctest/common.h "$STAGE/ctest/"
fi

{
    echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "staged $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    (cd "$STAGE" && find . -type f ! -name MANIFEST -printf '%9s %P\n' | sort -k2)
} >"$STAGE/MANIFEST"

bytes=$(du -sb "$STAGE" | cut -f1)
echo "== gpu-stage: $(find "$STAGE" -type f | wc -l) files, $(awk -v b="$bytes" 'BEGIN{printf "%.1f MiB", b/1048576}')"
cat "$STAGE/MANIFEST"
if [ "$bytes" -gt "$LIMIT" ]; then
    echo "gpu-stage is larger than 60 MiB: it will not travel to the GPU host" >&2
    exit 1
fi
