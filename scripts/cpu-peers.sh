#!/usr/bin/env bash
# Fetch today's best CPU BLAS libraries as pip wheels (no root, no conda) into .peers/ (git-ignored),
# so that blasbench compares hyblas with them as well as with Debian's OpenBLAS 0.3.21:
#   scripts/cpu-peers.sh && cargo build --release && ./target/release/blasbench
#
# - scipy-openblas32: OpenBLAS 0.3.34, DYNAMIC_ARCH, every symbol prefixed with scipy_
#   (scipy_dgemm_, scipy_openblas_set_num_threads, ...): .peers/scipy-openblas32/
# - mkl: oneMKL's single dynamic library libmkl_rt.so.3 with its threading layers, plus what its
#   METADATA's Requires-Dist names for run time: intel-openmp (libiomp5.so, the INTEL threading
#   layer, MKL's default) and tbb (libtbb.so.12, the TBB layer). Their own requirements
#   (intel-cmplr-lib-ur, the offload runtime, and tcmlib) are not needed by BLAS on the CPU and are
#   not fetched. All their libraries are linked side by side into .peers/mkl/lib/.
#
# Idempotent: a wheel already in .peers/whl/ is not downloaded again, one already unpacked is not
# unpacked again. blasbench finds .peers/ by itself; this prints the library paths (as comments)
# and an LD_LIBRARY_PATH export line for other programs: eval "$(scripts/cpu-peers.sh)".
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.peers
openblas=scipy-openblas32==0.3.34.481.3
mkl=(mkl==2026.2.1 intel-openmp==2026.2.0 tbb==2023.2.0)

# The wheel of a pinned `name==version`, downloaded when not there yet.
wheel() {
    local name=${1%%==*} ver=${1##*==}
    local pattern="$dir/whl/${name//-/_}-$ver-*.whl"
    # shellcheck disable=SC2086 # the pattern is meant to glob
    set -- $pattern
    if [ ! -e "$1" ]; then
        mkdir -p "$dir/whl"
        echo "cpu-peers: downloading $name $ver" >&2
        python3 -m pip download -q --no-deps --only-binary=:all: "$name==$ver" -d "$dir/whl" >&2
        # shellcheck disable=SC2086
        set -- $pattern
        [ -e "$1" ] || { echo "cpu-peers: no wheel $pattern after pip download" >&2; exit 1; }
    fi
    echo "$1"
}

# scipy-openblas32
so=$dir/scipy-openblas32/scipy_openblas32/lib/libscipy_openblas.so
if [ ! -e "$so" ]; then
    whl=$(wheel "$openblas")
    python3 -m zipfile -e "$whl" "$dir/scipy-openblas32" >&2
fi

# mkl + intel-openmp + tbb, each wheel unpacked into .peers/mkl/<name>-<version>.data/data/lib
for spec in "${mkl[@]}"; do
    name=${spec%%==*} ver=${spec##*==}
    if [ ! -d "$dir/mkl/${name//-/_}-$ver.data" ]; then
        whl=$(wheel "$spec")
        if [ "$name" = mkl ]; then
            unzip -p "$whl" '*.dist-info/METADATA' | grep '^Requires-Dist' | sed 's/^/cpu-peers: mkl /' >&2 || true
        fi
        python3 -m zipfile -e "$whl" "$dir/mkl" >&2
    fi
done
mkdir -p "$dir/mkl/lib"
for spec in "${mkl[@]}"; do
    name=${spec%%==*} ver=${spec##*==}
    for f in "$dir/mkl/${name//-/_}-$ver.data/data/lib/"*.so*; do
        [ -e "$dir/mkl/lib/${f##*/}" ] || ln -s "../${f#"$dir"/mkl/}" "$dir/mkl/lib/${f##*/}"
    done
done
rt=$dir/mkl/lib/libmkl_rt.so.3
[ -e "$rt" ] || { echo "cpu-peers: $rt missing after unpacking" >&2; exit 1; }

echo "# $openblas (OpenBLAS 0.3.34, symbols scipy_*): $PWD/$so"
echo "# ${mkl[*]}: $PWD/$rt (libiomp5.so and libtbb.so.12 beside it)"
echo "export LD_LIBRARY_PATH=$PWD/$dir/mkl/lib:$PWD/${so%/*}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
